package pgen_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cohortdm/cohort/pgen"
	"github.com/cohortdm/cohort/tree"
)

// TestBaseGen: BASEGEN on a tree of 2,700 rows (x <= 3.5, then c == red,
// then x <= 1.5; the right leaf 400 of class a and 1,000 of b), with the
// domains x in [0, 10] and c in {blue, green, red}: 2,700 rows, each of
// the class of the leaf it reaches (the tree classifies all of them
// right), spread over the data space rather than the paths: x > 3.5 for
// about 65 % of them (PGEN: 1,400 of 2,700, 52 %), and class a only where
// x <= 3.5 and c is red, about 0.35/3 = 11.7 % (PGEN: 1,400, 52 %).
func TestBaseGen(t *testing.T) {
	t.Parallel()
	s := &pgen.Schema{Numeric: map[string]bool{"x": true, "c": false}, ClassColumn: "y",
		Ranges: map[string][2]float64{"x": {0, 10}}, Values: map[string][]string{"c": {"blue", "green", "red"}}}
	le := &tree.Split{Party: "p", Table: "T", Column: "x", Op: tree.OpLE, Num: 3.5}
	eq := &tree.Split{Party: "p", Table: "T", Column: "c", Op: tree.OpEQ, Cat: "red"}
	le2 := &tree.Split{Party: "p", Table: "T", Column: "x", Op: tree.OpLE, Num: 1.5}
	src := &tree.Tree{Labels: []string{"a", "b"}, Root: &tree.Node{Split: le, Counts: []uint64{1400, 1300},
		Left: &tree.Node{Split: eq, Counts: []uint64{1000, 300},
			Left:  &tree.Node{Counts: []uint64{1000, 0}},
			Right: &tree.Node{Split: le2, Counts: []uint64{0, 300}, Left: &tree.Node{Counts: []uint64{0, 100}}, Right: &tree.Node{Counts: []uint64{0, 200}}}},
		Right: &tree.Node{Counts: []uint64{400, 1000}}}}
	d := pgen.BaseGen([]*tree.Tree{src}, s, rand.New(rand.NewPCG(1, 2)))
	if d.Rows() != 2700 {
		t.Fatalf("%d rows, want 2700", d.Rows())
	}
	if n := tree.Correct(src, d); n != d.Rows() {
		t.Errorf("the tree classifies %d of %d BASEGEN rows as their class, want all", n, d.Rows())
	}
	var right, a int
	for i := range d.Rows() {
		if d.Attrs[1].Num[i] > 3.5 {
			right++
		}
		if d.Labels[d.Class[i]] == "a" {
			a++
		}
	}
	n := float64(d.Rows())
	t.Logf("x > 3.5: %d rows, class a: %d", right, a)
	if math.Abs(float64(right)/n-0.65) > 0.04 || math.Abs(float64(a)/n-0.35/3) > 0.03 {
		t.Errorf("x > 3.5 for %d rows, class a for %d, of %d: want about 65 %% and 11.7 %%", right, a, d.Rows())
	}
}
