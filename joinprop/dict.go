package joinprop

import (
	"cmp"
	"slices"
)

// DictLimit is the number of distinct values up to which DictRank finds a
// column's distinct values with a hash map; past it (a column of mostly
// distinct values) sorting a copy is cheaper.
const DictLimit = 1 << 16

// DictRank dictionary-encodes xs: it returns the sorted distinct values
// and writes each value's rank among them to rank (len(rank) == len(xs)).
// Values compare as Go's == and cmp.Compare do (so for float64, -0 == 0;
// NaN never occurs: tables reject it). Columns with few distinct values,
// the common case for join keys, class labels and categorical attributes,
// cost one map look-up per row instead of a sort of the whole column.
func DictRank[T cmp.Ordered](xs []T, rank []int32) []T {
	m := make(map[T]int32)
	var d []T
	for r, x := range xs {
		id, ok := m[x]
		if !ok {
			if len(d) >= DictLimit {
				return sortRank(xs, rank)
			}
			id = int32(len(d))
			m[x] = id
			d = append(d, x)
		}
		rank[r] = id
	}
	order := make([]int32, len(d))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(d[a], d[b]) })
	remap := make([]int32, len(d))
	sorted := make([]T, len(d))
	for pos, id := range order {
		remap[id] = int32(pos)
		sorted[pos] = d[id]
	}
	for r, id := range rank {
		rank[r] = remap[id]
	}
	return sorted
}

// sortRank is DictRank by sorting a copy of xs.
func sortRank[T cmp.Ordered](xs []T, rank []int32) []T {
	d := slices.Clone(xs)
	slices.Sort(d)
	d = slices.Compact(d)
	for r, x := range xs {
		k, _ := slices.BinarySearch(d, x)
		rank[r] = int32(k)
	}
	return d
}
