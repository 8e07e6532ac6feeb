package publish

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/graphanon"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/wire"
)

// writeGraph writes g as the two CSV tables the job reads: nodes.csv (id
// and the quasi-identifiers) and edges.csv (source, target, type).
func writeGraph(t *testing.T, dir string, g *graphanon.Graph) {
	t.Helper()
	nodes := [][]string{append([]string{"id"}, g.Quasi...)}
	for _, n := range g.Nodes {
		nodes = append(nodes, append([]string{n.ID}, n.Attrs...))
	}
	edges := [][]string{{"source", "target", "type"}}
	for _, e := range g.Edges {
		edges = append(edges, []string{g.Nodes[e.A].ID, g.Nodes[e.B].ID, e.Type})
	}
	for name, rows := range map[string][][]string{"nodes.csv": nodes, "edges.csv": edges} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := csv.NewWriter(f).WriteAll(rows); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// graphSpec writes a generated graph of the paper's parameters (§8.1) as
// the party's tables and a spec with the given params after the model's.
func graphSpec(t *testing.T, seed uint64, params string) (*job.Spec, *graphanon.Graph) {
	t.Helper()
	dir := t.TempDir()
	g, err := graphanon.Generate(graphanon.PaperParams(10, 10, seed))
	if err != nil {
		t.Fatal(err)
	}
	writeGraph(t, dir, g)
	spec := "kind: graph\nparties:\n  - name: dept\n    tables: [{name: nodes, path: nodes.csv}, {name: edges, path: edges.csv}]\n" +
		"params:\n  sensitive: friend\n  quasi: [year, track]\n  adversary: {leak: 0.2, lambda: {class: 0.4, group: 0.6}}\n" + params
	path := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := job.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	return s, g
}

// run runs the job coordinated by a member that holds no graph, so the
// release crosses the network and the report sees it.
func run(t *testing.T, s *job.Spec, pol *policy.Policy) (*jobtest.Report, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return jobtest.Run(ctx, Kind{}, s, jobtest.Options{Members: []string{"hub"}, Leader: "hub", Policy: pol,
		Secrets: jobtest.SecretsIn(t.TempDir(), s.PartyNames())})
}

// Leakage, for every strategy: the only output is the anonymised graph,
// sent once to the coordinator; no node id is in any message or log
// entry; the committed release holds no sensitive edge, classes of at
// least k, and exactly the observations the strategy keeps.
func TestLeakage(t *testing.T) {
	for _, st := range graphanon.Strategies() {
		params := "  k: 5\n  strategy: " + string(st) + "\n"
		if st == graphanon.Partial {
			params += "  remove: 0.5\n"
		}
		s, g := graphSpec(t, 1, params)
		rep, err := run(t, s, policy.Default())
		if err != nil {
			t.Fatalf("%s: %v", st, err)
		}
		for _, m := range rep.SentOutside(wire.DiscloseAnonymisedGraph, wire.DiscloseControl) {
			t.Errorf("%s: message %s discloses %q", st, m.Message.Type, m.Disclosure)
		}
		outputs := 0
		for _, m := range rep.Sent {
			if m.Disclosure == wire.DiscloseAnonymisedGraph {
				outputs++
				if m.From != "dept" || m.To != "hub" || m.Message.Phase != publishRound.Phase {
					t.Errorf("%s: %s sent the graph to %s in %s", st, m.From, m.To, m.Message.Phase)
				}
			}
		}
		if outputs != 1 {
			t.Errorf("%s: %d releases sent, want 1", st, outputs)
		}
		for _, n := range g.Nodes {
			if len(rep.SentHolding([]byte(n.ID))) > 0 || len(rep.LogHolding([]byte(n.ID))) > 0 {
				t.Fatalf("%s: node id %q left the party", st, n.ID)
			}
		}
		rel := rep.Result["release"].(graphanon.Release)
		kept := 0
		for _, e := range rel.Edges {
			if e.Type == "friend" {
				t.Fatalf("%s: a friend edge is released", st)
			}
			kept += e.Count
		}
		for _, c := range rel.Classes {
			if c.Size < 5 {
				t.Errorf("%s: class %s holds %d nodes", st, c.ID, c.Size)
			}
		}
		obs, removed := g.Observations(), rep.Result["removed"].(int)
		if kept+removed != obs || (st == graphanon.Intact || st == graphanon.Cluster) != (removed == 0) {
			t.Errorf("%s: %d kept and %d removed of %d observations", st, kept, removed, obs)
		}
		ths := rep.Result["thresholds"].([]graphanon.Threshold)
		if len(ths) != 4 || rep.Result["sensitive_pairs"].(int) == 0 {
			t.Errorf("%s: thresholds %v", st, ths)
		}
	}
}

// A node whose min_k is above the job's k refuses it before a row is
// read, and so does one whose policy does not grant the anonymised-graph
// form; bad params are refused by the field's name.
func TestRefused(t *testing.T) {
	s, _ := graphSpec(t, 2, "  k: 3\n  strategy: cluster\n")
	rep, err := run(t, s, policy.Default())
	if err == nil || !strings.Contains(err.Error(), "refused by policy") {
		t.Fatalf("k below min_k: %v", err)
	}
	for _, o := range rep.Outputs {
		t.Errorf("party output of step %s after the policy refused", o.Step.Phase)
	}
	b, err := os.ReadFile("../../policy/default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The form out of the attribute role's grants (the line that lists them).
	var without []byte
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("  attribute: [")) {
			line = bytes.Replace(line, []byte(", anonymised-graph"), nil, 1)
		}
		without = append(without, line...)
	}
	nograph, err := policy.Parse(without, "no-graph.yaml")
	if err != nil || bytes.Equal(b, without) {
		t.Fatalf("a policy that grants no anonymised graph: %v", err)
	}
	s, _ = graphSpec(t, 2, "  k: 6\n  strategy: cluster\n")
	if rep, err = run(t, s, nograph); err == nil || !strings.Contains(err.Error(), "columns.attribute") || len(rep.Outputs) > 0 {
		t.Errorf("a node that grants no anonymised graph: %v", err)
	}
	for p, field := range map[string]string{
		"  k: 1\n  strategy: cluster\n":                          "params.k",
		"  k: 5\n  strategy: merged\n":                           "params.strategy",
		"  k: 5\n  strategy: partial\n":                          "params.remove",
		"  k: 5\n  strategy: intact\n  remove: 0.5\n":            "params.remove",
		"  k: 5\n  strategy: intact\n  rho: [1.5]\n":             "params.rho",
		"  k: 5\n  strategy: intact\n  tables: {nodes: edges}\n": "params.tables",
	} {
		s, _ := graphSpec(t, 2, p)
		if err := (Kind{}).Validate(s); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("params %q: %v", p, err)
		}
	}
	s, _ = graphSpec(t, 2, "  k: 5\n  strategy: intact\n")
	s.Params["quasi"] = []any{"year", "id"}
	if err := (Kind{}).Validate(s); err == nil || !strings.Contains(err.Error(), "params.quasi") {
		t.Errorf("the id as a quasi-identifier: %v", err)
	}
	s.Params["quasi"] = []any{"year"}
	s.Params["adversary"] = map[string]any{"leak": 0.2, "lambda": map[string]any{"friend": 0.3}}
	if err := (Kind{}).Validate(s); err == nil || !strings.Contains(err.Error(), "params.adversary.lambda") {
		t.Errorf("a noise for the sensitive type: %v", err)
	}
	s.Params["adversary"] = map[string]any{"leak": 1.2}
	if err := (Kind{}).Validate(s); err == nil || !strings.Contains(err.Error(), "params.adversary") {
		t.Errorf("a leak of 1.2: %v", err)
	}
}

// A graph the job cannot read fails with errors that name the table, row
// and column, never a node id or type, in the error, any message or any
// log entry: an edge to a node the table does not hold, a type with no
// noise, a node id twice.
func TestErrorsNameNoValue(t *testing.T) {
	for name, want := range map[string]string{"unknown node": "table edges row", "no noise": "params.adversary.lambda",
		"id twice": "table nodes row 10"} {
		s, g := graphSpec(t, 3, "  k: 5\n  strategy: intact\n")
		var needles []string
		for _, n := range g.Nodes {
			needles = append(needles, n.ID)
		}
		needles = append(needles, "student-secret-7", "secret-club")
		switch name {
		case "no noise":
			g.Edges[3].Type = "secret-club"
		case "id twice":
			g.Nodes[9].ID = g.Nodes[8].ID
		}
		writeGraph(t, s.Dir, g)
		if name == "unknown node" {
			f, err := os.OpenFile(filepath.Join(s.Dir, "edges.csv"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("student-secret-7,student-0001,class\n")
			f.Close()
		}
		rep, err := run(t, s, policy.Default())
		if err == nil {
			t.Fatalf("%s: the job ran", name)
		}
		for _, nd := range needles {
			if strings.Contains(err.Error(), nd) || len(rep.SentHolding([]byte(nd))) > 0 || len(rep.LogHolding([]byte(nd))) > 0 {
				t.Errorf("%s: %q in the error (%v), a message or the log", name, nd, err)
			}
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want it to say %q", name, err, want)
		}
	}
}
