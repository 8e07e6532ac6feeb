package pgen_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/pgen"
	"github.com/cohortdm/cohort/tree"
)

// TestDecisionTableByHand: seven rows (a, b, class): (x, p, no) twice,
// (x, q, no), (y, q, yes) twice, (y, p, yes) twice. Leave-one-out: the
// empty schema 0 (a row left out tips the majority to the other class or
// a tie, which goes to no), {b} 0, {a} 1, {a, b} below 1 ((x, q, no) alone
// falls back to the whole table, yes): the search keeps {a}. A row of a
// value the table lacks, or without a, gets the default, yes (4 of 7).
func TestDecisionTableByHand(t *testing.T) {
	t.Parallel()
	d := &tree.Data{
		Labels: []string{"no", "yes"},
		Class:  []int32{0, 0, 0, 1, 1, 1, 1},
		Attrs: []*tree.Attr{
			{Name: "a", Values: []string{"x", "y"}, Code: []int32{0, 0, 0, 1, 1, 1, 1}},
			{Name: "b", Values: []string{"p", "q"}, Code: []int32{0, 0, 1, 1, 1, 0, 0}},
		},
	}
	m := pgen.LearnTable(d)
	want := []pgen.DTEntry{{Key: []int32{0}, Counts: []uint64{3, 0}}, {Key: []int32{1}, Counts: []uint64{0, 4}}}
	if len(m.Attrs) != 1 || m.Attrs[0].Name != "a" || m.LOO != 1 || !reflect.DeepEqual(m.Entries, want) || !reflect.DeepEqual(m.Default, []uint64{3, 4}) {
		t.Fatalf("table %+v", m)
	}
	for _, c := range []struct {
		a    string
		has  bool
		want string
	}{{"x", true, "no"}, {"y", true, "yes"}, {"z", true, "yes"}, {"x", false, "yes"}} {
		got := m.Classify(func(name string) (float64, string, bool) { return 0, c.a, c.has && name == "a" })
		if m.Labels[got] != c.want {
			t.Errorf("a %q (present %v): %s, want %s", c.a, c.has, m.Labels[got], c.want)
		}
	}
}

// and is n rows whose class is yes exactly when x > 0.5 and cat is a,
// with a numeric attribute of noise.
func and(rng *rand.Rand, n int) *tree.Data {
	d := &tree.Data{Labels: []string{"no", "yes"}, Attrs: []*tree.Attr{
		{Name: "cat", Values: []string{"a", "b"}},
		{Name: "noise", Numeric: true},
		{Name: "x", Numeric: true},
	}}
	for range n {
		cat, x := int32(rng.IntN(2)), rng.Float64()
		d.Attrs[0].Code = append(d.Attrs[0].Code, cat)
		d.Attrs[1].Num = append(d.Attrs[1].Num, rng.Float64())
		d.Attrs[2].Num = append(d.Attrs[2].Num, x)
		c := int32(0)
		if cat == 0 && x > 0.5 {
			c = 1
		}
		d.Class = append(d.Class, c)
	}
	return d
}

// TestDecisionTable: on the fixture the search finds the schema {cat, x}
// (x cut once, near 0.5), leaves the noise out, and the table classifies
// 1,000 held-out rows at least 97 % right.
func TestDecisionTable(t *testing.T) {
	t.Parallel()
	m := pgen.LearnTable(and(rand.New(rand.NewPCG(1, 0)), 400))
	if len(m.Attrs) != 2 || m.Attrs[0].Name != "cat" || m.Attrs[1].Name != "x" || len(m.Attrs[1].Cuts) != 1 {
		t.Fatalf("schema %+v", m.Attrs)
	}
	test := and(rand.New(rand.NewPCG(2, 0)), 1000)
	acc := float64(pgen.CorrectTable(m, test)) / float64(test.Rows())
	t.Logf("cut %.3f, leave-one-out %.3f, held-out %.3f", m.Attrs[1].Cuts[0], m.LOO, acc)
	if acc < 0.97 {
		t.Errorf("held-out accuracy %.3f, want at least 0.97", acc)
	}
}

// checkTable checks a result's decision table: it is GlobalTable over the
// result's published trees and joint seed (what every member can redo
// from the log), and on the held-out sample the median of five fixed
// draws of the pseudo-rows (medianOf: the joint seed is drawn afresh each
// run, and draws range from 82 % to 90 %) is within 10 points of a
// decision table learnt on the union of the rows (the paper's BASIS).
func checkTable(t *testing.T, res map[string]any, spec *job.Spec) {
	t.Helper()
	s, seed, trees, union := fromResult(t, res, spec)
	want := pgen.GlobalTable(trees, s, seed)
	sameJSON(t, "decision table", res["decision_table"], want)
	test := readData(t, filepath.Join(spec.Dir, "data", "test.csv"), s)
	acc := func(m *pgen.DecisionTable) float64 { return float64(pgen.CorrectTable(m, test)) / float64(test.Rows()) }
	global := medianOf(5, func(seed []byte) float64 { return acc(pgen.GlobalTable(trees, s, seed)) })
	central := acc(pgen.LearnTable(concat(union)))
	t.Logf("decision table on the held-out sample: the log's draw %.3f (schema of %d), median of five fixed draws %.3f, union %.3f",
		acc(want), len(want.Attrs), global, central)
	if global < central-0.10 {
		t.Errorf("the decision table from the pseudo-rows %.3f (median of five draws), more than 10 points below the union's %.3f", global, central)
	}
}

// TestJobDecisionTable runs the example with params.decision_table over
// the in-process runtime: the result's table is GlobalTable over the
// committed trees with the log's joint seed, and classifies the held-out
// sample within 10 points of a table on the union (checkTable).
func TestJobDecisionTable(t *testing.T) {
	t.Parallel()
	spec := loadSpec(t, exampleWith(t, "  decision_table: true"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := jobtest.Run(ctx, pgen.Kind{}, spec, options(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	jointSeed(t, rep, spec)
	if _, ok := rep.Result["decision_table"].(*pgen.DecisionTable); !ok {
		t.Fatalf("result decision_table %T", rep.Result["decision_table"])
	}
	checkTable(t, rep.Result, spec)
}

// medianOf is the median of score over n fixed seeds, "accuracy 0",
// "accuracy 1", ... (as medianAccuracy draws the global tree's).
func medianOf(n int, score func(seed []byte) float64) float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = score([]byte(fmt.Sprintf("accuracy %d", i)))
	}
	slices.Sort(xs)
	return xs[n/2]
}
