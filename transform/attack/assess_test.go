package attack

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/transform"
	"github.com/cohortdm/cohort/tree"
)

// AssessColumn on Figure 7's key (values 1..44, width 44) at ρ = 2 (2/44
// of the width), worked by hand: the face value cracks 29 (image 27), 43
// (41) and 44 (43): 3/9; the median distinct value 28 cracks 27, 28, 29:
// 3/9; the worst-case sorting attack maps the recoded ranks 0..8 to
// 1..9, exactly right for 1 only (1/9) and within 2 for 2 too (2/9); its
// crack probability is the mean of §5.4's P over the nine values with
// their ranks (1:0, 2:2, 15:1, 27:4, 28:3, 29:5, 42:8, 43:6, 44:7), of
// which 29's is the worked example's 5/36. An expert with a good point
// at every value cracks them all with any fit.
func TestAssessColumnFigure7(t *testing.T) {
	c := fig7Key(t)
	o := Options{Good: 9, Rho: 2.0 / 44, Trials: 5, Seed: 1}
	r, err := AssessColumn(c, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.Rho-2) > 1e-12 || r.FaceValue != 3.0/9 || r.Constant != 3.0/9 || r.SortingExact != 1.0/9 || r.Sorting != 2.0/9 {
		t.Errorf("ρ %v face %v constant %v sorting %v / %v", r.Rho, r.FaceValue, r.Constant, r.SortingExact, r.Sorting)
	}
	rank := map[float64]int{1: 0, 2: 2, 15: 1, 27: 4, 28: 3, 29: 5, 42: 8, 43: 6, 44: 7}
	want := 0.0
	for v, k := range rank {
		want += SortingProb(k, 8-k, 1, 44, v, 2) / 9
	}
	if math.Abs(r.SortingProb-want) > 1e-12 || SortingProb(5, 3, 1, 44, 29, 2) != 5.0/36 {
		t.Errorf("sorting probability %v, want %v", r.SortingProb, want)
	}
	if r.LinReg > 1 || r.Polyline != 1 || r.Spline != 1 || math.Abs(r.Union-1) > 1e-12 || math.Abs(r.Best()-1) > 1e-12 {
		t.Errorf("fits %+v", r)
	}
	// With rows 1, 1, 15 the constant guess is the row median 1: it
	// cracks 1 and 2 (2/9).
	r, err = AssessColumn(c, []int32{0, 0, 2}, Options{Rho: 2.0 / 44, Trials: 1})
	if err != nil || r.Constant != 2.0/9 {
		t.Errorf("row-median guess %v, %v", r.Constant, err)
	}
	for _, bad := range []Options{{Rho: 0, Trials: 1}, {Rho: 1, Trials: 1}, {Rho: 0.1}, {Good: -1, Rho: 0.1, Trials: 1}} {
		if _, err := AssessColumn(c, nil, bad); !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// Subspace by sorting on Figure 7: rows on values 1, 1, 2 are all cracked
// within ρ = 2 (1 exactly, 2 guessed 3); rows on 1 and 15 half.
// ValueIndex refuses a value outside the key without printing it.
func TestSubspaceAndValueIndex(t *testing.T) {
	c := fig7Key(t)
	o := Options{Rho: 2.0 / 44, Trials: 3}
	for _, x := range []struct {
		rows []float64
		want float64
	}{{[]float64{1, 1, 2}, 1}, {[]float64{1, 15}, 0.5}} {
		rank, err := ValueIndex(c, x.rows)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Subspace([]*transform.ColumnKey{c}, [][]int32{rank}, []bool{true}, o)
		if err != nil || r != x.want {
			t.Errorf("rows %v: %v, %v", x.rows, r, err)
		}
	}
	if _, err := ValueIndex(c, []float64{1, 31337}); err == nil || strings.Contains(err.Error(), "31337") || !strings.Contains(err.Error(), "row 2") {
		t.Errorf("unknown value: %v", err)
	}
}

// PatternRisk on a one-split tree of Figure 7's column: mined "A <= 14"
// (between images 10 and 18), decoded "A <= 21" (between 15 and 27). A
// polyline through good points at every value guesses 15 ± 2 there: no
// path cracked at ρ = 2, both at ρ = 22.
func TestPatternRisk(t *testing.T) {
	key, err := transform.ParseKey([]byte(`{"format":"cohort-transform-key","version":1,"table":"D","class":"C","rows":13,"columns":[
		{"name":"A","kind":"numeric","direction":"monotone",
		 "pieces":[{"start":0,"len":3,"mono":true},{"start":3,"len":2,"mono":true},{"start":5,"len":1,"mono":false},{"start":6,"len":3,"mono":true}],
		 "values":[1,2,15,27,28,29,42,43,44],"images":[6,10,8,19,18,27,45,41,43]},
		{"name":"C","kind":"class"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	mk := func(v float64) *tree.Tree {
		leaf := func() *tree.Node { return &tree.Node{Counts: []uint64{1}} }
		return &tree.Tree{Labels: []string{"x"}, Root: &tree.Node{Counts: []uint64{2}, Split: &tree.Split{Column: "A", Op: tree.OpLE, Num: v}, Left: leaf(), Right: leaf()}}
	}
	for _, c := range []struct{ rho, want float64 }{{2.0 / 44, 0}, {22.0 / 44, 1}} {
		med, worst, paths, err := PatternRisk(mk(14), mk(21), key, Options{Good: 9, Rho: c.rho, Trials: 4, Seed: 2})
		if err != nil || paths != 2 || med != c.want || worst != c.want {
			t.Errorf("ρ share %v: median %v worst %v paths %d %v", c.rho, med, worst, paths, err)
		}
	}
}
