package attack

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cohortdm/cohort/transform"
	"github.com/cohortdm/cohort/tree"
)

// fig7Key is Bu et al.'s Figure 7 as a key: values 1..44 and their
// recodings, pieces r1..r4, with r4 moved up by 10 (to 41, 43, 45) to
// meet the spacing rule package transform's keys obey.
func fig7Key(t *testing.T) *transform.ColumnKey {
	t.Helper()
	k, err := transform.ParseKey([]byte(`{"format":"cohort-transform-key","version":1,"table":"D","class":"C","rows":13,"columns":[
		{"name":"A","kind":"numeric","direction":"monotone",
		 "pieces":[{"start":0,"len":3,"mono":true},{"start":3,"len":2,"mono":true},{"start":5,"len":1,"mono":false},{"start":6,"len":3,"mono":true}],
		 "values":[1,2,15,27,28,29,42,43,44],"images":[6,10,8,19,18,27,45,41,43]},
		{"name":"C","kind":"class"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return k.Columns[0]
}

// §5.4's worked example (research notes §A.7.5): in Figure 7's recoded
// domain {6, 8, 10, 18, 19, 27, 31, 33, 35}, ν′ = 27 has 5 values below
// and 3 above; in [1, 44] the sorting attack places it in R_g = [6, 41],
// 36 integers; with ρ = 2 around f⁻¹(27) = 29, R_ρ = [27, 31]: P = 5/36.
func TestSortingProbWorkedExample(t *testing.T) {
	if p := SortingProb(5, 3, 1, 44, 29, 2); math.Abs(p-5.0/36) > 1e-15 {
		t.Fatalf("P = %v, want 5/36", p)
	}
	if p := SortingProb(0, 0, 1, 10, 50, 2); p != 0 {
		t.Fatalf("outside: %v", p)
	}
}

// The sorting attack with the true minimum cracks exactly the values
// whose rank equals their offset from the minimum: 1 and 2 of Figure 7
// are permuted (f(1) < f(15) < f(2)), so only 1 and, by luck, nothing
// else below the first gap.
func TestSorting(t *testing.T) {
	c := fig7Key(t)
	g := Sorting(c, 1, 1, transform.Monotone)
	got := Cracked(c, g, 0)
	// ranks: 1->0 (guess 1, true), 2->2 (guess 3), 15->1 (guess 2), ...
	want := []bool{true, false, false, false, false, false, false, false, false}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("cracked %v, want %v", got, want)
		}
	}
	anti := Sorting(c, 1, 1, transform.AntiMonotone)
	if anti(c.Images[0]) != 1+8-0 {
		t.Fatalf("anti: %v", anti(c.Images[0]))
	}
}

// Each fit through knowledge points on a line reproduces the line; the
// polyline and the spline pass through their points; the spline is
// linear beyond the ends; no point means the face value.
func TestFits(t *testing.T) {
	line := []Point{{0, 3}, {2, 7}, {5, 13}, {9, 21}}
	for _, m := range []Method{LinReg, Polyline, Spline} {
		g := Fit(m, line)
		for _, y := range []float64{-4, 0, 1, 3.3, 9, 20} {
			if math.Abs(g(y)-(3+2*y)) > 1e-9 {
				t.Fatalf("%v: g(%v) = %v", m, y, g(y))
			}
		}
	}
	bent := []Point{{0, 0}, {1, 5}, {2, 4}, {4, 10}, {4, 12}}
	for _, m := range []Method{Polyline, Spline} {
		g := Fit(m, bent)
		for _, p := range []Point{{0, 0}, {1, 5}, {2, 4}, {4, 11}} {
			if math.Abs(g(p.Image)-p.Orig) > 1e-9 {
				t.Fatalf("%v misses %v: %v", m, p, g(p.Image))
			}
		}
	}
	s := Fit(Spline, bent)
	d1, d2 := s(6)-s(5), s(8)-s(7)
	if math.Abs(d1-d2) > 1e-9 {
		t.Fatalf("spline not linear beyond the end: %v %v", d1, d2)
	}
	if Fit(Polyline, nil)(7) != 7 || Fit(LinReg, []Point{{1, 10}})(3) != 12 {
		t.Fatal("face value or one point")
	}
}

// Good knowledge points are within ρ of the truth, bad ones beyond 5ρ, at
// distinct values.
func TestKnowledgePoints(t *testing.T) {
	c := fig7Key(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		kps := KnowledgePoints(c, 4, 2, 1.5, rng)
		seen := map[float64]bool{}
		for k, p := range kps {
			truth, _ := c.Decode(p.Image)
			off := math.Abs(p.Orig - truth)
			if seen[p.Image] || (k < 4 && off > 1.5) || (k >= 4 && off <= 7.5) {
				t.Fatalf("point %d: %v off %v", k, p, off)
			}
			seen[p.Image] = true
		}
	}
	if len(KnowledgePoints(c, 20, 0, 1, rng)) != 9 {
		t.Fatal("more points than values")
	}
}

// The measures on hand-made cases.
func TestMeasures(t *testing.T) {
	l := []bool{true, true, false, false, true, false}
	s := []bool{true, false, true, false, false, false}
	p := []bool{true, false, true, true, false, false}
	c := Combine(l, s, p)
	// Values: PSL, L, PS, P, L, none.
	if math.Abs(c.Union-5.0/6) > 1e-12 || math.Abs(c.TwoOrMore-2.0/6) > 1e-12 || math.Abs(c.Expected-(3+2+3)/18.0) > 1e-12 {
		t.Fatalf("combination %+v", c)
	}
	if math.Abs(c.Regions["PSL"]-1.0/6) > 1e-12 || math.Abs(c.Regions["L"]-2.0/6) > 1e-12 || c.Regions["S"] != 0 {
		t.Fatalf("regions %v", c.Regions)
	}
	rank := [][]int32{{0, 1, 1, 2}, {0, 0, 1, 1}}
	cracked := [][]bool{{true, true, false}, {true, false}}
	if r := SubspaceRisk(rank, cracked); r != 0.5 { // rows 0 and 1
		t.Fatalf("subspace %v", r)
	}
	if Median([]float64{3, 1, 2}) != 2 || Median([]float64{4, 1, 2, 3}) != 2.5 {
		t.Fatal("median")
	}
}

// A path is cracked when every numeric test on it is; categorical tests
// are in clear.
func TestPaths(t *testing.T) {
	leaf := func() *tree.Node { return &tree.Node{Counts: []uint64{1}} }
	mk := func(a, b float64) *tree.Tree {
		return &tree.Tree{Labels: []string{"x"}, Root: &tree.Node{Counts: []uint64{3},
			Split: &tree.Split{Column: "A", Op: tree.OpLE, Num: a},
			Left:  leaf(),
			Right: &tree.Node{Counts: []uint64{2}, Split: &tree.Split{Column: "B", Op: tree.OpLE, Num: b}, Left: leaf(),
				Right: &tree.Node{Counts: []uint64{1}, Split: &tree.Split{Column: "K", Op: tree.OpEQ, Cat: "k"}, Left: leaf(), Right: leaf()}}}}
	}
	mined, decoded := mk(100, 50), mk(10, 5)
	crack := map[string]func(float64) float64{"A": func(y float64) float64 { return y / 10 }, "B": func(y float64) float64 { return y }}
	ps, err := Paths(mined, decoded, crack, map[string]float64{"A": 0.5, "B": 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []Path{{1, true}, {2, false}, {3, false}, {3, false}}
	for i := range want {
		if ps[i] != want[i] {
			t.Fatalf("paths %v, want %v", ps, want)
		}
	}
}
