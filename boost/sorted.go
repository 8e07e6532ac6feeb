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

// keyed is a value and the small integer key groupByKey groups it by.
type keyed[V any] struct {
	key int
	val V
}

// groupByKey returns the values of items grouped by key (each below
// keys), each group in the order its items came, as one slice: group k is
// flat[start[k]:start[k+1]] (group). A counting sort: the up and down
// passes and entryRows group a level's rows by join value or entry this
// way, where a map per value or entry had been most of their time on a9a.
func groupByKey[V any](items []keyed[V], keys int) (flat []V, start []int) {
	start = make([]int, keys+1)
	for _, it := range items {
		start[it.key+1]++
	}
	for k := range keys {
		start[k+1] += start[k]
	}
	flat, next := make([]V, len(items)), slices.Clone(start[:keys])
	for _, it := range items {
		flat[next[it.key]], next[it.key] = it.val, next[it.key]+1
	}
	return flat, start
}

// group is group k of groupByKey's flat and start, its capacity cut so
// that appending to it cannot reach the next group.
func group[V any](flat []V, start []int, k int) []V {
	return flat[start[k]:start[k+1]:start[k+1]]
}
