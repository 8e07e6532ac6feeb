package tree

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
)

// TestAddErrs checks C4.5's estimate against values worked by hand from
// the formulas in AddErrs' doc (z = 0.6925 at CF 0.25).
func TestAddErrs(t *testing.T) {
	cases := []struct{ n, e, want float64 }{
		{2, 0, 1.0},                             // 2·(1 − 0.25^(1/2))
		{6, 0, 6 * (1 - math.Pow(0.25, 1.0/6))}, // ≈ 1.2378
		{8, 3, 1.4725},                          // N·p − E with p ≈ 0.55906
		{6, 3, 1.2686},
		{4, 1, 1.1894},
		{3, 3, 0}, // E + 0.5 >= N: 0.67·(N − E)
		{3, 2.6, 0.67 * 0.4},
	}
	for _, c := range cases {
		if got := AddErrs(c.n, c.e, DefaultCF); math.Abs(got-c.want) > 5e-4 {
			t.Errorf("AddErrs(%v, %v) = %.5f, want %.4f", c.n, c.e, got, c.want)
		}
	}
	if d := deviate(0.25); math.Abs(d-0.6925) > 1e-12 {
		t.Errorf("deviate(0.25) = %v, want 0.6925", d)
	}
	// 0 < E < 1 interpolates between E = 0 and E = 1.
	a0, a1 := AddErrs(10, 0, DefaultCF), AddErrs(10, 1, DefaultCF)
	if got := AddErrs(10, 0.5, DefaultCF); math.Abs(got-(a0+0.5*(a1-a0))) > 1e-12 {
		t.Errorf("AddErrs(10, 0.5) = %v", got)
	}
}

func leaf(c ...uint64) *Node { return &Node{Counts: c} }

func TestPrune(t *testing.T) {
	s := &Split{Party: "p", Table: "T", Column: "x", Op: OpLE, Num: 1.5}
	// A split that separates one stray case: ⟨10,1⟩ -> ⟨9,0⟩ + ⟨1,1⟩.
	// Leaf: 1 + AddErrs(11, 1) ≈ 2.6; subtree: AddErrs(9, 0) + (1 + AddErrs(2, 1))
	// ≈ 1.4 + 1.67 = 3.1, so it is pruned.
	tr := &Tree{Labels: []string{"a", "b"}, Root: &Node{Split: s, Counts: []uint64{10, 1}, Left: leaf(9, 0), Right: leaf(1, 1)}}
	if n := tr.Prune(DefaultCF); n != 1 || !tr.Root.IsLeaf() {
		t.Fatalf("pruned %d, root leaf %v", n, tr.Root.IsLeaf())
	}
	// A clean split of many cases is kept: ⟨50,50⟩ -> ⟨50,0⟩ + ⟨0,50⟩.
	tr = &Tree{Labels: []string{"a", "b"}, Root: &Node{Split: s, Counts: []uint64{50, 50}, Left: leaf(50, 0), Right: leaf(0, 50)}}
	if n := tr.Prune(DefaultCF); n != 0 || tr.Root.IsLeaf() {
		t.Fatalf("pruned %d a clean split", n)
	}
}

func TestMajorityTies(t *testing.T) {
	if Majority([]uint64{3, 5, 5}) != 1 || Majority([]uint64{0, 0}) != 0 {
		t.Fatal("ties go to the smallest label")
	}
}

func TestJSON(t *testing.T) {
	in := `{"split":{"party":"exchange","table":"S","column":"type","op":"==","value":"buy"},"counts":{"no":12,"yes":30},"left":{"leaf":"yes","counts":{"no":1,"yes":28}},"right":{"leaf":"no","counts":{"no":11,"yes":2}}}`
	var tr Tree
	if err := json.Unmarshal([]byte(in), &tr); err != nil {
		t.Fatal(err)
	}
	if tr.Root.Split.Cat != "buy" || tr.Labels[1] != "yes" || tr.Root.Left.Counts[1] != 28 {
		t.Fatalf("decoded %+v", tr.Root)
	}
	out, err := tr.MarshalJSON()
	if err != nil || string(out) != in {
		t.Fatalf("round trip %s %v", out, err)
	}
	for _, bad := range []string{
		`{"split":{"op":"<","value":1},"counts":{"a":1},"left":{"leaf":"a","counts":{"a":1}},"right":{"leaf":"a","counts":{"a":0}}}`,
		`{"split":{"op":"<=","value":"x"},"counts":{"a":1},"left":{"leaf":"a","counts":{"a":1}},"right":{"leaf":"a","counts":{"a":0}}}`,
		`{"split":{"op":"<=","value":1},"counts":{"a":1},"left":{"leaf":"a","counts":{"a":1}}}`,
		`{"leaf":"a","counts":{"a":1},"left":{"leaf":"a","counts":{"a":1}}}`,
		`{"leaf":"a","counts":{"a":1},"split":{"op":"<=","value":1}}`,
		`{"split":{"op":"<=","value":1},"counts":{"a":1},"left":{"leaf":"a","counts":{"b":1}},"right":{"leaf":"a","counts":{"a":0}}}`,
		`[1]`,
		`{"leaf":"a"}`, // no label at all: found by FuzzUnmarshal (it panicked the encoder)
	} {
		var tr Tree
		err := json.Unmarshal([]byte(bad), &tr)
		if !errors.Is(err, ErrFormat) {
			t.Errorf("Unmarshal(%s) = %v, want ErrFormat", bad, err)
		}
	}
}

// FuzzUnmarshal: a tree file from elsewhere never panics the decoder, and
// what decodes encodes back to a tree that decodes the same.
func FuzzUnmarshal(f *testing.F) {
	f.Add([]byte(`{"split":{"party":"p","table":"T","column":"x","op":"<=","value":1.5},"counts":{"a":3,"b":1},"left":{"leaf":"a","counts":{"a":3,"b":0}},"right":{"leaf":"b","counts":{"a":0,"b":1}}}`))
	f.Add([]byte(`{"leaf":"a","counts":{"a":1}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var tr Tree
		if err := json.Unmarshal(b, &tr); err != nil {
			return
		}
		out, err := tr.MarshalJSON()
		if err != nil {
			return // e.g. a leaf without labels
		}
		var back Tree
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("re-decode %s: %v", out, err)
		}
		if d := Diff(&tr, &back); d != "" {
			t.Fatalf("round trip differs: %s", d)
		}
	})
}

// TestReleasePrune works ATP by hand on a two-level tree: with k = 4 the
// two leaves of 2 and 3 rows merge into their parents; with k = 10 the
// right parent (8 rows) then fails too and the root is a leaf; with k = 21
// no pruning suffices.
func TestReleasePrune(t *testing.T) {
	s := &Split{Party: "p", Table: "T", Column: "x", Op: OpLE, Num: 1.5}
	build := func() *Tree {
		l := &Node{Split: s, Counts: []uint64{10, 2}, Left: leaf(2, 0), Right: leaf(8, 2)}
		r := &Node{Split: s, Counts: []uint64{3, 5}, Left: leaf(0, 5), Right: leaf(3, 0)}
		return &Tree{Labels: []string{"a", "b"}, Root: &Node{Split: s, Counts: []uint64{13, 7}, Left: l, Right: r}}
	}
	for _, c := range []struct {
		k              uint64
		pruned, leaves int
		err            error
	}{{1, 0, 4, nil}, {3, 1, 3, nil}, {4, 2, 2, nil}, {10, 3, 1, nil}, {20, 3, 1, nil}, {21, 3, 1, ErrAnonymity}} {
		tr := build()
		pruned, err := tr.ReleasePrune(c.k)
		_, leaves := tr.Size()
		if pruned != c.pruned || leaves != c.leaves || !errors.Is(err, c.err) {
			t.Errorf("k=%d: pruned %d, %d leaves, %v; want %d, %d, %v", c.k, pruned, leaves, err, c.pruned, c.leaves, c.err)
		}
		if err == nil && tr.PathK() < c.k {
			t.Errorf("k=%d: a leaf of %d rows is left", c.k, tr.PathK())
		}
	}
	if k := build().PathK(); k != 2 {
		t.Errorf("PathK = %d, want 2", k)
	}
}

// TestDiversityC: the paper's example path, 14 rows of class 1 and 3 each
// of classes 2 and 3, is (5, 3)-diverse (14 < 5·3); exactly, c must exceed
// 14/3. A leaf with one class present is (c, 2)-diverse for no c.
func TestDiversityC(t *testing.T) {
	tr := &Tree{Labels: []string{"a", "b", "c"}, Root: leaf(3, 14, 3)}
	if c := tr.DiversityC(3); math.Abs(c-14.0/3) > 1e-12 || !(5 > c) {
		t.Errorf("DiversityC(3) = %v, want 14/3", c)
	}
	if c := tr.DiversityC(2); math.Abs(c-14.0/6) > 1e-12 {
		t.Errorf("DiversityC(2) = %v, want 14/6", c)
	}
	if c := (&Tree{Labels: []string{"a", "b"}, Root: leaf(0, 4)}).DiversityC(2); !math.IsInf(c, 1) {
		t.Errorf("a pure leaf: DiversityC(2) = %v, want +Inf", c)
	}
}

// TestPathDiversePaper: the paper's worked example (§3.1): a path of 14
// hits and 6 misses over three classes is (5, 3)-diversified, 14 < 5·6/2;
// not for c = 4 (14 >= 12), and not for l = 3 with one miss (l > miss + 1).
func TestPathDiversePaper(t *testing.T) {
	for _, c := range []struct {
		hit, miss uint64
		c         float64
		l         int
		want      bool
	}{{14, 6, 5, 3, true}, {14, 6, 4, 3, false}, {14, 1, 5, 3, false}, {14, 6, 5, 1, false}, {2, 1, 3, 2, true}} {
		if got := PathDiverse(c.hit, c.miss, c.c, c.l); got != c.want {
			t.Errorf("PathDiverse(%d, %d, %v, %d) = %v, want %v", c.hit, c.miss, c.c, c.l, got, c.want)
		}
	}
}

// TestPruneToDiversity works ATP for (c, 2)-diversity by hand on
// TestReleasePrune's tree: with c = 6 the two pure leaves merge into their
// parents ((10, 2) and (3, 5), both diverse: 10 < 6·2, 5 < 6·3); with c = 5
// the left parent (10 < 5·2 fails) merges into the root (13 < 5·7); with
// c = 1.5 even the root fails. And the paper's example path (14, 3, 3)
// meets (5, 3) but not (4, 3).
func TestPruneToDiversity(t *testing.T) {
	s := &Split{Party: "p", Table: "T", Column: "x", Op: OpLE, Num: 1.5}
	build := func() *Tree {
		l := &Node{Split: s, Counts: []uint64{10, 2}, Left: leaf(2, 0), Right: leaf(8, 2)}
		r := &Node{Split: s, Counts: []uint64{3, 5}, Left: leaf(0, 5), Right: leaf(3, 0)}
		return &Tree{Labels: []string{"a", "b"}, Root: &Node{Split: s, Counts: []uint64{13, 7}, Left: l, Right: r}}
	}
	for _, c := range []struct {
		c              float64
		pruned, leaves int
		err            error
	}{{6, 2, 2, nil}, {5, 3, 1, nil}, {1.5, 3, 1, ErrAnonymity}} {
		tr := build()
		pruned, err := tr.PruneTo(Requirement{C: c.c, L: 2})
		_, leaves := tr.Size()
		if pruned != c.pruned || leaves != c.leaves || !errors.Is(err, c.err) {
			t.Errorf("c=%v: pruned %d, %d leaves, %v; want %d, %d, %v", c.c, pruned, leaves, err, c.pruned, c.leaves, c.err)
		}
		if err == nil && !(tr.DiversityC(2) < c.c) {
			t.Errorf("c=%v: DiversityC(2) = %v after pruning", c.c, tr.DiversityC(2))
		}
	}
	if r := (Requirement{C: 5, L: 3}); !r.Holds([]uint64{3, 14, 3}) {
		t.Error("the paper's path (14, 3, 3) is not (5, 3)-diverse")
	}
	if r := (Requirement{C: 4, L: 3}); r.Holds([]uint64{3, 14, 3}) {
		t.Error("the paper's path (14, 3, 3) is (4, 3)-diverse")
	}
	if r := (Requirement{K: 21, C: 5, L: 3}); r.Holds([]uint64{3, 14, 3}) {
		t.Error("a path of 20 rows meets k = 21")
	}
}
