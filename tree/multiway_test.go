package tree

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// multi is a multiway node on column h with the given branches.
func multi(counts []uint64, branches ...Branch) *Node {
	return &Node{Split: &Split{Party: "p", Table: "T", Column: "h", Op: OpIn}, Counts: counts, Branches: branches}
}

func br(child *Node, values ...string) Branch { return Branch{Values: values, Child: child} }

// TestMultiwayJSON: a multiway tree round-trips through UnmarshalMultiway;
// Tree.UnmarshalJSON, which sjc, boost, transform and kde use, refuses it
// naming the node and ErrMultiway; malformed branches are refused.
func TestMultiwayJSON(t *testing.T) {
	bin := &Node{Split: &Split{Party: "p", Table: "T", Column: "x", Op: OpLE, Num: 2}, Counts: []uint64{3, 3}, Left: leaf(3, 0), Right: leaf(0, 3)}
	tr := &Tree{Labels: []string{"a", "b"}, Root: multi([]uint64{5, 4}, br(leaf(2, 0), "u", "v"), br(bin, "w"), br(leaf(0, 1), "z"))}
	b, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalMultiway(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(tr, back); d != "" {
		t.Fatalf("round trip: %s", d)
	}
	if !back.Multiway() {
		t.Error("Multiway() false")
	}
	var old Tree
	err = json.Unmarshal(b, &old)
	if !errors.Is(err, ErrMultiway) || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "root") {
		t.Fatalf("a binary reader: %v", err)
	}
	// A binary tree still reads both ways.
	bt := &Tree{Labels: []string{"a", "b"}, Root: bin}
	bb, _ := bt.MarshalJSON()
	if _, err := UnmarshalMultiway(bb); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(bb, &old); err != nil || old.Multiway() {
		t.Fatal(err)
	}
	bad := map[string]string{
		"one branch":      `{"split":{"column":"h","op":"in"},"counts":{"a":1},"branches":[{"values":["u"],"node":{"leaf":"a","counts":{"a":1}}}]}`,
		"value twice":     `{"split":{"column":"h","op":"in"},"counts":{"a":2},"branches":[{"values":["u"],"node":{"leaf":"a","counts":{"a":1}}},{"values":["u"],"node":{"leaf":"a","counts":{"a":1}}}]}`,
		"no values":       `{"split":{"column":"h","op":"in"},"counts":{"a":2},"branches":[{"values":[],"node":{"leaf":"a","counts":{"a":1}}},{"values":["v"],"node":{"leaf":"a","counts":{"a":1}}}]}`,
		"with left":       `{"split":{"column":"h","op":"in"},"counts":{"a":2},"left":{"leaf":"a","counts":{"a":1}},"branches":[{"values":["u"],"node":{"leaf":"a","counts":{"a":1}}},{"values":["v"],"node":{"leaf":"a","counts":{"a":1}}}]}`,
		"binary branches": `{"split":{"column":"x","op":"==","value":"u"},"counts":{"a":2},"left":{"leaf":"a","counts":{"a":1}},"right":{"leaf":"a","counts":{"a":1}},"branches":[]}`,
		"leaf branches":   `{"leaf":"a","counts":{"a":1},"branches":[]}`,
	}
	for name, j := range bad {
		if _, err := UnmarshalMultiway([]byte(j)); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestMultiwayLeaf: a row walks to the branch holding its value; a value
// no branch holds stops at the node and takes its majority.
func TestMultiwayLeaf(t *testing.T) {
	tr := &Tree{Labels: []string{"a", "b"}, Root: multi([]uint64{5, 4}, br(leaf(2, 0), "u", "v"), br(leaf(0, 3), "w"), br(leaf(3, 1), "z"))}
	walk := func(v string) *Node {
		return tr.Leaf(func(s *Split) bool { return s.Column == "h" && s.Holds(0, v) })
	}
	for v, want := range map[string]*Node{"u": tr.Root.Branches[0].Child, "v": tr.Root.Branches[0].Child, "w": tr.Root.Branches[1].Child, "q": tr.Root} {
		if got := walk(v); got != want {
			t.Errorf("%s reaches %v", v, got.Counts)
		}
	}
}

// TestATPMultiway works the paper's ATP (§3.2) by hand on a multiway
// root under recursive (3, 2)-diversity (d1 < 3·d2), every leaf the
// counts ⟨a, b⟩: a ⟨6,0⟩ and b ⟨5,1⟩ fail, c ⟨2,5⟩ passes, d is a split
// into ⟨4,2⟩ and ⟨2,4⟩, both passing. a is merged first with b, the
// other failing child (rule 1): ⟨11,1⟩ still fails; merged with c
// (⟨13,6⟩: 13 < 18) it passes, and so would it with d (⟨17,7⟩), but c
// has fewer rows (rule 2). The root keeps two branches, {a, b, c} and d
// with its subtree.
func TestATPMultiway(t *testing.T) {
	d := &Node{Split: &Split{Party: "p", Table: "T", Column: "x", Op: OpLE, Num: 1}, Counts: []uint64{6, 6}, Left: leaf(4, 2), Right: leaf(2, 4)}
	tr := &Tree{Labels: []string{"a", "b"}, Root: multi([]uint64{19, 12}, br(leaf(6, 0), "a"), br(leaf(5, 1), "b"), br(leaf(2, 5), "c"), br(d, "d"))}
	r := Requirement{K: 1, C: 3, L: 2}
	n, err := tr.PruneTo(r)
	if err != nil || n != 0 {
		t.Fatalf("PruneTo: %d, %v", n, err)
	}
	root := tr.Root
	if len(root.Branches) != 2 || !slices.Equal(root.Branches[0].Values, []string{"a", "b", "c"}) ||
		!slices.Equal(root.Branches[0].Child.Counts, []uint64{13, 6}) || root.Branches[1].Child != d || d.IsLeaf() {
		t.Fatalf("branches %v", root.Branches)
	}
	if c := tr.DiversityC(2); !(c < 3) {
		t.Errorf("DiversityC(2) = %v", c)
	}
	// Rule 3: under (2.6, 2) a ⟨10,0⟩ fails and b ⟨2,3⟩, c ⟨3,3⟩, e ⟨3,4⟩
	// pass, but no merge of a with one of them does (⟨12,3⟩, ⟨13,3⟩,
	// ⟨13,4⟩): a takes the smallest, b; then ⟨12,3⟩ with c (⟨15,6⟩: 15 <
	// 15.6) or with e (⟨15,7⟩) passes, and c is the smaller. Taking e first
	// would have kept c instead.
	tr = &Tree{Labels: []string{"a", "b"}, Root: multi([]uint64{18, 10}, br(leaf(10, 0), "a"), br(leaf(2, 3), "b"), br(leaf(3, 3), "c"), br(leaf(3, 4), "e"))}
	if n, err := tr.PruneTo(Requirement{K: 1, C: 2.6, L: 2}); err != nil || n != 0 {
		t.Fatalf("PruneTo: %d, %v", n, err)
	}
	if bs := tr.Root.Branches; len(bs) != 2 || !slices.Equal(bs[0].Values, []string{"a", "b", "c"}) || !slices.Equal(bs[1].Values, []string{"e"}) {
		t.Fatalf("branches %v", bs)
	}
	// Every merge leaves one branch: the root becomes a leaf.
	tr = &Tree{Labels: []string{"a", "b"}, Root: multi([]uint64{12, 9}, br(leaf(6, 0), "a"), br(leaf(2, 5), "c"), br(leaf(4, 4), "e"))}
	if n, err := tr.PruneTo(Requirement{K: 1, C: 1.5, L: 2}); err != nil || n != 1 || !tr.Root.IsLeaf() {
		t.Fatalf("PruneTo: %d, %v, root leaf %v", n, err, tr.Root.IsLeaf())
	}
}

// TestATPMultiwayDeep: a multiway node below the root whose children all
// fail becomes a leaf, which then fails at its parent and is merged with
// a sibling there; a k-anonymity requirement merges the two small leaves
// together (rule 1) and keeps the rest; a root that fails as a whole is
// ErrAnonymity.
func TestATPMultiwayDeep(t *testing.T) {
	inner := multi([]uint64{3, 0}, br(leaf(2, 0), "x"), br(leaf(1, 0), "y"))
	inner.Split.Column = "g"
	big := multi([]uint64{10, 10}, br(leaf(10, 0), "x"), br(leaf(0, 10), "y"))
	big.Split.Column = "g"
	tr := &Tree{Labels: []string{"a", "b"}, Root: multi([]uint64{15, 13}, br(inner, "u"), br(big, "v"), br(leaf(2, 3), "w"))}
	n, err := tr.PruneTo(Requirement{K: 6})
	if err != nil {
		t.Fatal(err)
	}
	// inner's leaves (2 and 1 rows) merge into a leaf of 3 (1 node), which
	// fails and merges with w (the other failing child): ⟨5,3⟩ passes.
	if n != 1 || len(tr.Root.Branches) != 2 || !slices.Equal(tr.Root.Branches[0].Values, []string{"u", "w"}) ||
		!slices.Equal(tr.Root.Branches[0].Child.Counts, []uint64{5, 3}) || tr.Root.Branches[1].Child != big {
		t.Fatalf("pruned %d, branches %v", n, tr.Root.Branches)
	}
	if k := tr.PathK(); k != 8 {
		t.Errorf("PathK %d", k)
	}
	tr = &Tree{Labels: []string{"a", "b"}, Root: multi([]uint64{3, 1}, br(leaf(3, 0), "u"), br(leaf(0, 1), "v"))}
	if _, err := tr.PruneTo(Requirement{K: 5}); !errors.Is(err, ErrAnonymity) {
		t.Fatalf("err %v", err)
	}
}

// TestPruneMultiway: C4.5's pessimistic pruning sums the leaf errors over
// every branch: three branches ⟨4,0⟩ ⟨0,1⟩ ⟨3,0⟩ err 1.17 + 0.75 + 1.11 =
// 3.03 as a subtree, 1 + AddErrs(8, 1) = 2.40 as a leaf: pruned.
func TestPruneMultiway(t *testing.T) {
	tr := &Tree{Labels: []string{"a", "b"}, Root: multi([]uint64{7, 1}, br(leaf(4, 0), "u"), br(leaf(0, 1), "v"), br(leaf(3, 0), "w"))}
	if n := tr.Prune(DefaultCF); n != 1 || !tr.Root.IsLeaf() || tr.Root.Branches != nil {
		t.Fatalf("pruned %d", n)
	}
}

// TestHitMiss: the paper's path check (§3.1) on its worked example, a
// path of 14 rows of class 1 and 6 of classes 2 and 3, is (5, 3)-diverse
// (14 < 5·6/2) whatever the 6 are, where the exact check holds for ⟨14,
// 3, 3⟩ and not for ⟨14, 5, 1⟩ (14 < 5·1 fails); SpreadMisses publishes
// ⟨14, 3, 3⟩ for both, and keeps the majority where a remainder is spread.
func TestHitMiss(t *testing.T) {
	paper := Requirement{K: 1, C: 5, L: 3, HitMiss: true}
	exact := Requirement{K: 1, C: 5, L: 3}
	for _, c := range [][]uint64{{14, 3, 3}, {14, 5, 1}} {
		if !paper.Holds(c) {
			t.Errorf("the paper's check refuses %v", c)
		}
	}
	if !exact.Holds([]uint64{14, 3, 3}) || exact.Holds([]uint64{14, 5, 1}) {
		t.Error("the exact check")
	}
	if paper.Holds([]uint64{20, 1, 0}) { // miss 1 < l − 1
		t.Error("a path of one miss is not 3-diverse")
	}
	tr := &Tree{Labels: []string{"a", "b", "c"}, Root: multi([]uint64{16, 9, 5},
		br(leaf(14, 5, 1), "u"), br(leaf(2, 3, 3), "v"), br(leaf(0, 1, 1), "w"))}
	tr.SpreadMisses()
	want := [][]uint64{{14, 3, 3}, {2, 3, 3}, {0, 1, 1}} // the remainders go after the majority
	for i, b := range tr.Root.Branches {
		if !slices.Equal(b.Child.Counts, want[i]) || Majority(b.Child.Counts) != Majority(want[i]) {
			t.Errorf("branch %d: %v, want %v", i, b.Child.Counts, want[i])
		}
	}
	if !slices.Equal(tr.Root.Counts, []uint64{16, 7, 7}) {
		t.Errorf("root %v", tr.Root.Counts)
	}
}

// FuzzUnmarshalMultiway: what UnmarshalMultiway accepts and MarshalJSON
// writes reads back the same.
func FuzzUnmarshalMultiway(f *testing.F) {
	f.Add([]byte(`{"split":{"party":"p","table":"T","column":"h","op":"in"},"counts":{"a":3,"b":1},"branches":[{"values":["u","v"],"node":{"leaf":"a","counts":{"a":3,"b":0}}},{"values":["w"],"node":{"leaf":"b","counts":{"a":0,"b":1}}}]}`))
	f.Add([]byte(`{"leaf":"a","counts":{"a":1}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := UnmarshalMultiway(b)
		if err != nil {
			return
		}
		out, err := tr.MarshalJSON()
		if err != nil {
			return
		}
		back, err := UnmarshalMultiway(out)
		if err != nil {
			t.Fatalf("re-decode %s: %v", out, err)
		}
		if d := Diff(tr, back); d != "" {
			t.Fatalf("round trip differs: %s", d)
		}
	})
}
