package pgen

import (
	"errors"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/tree"
)

// TestCheckTreeMultiway: the coordinator takes a multiway tree only with
// params.multiway, naming the party and the param otherwise; with it, a
// multiway split on a numeric attribute, counts that are not the
// branches' sums, or a small leaf are refused, and no error names a value.
func TestCheckTreeMultiway(t *testing.T) {
	t.Parallel()
	cfg, err := parse(exampleSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	ok := func() *tree.Tree {
		s := &tree.Split{Party: "east", Table: "east", Column: "region", Op: tree.OpIn}
		return &tree.Tree{Labels: []string{"high", "low"}, Root: &tree.Node{Split: s, Counts: []uint64{40, 60}, Branches: []tree.Branch{
			{Values: []string{"east", "north"}, Child: &tree.Node{Counts: []uint64{10, 50}}},
			{Values: []string{"south"}, Child: &tree.Node{Counts: []uint64{30, 10}}},
		}}}
	}
	b, err := ok().MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := checkTree(b, cfg, "east"); !errors.Is(err, tree.ErrMultiway) || !strings.Contains(err.Error(), "east's") || !strings.Contains(err.Error(), "params.multiway") {
		t.Fatalf("without params.multiway: %v", err)
	}
	cfg.p.Multiway = true
	for _, c := range []struct {
		name, want string
		edit       func(*tree.Tree)
	}{
		{"fine", "", func(*tree.Tree) {}},
		{"numeric", "other kind's operator", func(t *tree.Tree) { t.Root.Split.Column = "bmi" }},
		{"counts", "not its children's sums", func(t *tree.Tree) { t.Root.Counts[1]++ }},
		{"small leaf", "does not meet params.release_k", func(t *tree.Tree) {
			t.Root.Counts, t.Root.Branches[1].Child.Counts = []uint64{15, 53}, []uint64{5, 3}
		}},
	} {
		tr := ok()
		c.edit(tr)
		b, err := tr.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		got, err := checkTree(b, cfg, "east")
		switch {
		case c.want == "" && (err != nil || !got.Multiway()):
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		case err != nil && (strings.Contains(err.Error(), "north") || strings.Contains(err.Error(), "south")):
			t.Errorf("%s: the error holds a value: %v", c.name, err)
		}
	}
}
