package pgen_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/pgen"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/tree"
)

// TestRealNodes, the run over real nodes, and what it and the model tests
// share to redo a result's global models from what the log holds
// (fromResult, sameJSON, checkBayes): apart from pgen_test.go, which holds
// the job's in-memory runs.

// TestRealNodes runs the example on real nodes (cohort sim: one node per
// party, libp2p on loopback, Raft), under the default policy with pgen
// added to its kinds: every published tree in result.json meets release_k,
// the audit ledgers record each tree sent as generalised, each commitment
// and opening of the joint seed as a public result, and nothing else but
// control, and the global tree splits only on the schema's attributes;
// with naive_bayes, random_forest, decision_table and conjunctive_rule,
// which add no message, the result's models are those every member can
// redo from the log (checkBayes, checkForest, checkTable, checkRule).
func TestRealNodes(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pol := policy.Default()
	pol.Kinds["pgen"] = []string{policy.Any}
	out := filepath.Join(t.TempDir(), "out")
	specPath := exampleWith(t, "  naive_bayes: true\n  random_forest: {trees: 10}\n  decision_table: true\n  conjunctive_rule: true")
	res, err := sim.Run(ctx, specPath, sim.RunOptions{Kinds: job.Registry{"pgen": pgen.Kind{}}, Out: out, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	checkBayes(t, res, loadSpec(t, specPath))
	checkForest(t, res, loadSpec(t, specPath))
	checkTable(t, res, loadSpec(t, specPath))
	checkRule(t, res, loadSpec(t, specPath))
	ledgered, seeds := 0, 0
	for p, v := range res["published"].(map[string]any) {
		for _, r := range leafRows(resultTree(t, v).Root) {
			if r < 10 {
				t.Errorf("party %s published a leaf of %d rows", p, r)
			}
		}
		audit, err := os.ReadFile(filepath.Join(out, "audit", p+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.TrimSpace(audit), []byte("\n")) {
			switch {
			case bytes.Contains(line, []byte(`"phase":"publish"`)) && bytes.Contains(line, []byte(`"disclosure":"generalised"`)):
				ledgered++
			case (bytes.Contains(line, []byte(`"phase":"seed-commit"`)) || bytes.Contains(line, []byte(`"phase":"seed-reveal"`))) &&
				bytes.Contains(line, []byte(`"disclosure":"public-result"`)):
				seeds++
			case !bytes.Contains(line, []byte(`"disclosure":"control"`)):
				t.Errorf("party %s's ledger: %s", p, line)
			}
		}
	}
	// The leader's own tree does not cross the network: no ledger entry.
	if ledgered != 2 || seeds != 4 {
		t.Errorf("%d publications and %d commitments and openings in the parties' ledgers, want 2 and 4", ledgered, seeds)
	}
	if seed, ok := res["joint_seed"].(string); !ok || len(seed) != 64 {
		t.Errorf("result joint_seed %v", res["joint_seed"])
	}
	s := exampleSchema(t)
	global := resultTree(t, res["tree"])
	var walk func(n *tree.Node)
	walk = func(n *tree.Node) {
		if n.IsLeaf() {
			return
		}
		if _, ok := s.Numeric[n.Split.Column]; !ok {
			t.Errorf("the global tree splits on %q, not an attribute", n.Split.Column)
		}
		walk(n.Left)
		walk(n.Right)
	}
	walk(global.Root)
}

// fromResult is what every member can redo a global model from: the
// spec's schema, the result's joint seed and published trees; and, for
// the comparison with the paper's BASIS, the union of the parties' rows.
func fromResult(t *testing.T, res map[string]any, spec *job.Spec) (*pgen.Schema, []byte, []*tree.Tree, []*tree.Data) {
	t.Helper()
	s, _, err := pgen.SchemaOf(spec)
	if err != nil {
		t.Fatal(err)
	}
	seed, err := hex.DecodeString(fmt.Sprint(res["joint_seed"]))
	if err != nil {
		t.Fatal(err)
	}
	var trees []*tree.Tree
	var union []*tree.Data
	for _, p := range spec.PartyNames() {
		trees = append(trees, resultTree(t, res["published"].(map[string]any)[p]))
		ps, _ := spec.Party(p)
		union = append(union, readData(t, filepath.Join(spec.Dir, ps.Tables[0].Path), s))
	}
	return s, seed, trees, union
}

// sameJSON fails unless the result's model encodes as the one redone
// from the log.
func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	var a, b any
	wb, _ := json.Marshal(want)
	gb, _ := json.Marshal(got)
	if err := errors.Join(json.Unmarshal(wb, &a), json.Unmarshal(gb, &b)); err != nil || !reflect.DeepEqual(a, b) {
		t.Fatalf("the result's %s is not the one redone from its published trees and joint seed (%v):\n%s\n%s", what, err, gb, wb)
	}
}

// checkBayes checks a result's naive Bayes model: it is GlobalBayes over
// the result's published trees and joint seed (what every member can
// redo from the log), and on the held-out sample it is within 10 points
// of naive Bayes learnt on the union of the rows (the paper's BASIS).
func checkBayes(t *testing.T, res map[string]any, spec *job.Spec) {
	t.Helper()
	s, seed, trees, union := fromResult(t, res, spec)
	want := pgen.GlobalBayes(trees, s, seed)
	sameJSON(t, "naive Bayes model", res["naive_bayes"], want)
	test := readData(t, filepath.Join(spec.Dir, "data", "test.csv"), s)
	acc := func(m *pgen.NaiveBayes) float64 { return float64(pgen.CorrectBayes(m, test)) / float64(test.Rows()) }
	global, basis := acc(want), acc(pgen.LearnBayes(concat(union)))
	t.Logf("naive Bayes on the held-out sample: global (pseudo-rows) %.3f, union %.3f", global, basis)
	if global < basis-0.10 {
		t.Errorf("naive Bayes from the pseudo-rows %.3f, more than 10 points below the union's %.3f", global, basis)
	}
}
