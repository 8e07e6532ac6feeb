package pgen_test

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/pgen"
	"github.com/cohortdm/cohort/tree"
	"github.com/cohortdm/cohort/wire"
)

// TestGenerateMultiway: PGEN on a multiway tree (C4.5's, ATP-merged): a
// pseudo-row of a branch of several values takes one of them, drawn
// uniformly (both appear), every row satisfies its path, each path gets
// exactly its leaf's counts, and the domain of c is every value the
// branches name (and Other); the global tree grown multiway on the pseudo-rows is
// multiway and splits on c.
func TestGenerateMultiway(t *testing.T) {
	t.Parallel()
	s := &pgen.Schema{Numeric: map[string]bool{"x": true, "c": false}, ClassColumn: "y"}
	in := &tree.Split{Party: "p", Table: "T", Column: "c", Op: tree.OpIn}
	le := &tree.Split{Party: "p", Table: "T", Column: "x", Op: tree.OpLE, Num: 3.5}
	src := &tree.Tree{Labels: []string{"a", "b"}, Root: &tree.Node{Split: in, Counts: []uint64{44, 46}, Branches: []tree.Branch{
		{Values: []string{"red", "teal"}, Child: &tree.Node{Counts: []uint64{40, 2}}},
		{Values: []string{"blue"}, Child: &tree.Node{Split: le, Counts: []uint64{4, 44},
			Left: &tree.Node{Counts: []uint64{4, 0}}, Right: &tree.Node{Counts: []uint64{0, 44}}}},
	}}}
	d := pgen.Generate([]*tree.Tree{src}, s, rand.New(rand.NewPCG(3, 4)))
	if d.Rows() != 90 {
		t.Fatalf("%d rows, want 90", d.Rows())
	}
	var c, x *tree.Attr
	for _, a := range d.Attrs {
		switch a.Name {
		case "c":
			c = a
		case "x":
			x = a
		}
	}
	if !slices.Equal(c.Values, []string{pgen.Other, "blue", "red", "teal"}) {
		t.Fatalf("c's domain %v", c.Values)
	}
	got := map[*tree.Node][]uint64{}
	seen := map[string]int{}
	for i := range d.Rows() {
		v, num := c.Values[c.Code[i]], x.Num[i]
		leaf := src.Leaf(func(sp *tree.Split) bool {
			if sp.Column == "x" {
				return num <= sp.Num
			}
			return v == sp.Cat
		})
		if !leaf.IsLeaf() {
			t.Fatalf("row %d (c = %s) reaches no leaf", i, v)
		}
		if leaf == src.Root.Branches[0].Child {
			seen[v]++
		}
		if got[leaf] == nil {
			got[leaf] = make([]uint64, 2)
		}
		got[leaf][slices.Index(src.Labels, d.Labels[d.Class[i]])]++
	}
	if seen["red"] == 0 || seen["teal"] == 0 || seen["red"]+seen["teal"] != 42 {
		t.Errorf("the branch {red, teal} drew %v", seen)
	}
	for _, n := range []*tree.Node{src.Root.Branches[0].Child, src.Root.Branches[1].Child.Left, src.Root.Branches[1].Child.Right} {
		if !slices.Equal(got[n], n.Counts) {
			t.Errorf("a leaf of counts %v got pseudo-rows %v", n.Counts, got[n])
		}
	}
	g := tree.Grow(d, tree.GrowParams{MaxDepth: 10, MinSplit: 2, Multiway: true}, "", "")
	if !g.Multiway() || g.Root.Split.Column != "c" {
		t.Errorf("the global tree's root: %v", g.Root.Split)
	}
}

// TestJobMultiway: the example with multiway: true: every published tree
// is the party's own C4.5 tree (tree.GrowParams.Multiway) ATP-pruned to
// release_k, some of them multiway, every leaf at least release_k rows,
// and the global tree is Global over them with the log's joint seed,
// grown multiway too.
func TestJobMultiway(t *testing.T) {
	t.Parallel()
	spec := loadSpec(t, exampleWith(t, "  multiway: true"))
	s, _, err := pgen.SchemaOf(spec)
	if err != nil {
		t.Fatal(err)
	}
	const k = 10
	pub, global, rep := runPGEN(t, spec)
	seed := jointSeed(t, rep, spec)
	gp := tree.GrowParams{MaxDepth: 10, MinSplit: 2, Prune: true, Multiway: true}
	multiway := 0
	var trees []*tree.Tree
	for _, ps := range spec.Parties {
		d := readData(t, filepath.Join(exampleDir, ps.Tables[0].Path), s)
		want := tree.Grow(d, gp, ps.Name, ps.Tables[0].Name)
		if _, err := want.ReleasePrune(k); err != nil {
			t.Fatal(err)
		}
		got := pub[ps.Name]
		if diff := tree.Diff(want, got); diff != "" {
			t.Errorf("party %s published another tree than its own, pruned: %s", ps.Name, diff)
		}
		if got.Multiway() {
			multiway++
		}
		for _, r := range leafRows(got.Root) {
			if r < k {
				t.Errorf("party %s published a leaf of %d rows, release_k %d", ps.Name, r, k)
			}
		}
		trees = append(trees, got)
	}
	if multiway == 0 {
		t.Error("no published tree has a multiway split")
	}
	again, _ := pgen.Global(trees, s, gp, seed)
	if diff := tree.Diff(again, global); diff != "" {
		t.Errorf("the global tree is not Global over the published trees: %s", diff)
	}
	// The leakage profile is unchanged: one tree per party to the
	// coordinator, the joint seed's steps, control.
	sent := map[string]int{}
	for _, m := range rep.Sent {
		switch m.Disclosure {
		case wire.DiscloseGeneralised:
			sent[m.From]++
		case wire.DisclosePublicResult:
			if !job.IsSeedStep(job.Step{Phase: m.Message.Phase}) {
				t.Errorf("%s sent a public result of %s", m.From, m.Message.Phase)
			}
		case wire.DiscloseControl:
		default:
			t.Errorf("%s sent %s to %s as %s", m.From, m.Message.Type, m.To, m.Disclosure)
		}
	}
	for _, p := range spec.PartyNames() {
		if sent[p] != 1 {
			t.Errorf("party %s sent %d trees, want 1", p, sent[p])
		}
	}
}
