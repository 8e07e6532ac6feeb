package anonymize

import (
	"fmt"
	"slices"
)

// The privacy hash table of Sun's thesis (ch. 2, §2.3–2.4): a level vector
// is checked by hashing every record's generalised QID tuple into a bucket
// that counts its records (and, extended, lists their sensitive values); the
// vector satisfies k (and the model) when every bucket does. Sun uses it to
// find the lowest satisfying level along one generalisation strategy (Algs.
// 1–4); MinimalFullDomain uses it to find every minimal satisfying vector of
// the lattice (Def. 2.5, read as "no other satisfying vector lies strictly
// below"). OptimalFullDomain is the fast search for the one vector of least
// NCP; this is the enumeration the thesis's counts of minimal tables need.

// HashTableSatisfies reports whether generalising every attribute of ds to
// levels gives classes of at least k records that satisfy sens (nil: none).
func HashTableSatisfies(ds *Dataset, levels []int, k int, sens *Coded) bool {
	buckets := map[string]int{}
	var count []int
	var hist []*Hist
	key := make([]byte, 0, 4*len(ds.Attrs))
	for r := 0; r < ds.N; r++ {
		key = key[:0]
		for a, at := range ds.Attrs {
			v := at.Tax.Ancestor(int(at.Leaf[r]), levels[a])
			key = append(key, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
		}
		b, ok := buckets[string(key)]
		if !ok {
			b = len(count)
			buckets[string(key)] = b
			count = append(count, 0)
			if sens != nil {
				hist = append(hist, sens.NewHist())
			}
		}
		count[b]++
		if sens != nil {
			sens.Add(hist[b], int32(r))
		}
	}
	for b, n := range count {
		if n < k || (sens != nil && !sens.OK(hist[b])) {
			return false
		}
	}
	return true
}

// MinimalFullDomain returns every minimal level vector that satisfies k
// and sens, in order of height then attribute order. Vectors are visited by
// height; one that dominates a minimal vector found earlier satisfies too
// (the conditions are monotone) and is not minimal, so it is not checked.
func MinimalFullDomain(ds *Dataset, k int, sens *Coded) ([][]int, error) {
	if k < 1 || k > ds.N {
		return nil, fmt.Errorf("%w: k = %d with %d records", ErrRequirement, k, ds.N)
	}
	radix := make([]int, len(ds.Attrs))
	size := 1
	for a, at := range ds.Attrs {
		radix[a] = at.Tax.MaxLevel() + 1
		size *= radix[a]
	}
	var all [][]int
	for i := range size {
		v := make([]int, len(radix))
		for a, r := range radix {
			v[a], i = i%r, i/r
		}
		all = append(all, v)
	}
	slices.SortStableFunc(all, func(x, y []int) int { return sum(x) - sum(y) })
	var minimal [][]int
	for _, v := range all {
		if slices.ContainsFunc(minimal, func(m []int) bool { return dominates(v, m) }) {
			continue
		}
		if HashTableSatisfies(ds, v, k, sens) {
			minimal = append(minimal, v)
		}
	}
	return minimal, nil
}

// StrategyLevel is Sun's Algorithms 1–4 along one generalisation strategy
// (a path of level vectors from the bottom up, each one step above the
// previous): the first position whose vector satisfies k and sens, or -1.
func StrategyLevel(ds *Dataset, strategy [][]int, k int, sens *Coded) int {
	for h, v := range strategy {
		if HashTableSatisfies(ds, v, k, sens) {
			return h
		}
	}
	return -1
}

func sum(v []int) int {
	s := 0
	for _, x := range v {
		s += x
	}
	return s
}

// dominates reports whether v ≥ m in every attribute.
func dominates(v, m []int) bool {
	for a := range v {
		if v[a] < m[a] {
			return false
		}
	}
	return true
}
