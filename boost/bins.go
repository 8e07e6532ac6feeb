package boost

import (
	"slices"
	"sort"
)

// Cuts returns the bin boundaries of a numeric column over a table's own
// rows: with at most bins distinct values, every distinct value but the
// largest; otherwise the values at ranks ⌈k·n/bins⌉−1 (k = 1..bins−1) of
// the sorted column, without repeats and without the largest value. A
// value x falls in bin b = the number of cuts below x, so "bin <= b" is
// the predicate x <= cuts[b].
func Cuts(col []float64, bins int) []float64 {
	xs := slices.Clone(col)
	slices.Sort(xs)
	if len(xs) == 0 {
		return nil
	}
	top := xs[len(xs)-1]
	d := slices.Compact(slices.Clone(xs))
	if len(d) <= bins {
		return d[:len(d)-1]
	}
	n := len(xs)
	var cuts []float64
	for k := 1; k < bins; k++ {
		i := (k*n+bins-1)/bins - 1
		c := xs[i]
		if c == top || (len(cuts) > 0 && cuts[len(cuts)-1] == c) {
			continue
		}
		cuts = append(cuts, c)
	}
	return cuts
}

// Bin is the bin of x under cuts.
func Bin(cuts []float64, x float64) int { return sort.SearchFloat64s(cuts, x) }
