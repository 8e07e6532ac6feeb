package publish

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/graphanon"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// readCSV reads a file `cohort sim` wrote.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// Over real nodes (libp2p on loopback, Raft) under the default policy:
// the release's files are written with no node id and no friend edge,
// result.json names them beside the figures, and the party's audit ledger
// holds nothing but its policy's decision and control (the party is the
// only node, so its release never leaves it as a message).
func TestSim(t *testing.T) {
	s, g := graphSpec(t, 4, "  k: 6\n  strategy: partial\n  remove: 0.5\n")
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := sim.Run(ctx, filepath.Join(s.Dir, "spec.yaml"), sim.RunOptions{Kinds: job.Registry{"graph": Kind{}}, Out: out, Policy: policy.Default()}); err != nil {
		t.Fatal(err)
	}
	nodes := readCSV(t, filepath.Join(out, NodesFile))
	edges := readCSV(t, filepath.Join(out, EdgesFile))
	classes := readCSV(t, filepath.Join(out, ClassesFile))
	if len(nodes) != len(g.Nodes)+1 || len(classes) != len(g.Nodes)/6+1 || len(edges) < 100 {
		t.Fatalf("%d node rows, %d class rows, %d edge rows", len(nodes), len(classes), len(edges))
	}
	for _, f := range []string{NodesFile, EdgesFile, ClassesFile} {
		b, _ := os.ReadFile(filepath.Join(out, f))
		for _, n := range g.Nodes {
			if bytes.Contains(b, []byte(n.ID)) {
				t.Fatalf("%s holds node id %s", f, n.ID)
			}
		}
		if bytes.Contains(b, []byte(graphanon.TypeFriend)) {
			t.Errorf("%s holds the sensitive type", f)
		}
	}
	raw, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Files      map[string]string     `json:"graph"`
		Removed    int                   `json:"removed"`
		Thresholds []graphanon.Threshold `json:"thresholds"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.Files["edges"] != EdgesFile || res.Removed == 0 || len(res.Thresholds) != 4 {
		t.Errorf("result.json: %v %.300s", err, raw)
	}
	if bytes.Contains(raw, []byte(`"release":`)) {
		t.Error("result.json holds the release beside the files")
	}
	entries, err := audit.ReadFile(filepath.Join(out, "audit", "dept.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch {
		case e.Disclosure == string(wire.DiscloseAnonymisedGraph) && e.Phase == publishRound.Phase:
		case e.Disclosure == string(wire.DiscloseControl) && (e.Type == audit.DecisionType || e.Type == runner.OutputType && e.Phase == runner.AdmitPhase):
		default:
			t.Errorf("the ledger holds %s in %s to %s disclosing %q", e.Type, e.Phase, e.Peer, e.Disclosure)
		}
	}
	if len(audit.Decisions(entries)) == 0 {
		t.Error("the ledger holds no policy decision: the check checks nothing")
	}
}

// The example (examples/graph/graph.yaml) runs under the default policy
// and its tables are the generator's (§8.1's parameters, 20 classes and
// 20 groups, seed 1), so they can be remade:
//
//	COHORT_WRITE_EXAMPLE=1 go test ./graphanon/publish -run TestExample
func TestExample(t *testing.T) {
	const dir = "../../examples/graph"
	g, err := graphanon.Generate(graphanon.PaperParams(20, 20, 1))
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("COHORT_WRITE_EXAMPLE") != "" {
		writeGraph(t, dir, g)
	}
	want := t.TempDir()
	writeGraph(t, want, g)
	for _, f := range []string{"nodes.csv", "edges.csv"} {
		a, errA := os.ReadFile(filepath.Join(dir, f))
		b, errB := os.ReadFile(filepath.Join(want, f))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Fatalf("%s/%s is not the generator's (%v, %v)", dir, f, errA, errB)
		}
	}
	s, err := job.LoadSpec(filepath.Join(dir, "graph.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := run(t, s, policy.Default())
	if err != nil {
		t.Fatal(err)
	}
	rel := rep.Result["release"].(graphanon.Release)
	if len(rel.Classes) == 0 || len(rel.Edges) == 0 || rep.Result["sensitive_pairs"].(int) == 0 {
		t.Errorf("%d classes and %d edges released", len(rel.Classes), len(rel.Edges))
	}
}
