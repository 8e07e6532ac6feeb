package pgen_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/pgen"
	"github.com/cohortdm/cohort/tree"
)

// separable is n rows of a fixture whose class is yes exactly when
// x + y > 1 (x, y uniform in [0, 1]), with a categorical attribute of
// noise: a diagonal boundary that one axis-parallel tree approximates
// by steps and an average of bootstrap trees more finely.
func separable(rng *rand.Rand, n int) *tree.Data {
	d := &tree.Data{Labels: []string{"no", "yes"}, Attrs: []*tree.Attr{
		{Name: "noise", Values: []string{"a", "b", "c"}},
		{Name: "x", Numeric: true},
		{Name: "y", Numeric: true},
	}}
	for range n {
		x, y := rng.Float64(), rng.Float64()
		d.Attrs[0].Code = append(d.Attrs[0].Code, int32(rng.IntN(3)))
		d.Attrs[1].Num = append(d.Attrs[1].Num, x)
		d.Attrs[2].Num = append(d.Attrs[2].Num, y)
		c := int32(0)
		if x+y > 1 {
			c = 1
		}
		d.Class = append(d.Class, c)
	}
	return d
}

func sameForest(a, b *pgen.Forest) bool {
	if len(a.Trees) != len(b.Trees) || a.Features != b.Features {
		return false
	}
	for i := range a.Trees {
		if tree.Diff(a.Trees[i], b.Trees[i]) != "" {
			return false
		}
	}
	return true
}

// TestForest: on the separable fixture a forest of 25 trees classifies
// 1,000 held-out rows at least 95 % right; it draws 2 attributes per node
// of 3 (⌊log2 3⌋ + 1); each tree is grown on a bootstrap sample (as many
// rows, not the same class counts for every tree); one seed grows one
// forest and another seed another.
func TestForest(t *testing.T) {
	t.Parallel()
	train := separable(rand.New(rand.NewPCG(1, 0)), 400)
	test := separable(rand.New(rand.NewPCG(2, 0)), 1000)
	gp := tree.GrowParams{MaxDepth: 10, MinSplit: 2, Prune: true}
	grow := func(seed uint64) *pgen.Forest {
		return pgen.LearnForest(train, pgen.ForestParams{Trees: 25}, gp, rand.New(rand.NewPCG(seed, 0)))
	}
	f := grow(7)
	if len(f.Trees) != 25 || f.Features != 2 {
		t.Fatalf("%d trees, %d features per node; want 25 and 2", len(f.Trees), f.Features)
	}
	acc := float64(pgen.CorrectForest(f, test)) / float64(test.Rows())
	one := float64(tree.Correct(tree.Grow(train, gp, "", ""), test)) / float64(test.Rows())
	t.Logf("held-out accuracy: forest %.3f, one pruned tree %.3f", acc, one)
	if acc < 0.95 {
		t.Errorf("forest accuracy %.3f on a separable fixture, want at least 0.95", acc)
	}
	sizes := map[uint64]bool{}
	for _, tr := range f.Trees {
		if tr.Root.Counts[0]+tr.Root.Counts[1] != 400 {
			t.Fatalf("a tree grown on %v rows, want 400", tr.Root.Counts)
		}
		sizes[tr.Root.Counts[0]] = true
	}
	if len(sizes) < 2 {
		t.Errorf("every tree saw the same class counts %v: no bootstrap", f.Trees[0].Root.Counts)
	}
	if !sameForest(f, grow(7)) {
		t.Error("seed 7 grows two different forests")
	}
	if sameForest(f, grow(8)) {
		t.Error("seeds 7 and 8 grow the same forest")
	}
}

// TestForestAverages: a forest's class is the largest sum of its trees'
// leaf frequencies, not a vote: leaves of 0/10, 6/4 and 6/4 (no/yes) give
// no 1.2 and yes 1.8, so yes, where two of three trees vote no.
func TestForestAverages(t *testing.T) {
	t.Parallel()
	leaf := func(no, yes uint64) *tree.Tree {
		return &tree.Tree{Labels: []string{"no", "yes"}, Root: &tree.Node{Counts: []uint64{no, yes}}}
	}
	f := &pgen.Forest{Labels: []string{"no", "yes"}, Trees: []*tree.Tree{leaf(0, 10), leaf(6, 4), leaf(6, 4)}}
	if c := f.Classify(func(*tree.Split) bool { return true }); f.Labels[c] != "yes" {
		t.Errorf("class %s, want yes", f.Labels[c])
	}
	f.Trees[0] = leaf(5, 5) // no 1.7, yes 1.3
	if c := f.Classify(func(*tree.Split) bool { return true }); f.Labels[c] != "no" {
		t.Errorf("class %s, want no", f.Labels[c])
	}
}

// checkForest checks a result's random forest: it is GlobalForest over the
// result's published trees and joint seed with the spec's params (what
// every member can redo from the log), and on the held-out sample the
// median of five fixed draws of the pseudo-rows (medianOf) is within 3
// points of a forest learnt on the union of the rows (the paper's BASIS).
func checkForest(t *testing.T, res map[string]any, spec *job.Spec) {
	t.Helper()
	_, p, err := pgen.SchemaOf(spec)
	if err != nil {
		t.Fatal(err)
	}
	s, seed, trees, union := fromResult(t, res, spec)
	gp := tree.GrowParams{MaxDepth: p.MaxDepth, MinSplit: p.MinSplit}
	want := pgen.GlobalForest(trees, s, *p.RandomForest, gp, seed)
	sameJSON(t, "random forest", res["random_forest"], want)
	gb, _ := json.Marshal(res["random_forest"])
	var got pgen.Forest
	if err := json.Unmarshal(gb, &got); err != nil || !sameForest(&got, want) {
		t.Fatalf("the result's random forest does not decode to GlobalForest's (%v)", err)
	}
	test := readData(t, filepath.Join(spec.Dir, "data", "test.csv"), s)
	acc := func(f *pgen.Forest) float64 { return float64(pgen.CorrectForest(f, test)) / float64(test.Rows()) }
	basis := pgen.LearnForest(concat(union), *p.RandomForest, gp, rand.New(rand.NewPCG(1, 0)))
	global := medianOf(5, func(seed []byte) float64 { return acc(pgen.GlobalForest(trees, s, *p.RandomForest, gp, seed)) })
	central := acc(basis)
	t.Logf("random forest on the held-out sample: the log's draw %.3f, median of five fixed draws %.3f, union %.3f", acc(want), global, central)
	if global < central-0.03 {
		t.Errorf("the random forest from the pseudo-rows %.3f (median of five draws), more than 3 points below the union's %.3f", global, central)
	}
}

// TestJobRandomForest runs the example with params.random_forest over the
// in-process runtime: the result's forest is GlobalForest over the
// committed trees with the log's joint seed, of the trees asked for, and
// classifies the held-out sample within 3 points of a forest on the union
// (checkForest); without the param the result has none.
func TestJobRandomForest(t *testing.T) {
	t.Parallel()
	spec := loadSpec(t, exampleWith(t, "  random_forest: {trees: 20}"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := jobtest.Run(ctx, pgen.Kind{}, spec, options(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	jointSeed(t, rep, spec)
	if f, ok := rep.Result["random_forest"].(*pgen.Forest); !ok || len(f.Trees) != 20 {
		t.Fatalf("result random_forest %T, want a forest of 20 trees", rep.Result["random_forest"])
	}
	checkForest(t, rep.Result, spec)
	plain := loadSpec(t, filepath.Join(exampleDir, "spec.yaml"))
	rep, err = jobtest.Run(ctx, pgen.Kind{}, plain, options(t, plain))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rep.Result["random_forest"]; ok {
		t.Error("a forest in the result of a spec without params.random_forest")
	}
}
