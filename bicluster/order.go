package bicluster

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/cohortdm/cohort/job"
)

// InitialColumns returns the shared random initial column order (Phoenix
// §3.1 starts from random ranks): every party derives the same permutation of 0..cols−1 from
// the job's seed with job.Rand, so no message carries it.
func InitialColumns(seed []byte, cols int) []int {
	return job.Rand(seed, "bicluster/initial-columns").Perm(cols)
}

// ranks inverts an order: ranks[order[k]] = k.
func ranks(order []int) []int {
	r := make([]int, len(order))
	for k, i := range order {
		r[i] = k
	}
	return r
}

// checkOrder verifies that order is a permutation of 0..n−1.
func checkOrder(what string, order []int, n int) error {
	if len(order) != n {
		return fmt.Errorf("%w: %s order has %d entries, want %d", ErrParams, what, len(order), n)
	}
	seen := make([]bool, n)
	for _, i := range order {
		if i < 0 || i >= n || seen[i] {
			return fmt.Errorf("%w: %s order is not a permutation of 0..%d", ErrParams, what, n-1)
		}
		seen[i] = true
	}
	return nil
}

// sortByBarycenter returns prev re-sorted by bary (ascending); ties, and
// the vertices without any edge (bary = +Inf, placed last), keep their
// order in prev, so the sort is deterministic.
func sortByBarycenter(prev []int, bary []float64) []int {
	out := slices.Clone(prev)
	slices.SortStableFunc(out, func(a, b int) int { return cmp.Compare(bary[a], bary[b]) })
	return out
}

// SortRows is the object layer of one crossing-minimisation iteration
// (Phoenix eq. (2), local at every party): each row's barycenter is the
// mean of its columns' ranks under colOrder weighted by its values, and
// rows are sorted by it starting from prevRows (nil: index order).
func SortRows(m *Matrix, colOrder, prevRows []int) ([]int, error) {
	if err := checkOrder("column", colOrder, m.Cols); err != nil {
		return nil, err
	}
	if prevRows == nil {
		prevRows = identity(m.Rows)
	}
	if err := checkOrder("row", prevRows, m.Rows); err != nil {
		return nil, err
	}
	colRank := ranks(colOrder)
	bary := make([]float64, m.Rows)
	for r := range m.Rows {
		var num, den float64
		for c, x := range m.Row(r) {
			w := weight(x)
			num += w * float64(colRank[c])
			den += w
		}
		bary[r] = math.Inf(1)
		if den > 0 {
			bary[r] = num / den
		}
	}
	return sortByBarycenter(prevRows, bary), nil
}

func identity(n int) []int {
	o := make([]int, n)
	for i := range o {
		o[i] = i
	}
	return o
}
