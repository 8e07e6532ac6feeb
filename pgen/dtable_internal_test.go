package pgen

import (
	"slices"
	"testing"
)

// TestMDLCuts: Fayyad and Irani's criterion by hand. Eight rows, four of
// each class apart at 4.5: gain 1 bit against (log2 7 + log2 7 − 2)/8 ≈
// 0.45, one cut; 1, 2, 3, 4 of classes 0, 1, 0, 1: the best gain, 0.311,
// is below (log2 3 + log2 7 − 2 + 2·0.918)/4 ≈ 1.06, no cut. Three runs of
// classes 0, 1, 0: of ten rows each, the best cut's gain 0.252 is below
// (log2 29 + log2 7 − 2·0.918 + 2)/30 ≈ 0.261, no cut; of twenty, the
// bound is 0.148, a cut, and on its side of 40 rows another (gain 1 bit
// against 0.152).
func TestMDLCuts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		xs    []float64
		class []int32
		want  []float64
	}{
		{"two runs", []float64{1, 2, 3, 4, 5, 6, 7, 8}, []int32{0, 0, 0, 0, 1, 1, 1, 1}, []float64{4.5}},
		{"alternating", []float64{1, 2, 3, 4}, []int32{0, 1, 0, 1}, nil},
		{"three runs of 10", seq(30), runs(10), nil},
		{"three runs of 20", seq(60), runs(20), []float64{20.5, 40.5}},
		{"constant", []float64{3, 3, 3, 3}, []int32{0, 1, 0, 1}, nil},
	} {
		if got := mdlCuts(c.xs, c.class, 2); !slices.Equal(got, c.want) {
			t.Errorf("%s: cuts %v, want %v", c.name, got, c.want)
		}
	}
}

// seq is 1, 2, ..., n.
func seq(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	return xs
}

// runs is n rows of class 0, n of class 1, n of class 0.
func runs(n int) []int32 {
	c := make([]int32, 3*n)
	for i := n; i < 2*n; i++ {
		c[i] = 1
	}
	return c
}
