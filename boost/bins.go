package boost

import (
	"slices"
	"sort"

	"github.com/cohortdm/cohort/table"
)

// Cuts returns the bin boundaries of a numeric column over a table's own
// rows: with at most bins distinct values, every distinct value but the
// largest; otherwise the values at ranks ⌈k·n/bins⌉−1 (k = 1..bins−1) of
// the sorted column, without repeats and without the largest value. A
// value x falls in bin b = the number of cuts below x, so "bin <= b" is
// the predicate x <= cuts[b].
// The rule is table.RankCuts, over the column's distinct values and
// their counts, so that a table binned where it lives (grouped.go) is cut
// exactly as the loaded one.
func Cuts(col []float64, bins int) []float64 {
	xs := slices.Clone(col)
	slices.Sort(xs)
	var vals []float64
	var counts []int
	for _, x := range xs {
		if len(vals) > 0 && vals[len(vals)-1] == x {
			counts[len(counts)-1]++
			continue
		}
		vals, counts = append(vals, x), append(counts, 1)
	}
	return table.RankCuts(vals, counts, bins)
}

// Bin is the bin of x under cuts.
func Bin(cuts []float64, x float64) int { return sort.SearchFloat64s(cuts, x) }
