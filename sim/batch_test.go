package sim_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/pgen"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sum"
)

// Two examples over different parties (north, south, west; east, north,
// west) run on one cluster of all four, each spec's tables found under its
// own directory; each output holds its result and, per party, only its own
// job's audit entries.
func TestBatchOneCluster(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := t.TempDir()
	jobs := []sim.BatchJob{
		{Spec: filepath.Join("..", "examples", "sum", "spec.yaml"), Out: filepath.Join(out, "sum")},
		{Spec: filepath.Join("..", "examples", "pgen", "spec.yaml"), Out: filepath.Join(out, "pgen")},
	}
	var clusters [][]string
	var started *sim.Cluster
	var order []int
	results := map[int]map[string]any{}
	err := sim.RunBatch(ctx, jobs, sim.BatchOptions{
		Kinds: job.Registry{"sum": sum.Kind{}, "pgen": pgen.Kind{}}, Setup: simtest.ThresholdKeys(keyBits),
		OnStart: func(c *sim.Cluster) { clusters, started = append(clusters, c.Names), c },
	}, func(i int, res map[string]any) error {
		order = append(order, i)
		results[i] = res
		// The nodes keep no randomizer pool and no lattice zero pool: in
		// one process they would fill on the cores the other jobs need (a
		// node with one shows it in its status once the key is installed;
		// TestClusterPools).
		for _, name := range started.Names {
			if n := started.Node(name); n != nil && (n.Status().Randomizers != nil || n.Status().LatticeZeros != nil) {
				t.Errorf("after job %d, node %s keeps a pool", i, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"east", "north", "south", "west"}; len(clusters) != 1 || !slices.Equal(clusters[0], want) {
		t.Fatalf("clusters started: %v, want one of %v", clusters, want)
	}
	if !slices.Equal(order, []int{0, 1}) {
		t.Errorf("jobs reported in order %v", order)
	}
	if got := results[0]["sum"]; got != 79.75 {
		t.Errorf("sum = %v, want 79.75", got)
	}
	if results[1]["kind"] != "pgen" {
		t.Errorf("pgen result %v", results[1])
	}
	for i, parties := range [][]string{{"north", "south", "west"}, {"east", "north", "west"}} {
		dir := jobs[i].Out
		if _, err := os.Stat(filepath.Join(dir, "result.json")); err != nil {
			t.Error(err)
		}
		entries, err := os.ReadDir(filepath.Join(dir, "audit"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
			checkLedgerJob(t, filepath.Join(dir, "audit", e.Name()), results[i]["job"].(string))
		}
		var want []string
		for _, p := range parties {
			want = append(want, p+".jsonl")
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s/audit holds %v, want %v", jobs[i].Out, names, want)
		}
	}
}

// checkLedgerJob checks that every entry of a ledger is of job id, and
// that there is one.
func checkLedgerJob(t *testing.T, path, id string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var e struct {
			Job string `json:"job"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Job != id {
			t.Errorf("%s: entry %q is not of job %s (%v)", path, sc.Text(), id, err)
		}
		n++
	}
	if n == 0 {
		t.Errorf("%s: no entry", path)
	}
}

// A batch whose later output dir is not empty fails before it starts
// anything or writes any output.
func TestBatchChecksEveryOutFirst(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	full := filepath.Join(out, "b")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join("..", "examples", "sum", "spec.yaml")
	jobs := []sim.BatchJob{{Spec: spec, Out: filepath.Join(out, "a")}, {Spec: spec, Out: full}}
	started := false
	err := sim.RunBatch(context.Background(), jobs, sim.BatchOptions{Kinds: job.Registry{"sum": sum.Kind{}},
		OnStart: func(*sim.Cluster) { started = true }}, func(int, map[string]any) error { return nil })
	if !errors.Is(err, sim.ErrOutNotEmpty) {
		t.Fatalf("err = %v, want ErrOutNotEmpty", err)
	}
	if started {
		t.Error("a cluster was started")
	}
	if _, err := os.Stat(filepath.Join(out, "a")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the first job's output was made: %v", err)
	}
}

// A job that fails ends the batch: its output holds the audit entries of
// what its parties recorded (their refusals) and no result; the job before
// it keeps its result.
func TestBatchFailedJob(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := t.TempDir()
	jobs := []sim.BatchJob{
		{Spec: filepath.Join("..", "examples", "pgen", "spec.yaml"), Out: filepath.Join(out, "pgen")},
		{Spec: filepath.Join("..", "examples", "sum", "spec.yaml"), Out: filepath.Join(out, "sum")},
	}
	pol := policy.Default()
	pol.Kinds = policy.Members{"pgen": {"*"}} // every node refuses sum
	done := 0
	err := sim.RunBatch(ctx, jobs, sim.BatchOptions{Kinds: job.Registry{"sum": sum.Kind{}, "pgen": pgen.Kind{}},
		Setup: simtest.ThresholdKeys(keyBits), Policy: pol}, func(int, map[string]any) error {
		done++
		return nil
	})
	var je *sim.JobError
	if !errors.As(err, &je) || je.Job != 1 || done != 1 {
		t.Fatalf("err = %v after %d jobs reported, want the second to fail", err, done)
	}
	if _, err := os.Stat(filepath.Join(out, "pgen", "result.json")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(out, "sum", "result.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the failed job left a result: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "sum", "audit", "north.jsonl")); err != nil {
		t.Error(err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 2 {
		t.Errorf("left in the output: %v", entries)
	}
}
