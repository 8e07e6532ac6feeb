package boost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/table"
)

// TestScaleNodes measures boost over real nodes (sim.Run: both parties'
// nodes in this process over libp2p and Raft, the default policy with
// floors.min_parties 2, a dealt 2048-bit threshold Paillier key and the
// lattice key) on BOOST_SCALE_NODES join rows of writeScale's two-party
// one-to-one join (written to the test's temp dir from a fixed seed):
// BOOST_TREES trees (1) of depth BOOST_DEPTH (3), 32 bins,
// params.backend BOOST_BACKEND (auto), each node's kept Ws capped at
// BOOST_CACHE bytes (Kind.LatticeCacheBytes; 0, the default, unless
// set). It logs result.json's timing and bytes, the process's CPU over
// the job and its peak resident set (VmHWM of /proc/self/status: both
// nodes, since they share the process). docs/boost.md, "Scale".
func TestScaleNodes(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("BOOST_SCALE_NODES"))
	if n < 1 {
		t.Skip("BOOST_SCALE_NODES=ROWS to measure")
	}
	trees, depth, backend := 1, 3, boost.BackendAuto
	if v, err := strconv.Atoi(os.Getenv("BOOST_TREES")); err == nil {
		trees = v
	}
	if v, err := strconv.Atoi(os.Getenv("BOOST_DEPTH")); err == nil {
		depth = v
	}
	if v := os.Getenv("BOOST_BACKEND"); v != "" {
		backend = v
	}
	var cache int64
	if v, err := strconv.ParseInt(os.Getenv("BOOST_CACHE"), 10, 64); err == nil {
		cache = v
	}
	dir := t.TempDir()
	files := map[string]*os.File{}
	for _, side := range []string{"guest", "host"} {
		f, err := os.Create(filepath.Join(dir, side+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files[side] = f
	}
	if err := writeScale(files["guest"], files["host"], n); err != nil {
		t.Fatal(err)
	}
	spec := fmt.Sprintf(`kind: boost
parties:
  - {name: guest, tables: [{name: guest, path: guest.csv}]}
  - {name: host, tables: [{name: host, path: host.csv}]}
schema:
  guest: %s
  host: %s
join: ["guest.id = host.id"]
params: {trees: %d, max_depth: %d, bins: 32, backend: %s, timeout_ms: 14400000}
`, flowMap(scaleSchemas()["guest"]), flowMap(scaleSchemas()["host"]), trees, depth, backend)
	path := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	pol := policy.Default()
	pol.Floors.MinParties = 2
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Hour)
	defer cancel()
	out := filepath.Join(dir, "out")
	load0, cpu0, t0 := testkit.LoadAverage(), cpuTime(t), time.Now()
	levels := &cpuMarks{t: t, from: "level round 0 started", to: "finished"}
	res, err := sim.Run(ctx, path, sim.RunOptions{Kinds: job.Registry{"boost": boost.Kind{LatticeCacheBytes: cache}}, Out: out, Progress: levels,
		Setup: simtest.ThresholdKeys(2048), Policy: pol,
		Timing: node.Timing{HeartbeatMS: 3000, ElectionMS: 3000, SendMS: 600000, StepMS: 14400000}})
	wall, cpu := time.Since(t0), cpuTime(t)-cpu0
	if err != nil {
		t.Fatal(err)
	}
	timing, _ := json.Marshal(res["timing"])
	sent, _ := json.Marshal(res["bytes"])
	level := 0.0
	for phase, s := range res["timing"].(map[string]any) {
		if phase != "load" && phase != "psi" && phase != "admit" {
			level += s.(float64)
		}
	}
	audit, err := os.ReadFile(filepath.Join(out, "audit", "guest.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	chosen := boost.BackendPaillier // the guest's ledger names the lattice path's down messages
	if strings.Contains(string(audit), boost.TypeLatticeDown) {
		chosen = boost.BackendLattice
	}
	t.Logf("%d join rows, 2 parties over real nodes, %d trees of depth %d, 32 bins, backend %s (ran: %s), cache cap %d: level steps %.1f s per tree, CPU %v per tree from the first level step to the end (whole process); run %v (key dealing included), CPU %v; peak RSS %s; timing %s; bytes %s; load %s -> %s",
		n, trees, depth, backend, chosen, cache, level/float64(trees), (levels.cpu() / time.Duration(trees)).Round(100*time.Millisecond), wall.Round(time.Second), cpu.Round(time.Second), vmHWM(t), timing, sent, load0, testkit.LoadAverage())
}

// flowMap is a schema as a YAML flow map.
func flowMap(cols map[string]table.Kind) string {
	var parts []string
	for c, k := range cols {
		parts = append(parts, c+": "+string(k))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// vmHWM is the process's peak resident set, as /proc/self/status says.
func vmHWM(t *testing.T) string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// cpuMarks passes sim's progress lines to stderr and notes the process's
// CPU time at the first line holding from and the first holding to.
type cpuMarks struct {
	mu       sync.Mutex
	t        *testing.T
	from, to string
	at       [2]time.Duration
}

func (c *cpuMarks) Write(b []byte) (int, error) {
	line := string(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at[0] == 0 && strings.Contains(line, c.from) {
		c.at[0] = cpuTime(c.t)
	}
	if c.at[0] != 0 && c.at[1] == 0 && strings.Contains(line, c.to) {
		c.at[1] = cpuTime(c.t)
	}
	return os.Stderr.Write(b)
}

// cpu is the CPU time between the marks.
func (c *cpuMarks) cpu() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at[1] - c.at[0]
}
