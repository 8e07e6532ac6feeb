package boost

import "slices"

// finder looks join values up in a sorted set (an edge's values, its
// intersection, a first level's values) in one pass when they come in
// increasing order, as every summary lists them: each lookup gallops from
// where the last one ended, so a level's n values against a set of m cost
// O(n log(m/n)) comparisons rather than n·log m, and the common case, the
// whole set in order, one comparison or two a value. Values out of order
// (a peer's, which must not be trusted to keep it) are looked up by binary
// search: the answers are those of slices.BinarySearch either way.
type finder struct {
	set  []string
	at   int    // every set[:at] is below prev
	prev string // the last value looked up in order
	any  bool   // whether prev is set
}

// newFinder returns a finder over set, sorted ascending.
func newFinder(set []string) *finder { return &finder{set: set} }

// find is slices.BinarySearch(f.set, v).
func (f *finder) find(v string) (int, bool) {
	if f.any && v < f.prev {
		return slices.BinarySearch(f.set, v)
	}
	f.prev, f.any = v, true
	// Gallop: the first index at or after f.at whose value is not below v.
	lo, step := f.at, 1
	for lo+step <= len(f.set) && f.set[lo+step-1] < v {
		lo += step
		step *= 2
	}
	hi := min(lo+step, len(f.set))
	j, ok := slices.BinarySearch(f.set[lo:hi], v)
	f.at = lo + j
	return f.at, ok
}
