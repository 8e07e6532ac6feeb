package sjc_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/tree"
)

// TestSimRealNodes runs the job on real nodes (libp2p, Raft) through
// sim.Run: result.json holds the assembled tree, equal to the in-process
// tree, and the test accuracy Evaluate gives; every party keeps its part
// of the model. It runs with the default PSI (auto, which picks ECDH for
// these small edges) and with OT and VOLE forced, whose extension
// matrices, trees and OPRF values travel as real libp2p messages.
func TestSimRealNodes(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"", "ot", "vole"} {
		t.Run("psi="+mode, func(t *testing.T) { simRealNodes(t, mode) })
	}
}

func simRealNodes(t *testing.T, mode string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	spec, want := chainCase(t, nil)
	if mode != "" {
		if spec.Params == nil {
			spec.Params = map[string]any{}
		}
		spec.Params["psi"] = mode
	}
	spec.Test = map[string]string{}
	for _, p := range spec.Parties {
		for _, tb := range p.Tables {
			spec.Test[tb.Name] = tb.Name + "_test.csv"
		}
	}
	raw, err := spec.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(spec.Dir, "spec.yaml")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	res := simRun(t, ctx, path, sim.RunOptions{Kinds: job.Registry{"sjc": sjc.Kind{}}, Out: out})
	b, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var written struct {
		Tree json.RawMessage `json:"tree"`
		Test struct {
			Rows    uint64 `json:"rows"`
			Correct uint64 `json:"correct"`
		} `json:"test"`
		Timing map[string]float64 `json:"timing"`
		Bytes  map[string]int64   `json:"bytes"`
	}
	if err := json.Unmarshal(b, &written); err != nil {
		t.Fatal(err)
	}
	var got tree.Tree
	if err := got.UnmarshalJSON(written.Tree); err != nil {
		t.Fatalf("result.json tree: %v", err)
	}
	if d := tree.Diff(want, &got); d != "" {
		t.Fatalf("real-node tree differs from the in-process tree: %s", d)
	}
	_, g, _ := loadSpec(t, path)
	test := map[string]string{}
	for name := range spec.Test {
		test[name] = readFile(t, filepath.Join(spec.Dir, name+"_test.csv"))
	}
	c, tot, err := sjc.Evaluate(want, g, loadTables(t, spec, test))
	if err != nil {
		t.Fatal(err)
	}
	if written.Test.Rows != tot || written.Test.Correct != c {
		t.Fatalf("test %d of %d, in process %d of %d", written.Test.Correct, written.Test.Rows, c, tot)
	}
	for _, ph := range []string{"load", "propagate", "choose", "split", "finish"} {
		if _, ok := written.Timing[ph]; !ok {
			t.Errorf("no timing for phase %s: %v", ph, written.Timing)
		}
	}
	if len(written.Bytes) != 3 || res["kind"] != "sjc" {
		t.Errorf("bytes %v, kind %v", written.Bytes, res["kind"])
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPredictRealNodes trains a model on real nodes and then, on the same
// running consortium, classifies the test tables with an sjc-predict job
// naming the training job: each node finds its part of the model in its
// own data dir.
func TestPredictRealNodes(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	spec, want := chainCase(t, nil)
	spec.Test = nil
	c := simtest.StartCluster(t, ctx, spec.PartyNames(), sim.ClusterOptions{
		Kinds: job.Registry{"sjc": sjc.Kind{}, "sjc-predict": sjc.PredictKind{}}, TablesDir: spec.Dir,
	})
	defer c.Close()
	n, err := c.WaitLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	submit := func(s *job.Spec) map[string]any {
		t.Helper()
		raw, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		id, err := n.Submit(ctx, raw)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := n.Wait(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Status != node.StatusDone {
			t.Fatalf("job %s: %s %s %v", id, rec.Status, rec.Error, rec.Failures)
		}
		var res map[string]any
		if err := json.Unmarshal(rec.Result, &res); err != nil {
			t.Fatal(err)
		}
		res["id"] = id
		return res
	}
	trained := submit(spec)
	if nodes, _ := want.Size(); trained["nodes"] != float64(nodes) {
		t.Fatalf("trained %v nodes, in process %d", trained["nodes"], nodes)
	}
	ps := *spec
	ps.Kind, ps.Params, ps.Parties = "sjc-predict", map[string]any{"model": trained["id"]}, nil
	for _, p := range spec.Parties {
		q := job.PartySpec{Name: p.Name}
		for _, tb := range p.Tables {
			q.Tables = append(q.Tables, job.TableSpec{Name: tb.Name, Path: tb.Name + "_test.csv"})
		}
		ps.Parties = append(ps.Parties, q)
	}
	pred := submit(&ps)
	rows, _ := pred["rows"].(float64)
	if rows == 0 {
		t.Fatalf("no test join row predicted: %v", pred)
	}
	target := spec.Parties[0].Name
	for _, p := range spec.Parties {
		for _, tb := range p.Tables {
			if tb.Name == "T1" {
				target = p.Name
			}
		}
	}
	if _, err := os.Stat(filepath.Join(c.DataDir(target), sjc.PredictionsSecret(pred["id"].(string)))); err != nil {
		t.Fatalf("the target's party kept no predictions: %v", err)
	}
	t.Logf("predicted %v over %v join rows", pred["predicted"], rows)
}

// TestSimPartyRestarted: over real nodes, a party's node is restarted once
// the first levels are committed; its new session goes on from the state
// it kept in its data dir, and the tree (assembled from every node's data
// dir) is the in-process tree. A restart that loses messages sent to the
// old process (the others' summaries or confirmations of the running
// attempt) leaves that attempt waiting until the step's timeout, when the
// coordinator re-runs it: the test sets that timeout to 10 s (the node's
// default, 2 minutes, is this test's whole budget).
func TestSimPartyRestarted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	spec, want := chainCase(t, nil)
	spec.Test = nil
	c := simtest.StartCluster(t, ctx, spec.PartyNames(), sim.ClusterOptions{
		Kinds: job.Registry{"sjc": sjc.Kind{}}, TablesDir: spec.Dir, Timing: node.Timing{StepMS: 10_000},
	})
	defer c.Close()
	leader, err := c.WaitLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	victim := ""
	for _, name := range spec.PartyNames() {
		if c.Node(name) != leader {
			victim = name
			break
		}
	}
	raw, err := spec.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	id, err := leader.Submit(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.WaitSteps(ctx, leader, id, 6); err != nil { // load, propagate and two levels (choose, split)
		t.Fatalf("before the restart: %v", err)
	}
	if err := c.Kill(victim); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Restart(victim); err != nil {
		t.Fatal(err)
	}
	rec, err := leader.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != node.StatusDone {
		t.Fatalf("job %s: %s %v", rec.Status, rec.Error, rec.Failures)
	}
	secrets := map[string]job.Secrets{}
	for _, name := range spec.PartyNames() {
		secrets[name] = job.DirSecrets(c.DataDir(name))
	}
	full, err := sjc.Kind{}.Assemble(ctx, spec, rec.Result, secrets, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Tree json.RawMessage `json:"tree"`
	}
	if err := json.Unmarshal(full, &res); err != nil {
		t.Fatal(err)
	}
	var got tree.Tree
	if err := got.UnmarshalJSON(res.Tree); err != nil {
		t.Fatal(err)
	}
	if d := tree.Diff(want, &got); d != "" {
		t.Fatalf("after %s restarted the tree differs: %s", victim, d)
	}
}
