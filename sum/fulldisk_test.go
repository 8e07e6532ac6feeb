package sum_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sum"
)

// A party whose disk is full cannot write its Raft log, so it never learns
// of a new job's steps, though it still answers pings. It tells the leader
// why, and the job ends without it as soon as a step needs it, naming the
// cause without a path, instead of waiting out the node's step timeout
// (two minutes here) at admission and again at every step. Four real
// nodes, the full one's data dir on a 16 MB tmpfs (needs root to mount).
func TestFullDiskEndsTheJobWithoutThatParty(t *testing.T) {
	// Not parallel: beside the package's other tests (go test -count=3,
	// 29 Nov 2026) the full party's admission was seen to answer first, with
	// a policy refusal (it cannot write policy-state.json), and the job
	// failed instead of ending without it.
	const full = "org04"
	dir := t.TempDir()
	names := []string{"org01", "org02", "org03", full}
	var spec strings.Builder
	spec.WriteString("kind: sum\nparties:\n")
	want := 0.0
	for i, name := range names {
		rows := "id,u,v\n"
		for r := range 5 {
			v := 100*i + r
			rows += fmt.Sprintf("%d,1,%d\n", r, v)
			if name != full {
				want += float64(v)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name+".csv"), []byte(rows), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&spec, "  - name: %s\n    tables: [{name: t, path: %s.csv}]\n", name, name)
	}
	spec.WriteString("schema:\n  t: {id: id, u: numeric, v: numeric}\n")
	var mounted string
	t.Cleanup(func() {
		if mounted != "" {
			_ = syscall.Unmount(mounted, 0)
		}
	})
	keys := simtest.ThresholdKeys(keyBits)
	setup := func(names []string) (func(name, dataDir string) error, error) {
		install, err := keys(names)
		if err != nil {
			return nil, err
		}
		return func(name, dataDir string) error {
			if name == full {
				if err := mountFull(dataDir); err != nil {
					return err
				}
				mounted = dataDir
			}
			return install(name, dataDir)
		}, nil
	}
	// The test's bound is below the node's step timeout: waiting it out
	// at admission alone would fail the test.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	c, err := sim.StartCluster(ctx, t.TempDir(), names, sim.ClusterOptions{
		TablesDir: dir, Setup: setup, Kinds: job.Registry{"sum": sum.Kind{}},
		Timing: node.Timing{SendMS: 5000, StepMS: 120000}, Policy: policy.Default(),
		RandomizerPool: -1, LatticePool: -1, // as simtest.StartCluster's: no job here takes from them
	})
	var skip errSkipMount
	if errors.As(err, &skip) {
		t.Skipf("cannot mount a tmpfs here: %v", skip.err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.MakeLeader(ctx, "org01"); err != nil {
		t.Fatal(err)
	}
	n := c.Node("org01")
	// The first job sums u while the disk has room; the one under test
	// sums v, which the first did not form, so the differencing rule lets
	// it end over the other three.
	if rec := run(t, ctx, n, spec.String()+"params: {column: u}\n"); len(rec.Excluded) > 0 {
		t.Fatalf("first job, disk not yet full: excluded %v", rec.Excluded)
	}
	fill(t, mounted)
	res := run(t, ctx, n, spec.String()+"params: {column: v, timeout_ms: 20000}\n")
	if res.Sum != want {
		t.Fatalf("sum %v, want %v over the three other parties", res.Sum, want)
	}
	why := res.Excluded[full]
	if !strings.Contains(why, "no space left on device") {
		t.Fatalf("excluded %v: %s's cause is not named", res.Excluded, full)
	}
	if strings.Contains(why, "/") {
		t.Fatalf("%s's cause carries a path: %q", full, why)
	}
}

type sumResult struct {
	Sum      float64           `json:"sum"`
	Excluded map[string]string `json:"excluded"`
}

// run submits spec through n and returns the done job's result.
func run(t *testing.T, ctx context.Context, n *node.Node, spec string) sumResult {
	t.Helper()
	id, err := n.Submit(ctx, []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := n.Wait(ctx, id)
	if err != nil {
		t.Fatalf("job %s did not end: %v", id, err)
	}
	if rec.Status != node.StatusDone {
		t.Fatalf("job %s: %s", rec.Status, rec.Error)
	}
	var res sumResult
	if err := json.Unmarshal(rec.Result, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// mountFull puts a 16 MB tmpfs over dataDir, keeping what node init wrote
// there.
func mountFull(dataDir string) error {
	kept := dataDir + ".kept"
	if err := os.Rename(dataDir, kept); err != nil {
		return err
	}
	if err := os.Mkdir(dataDir, 0o700); err != nil {
		return err
	}
	if err := syscall.Mount("tmpfs", dataDir, "tmpfs", 0, "size=16m,mode=0700"); err != nil {
		return errSkipMount{err}
	}
	return os.CopyFS(dataDir, os.DirFS(kept))
}

type errSkipMount struct{ err error }

func (e errSkipMount) Error() string { return "mount tmpfs: " + e.err.Error() }

// fill writes zeros into dir until its filesystem is full.
func fill(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 1<<20)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}
