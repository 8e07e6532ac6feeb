package coherence

import (
	"math/bits"
	"sort"

	"github.com/cohortdm/cohort/internal/sorted"
)

// tidset is a set of transactions: a sorted list when sparse, a bitset over
// all n transactions when dense (more than one in 32), whichever is
// smaller.
type tidset struct {
	list []uint32
	bits []uint64
	sup  int
}

func listSet(l []uint32) tidset { return tidset{list: l, sup: len(l)} }

// dense reports whether sup transactions out of n are best kept as a bitset.
func dense(sup, n int) bool { return sup*32 > n }

// settle returns s in its better form for n transactions.
func settle(s tidset, n int) tidset {
	switch {
	case s.bits == nil && dense(s.sup, n):
		b := make([]uint64, (n+63)/64)
		for _, t := range s.list {
			b[t>>6] |= 1 << (t & 63)
		}
		return tidset{bits: b, sup: s.sup}
	case s.bits != nil && !dense(s.sup, n):
		l := make([]uint32, 0, s.sup)
		for w, x := range s.bits {
			for x != 0 {
				l = append(l, uint32(w<<6+bits.TrailingZeros64(x)))
				x &= x - 1
			}
		}
		return listSet(l)
	}
	return s
}

// cost estimates the work of intersecting a and b.
func intersectCost(a, b tidset) int {
	switch {
	case a.bits != nil && b.bits != nil:
		return len(a.bits)
	case a.bits != nil:
		return b.sup
	case b.bits != nil:
		return a.sup
	}
	return a.sup + b.sup
}

// intersect returns a ∩ b over n transactions, settled.
func intersect(a, b tidset, n int) tidset {
	switch {
	case a.bits != nil && b.bits != nil:
		out := make([]uint64, len(a.bits))
		c := 0
		for i, x := range a.bits {
			y := x & b.bits[i]
			out[i] = y
			c += bits.OnesCount64(y)
		}
		return settle(tidset{bits: out, sup: c}, n)
	case a.bits != nil:
		return filter(b.list, a.bits)
	case b.bits != nil:
		return filter(a.list, b.bits)
	}
	return listSet(mergeLists(a.list, b.list))
}

func filter(l []uint32, b []uint64) tidset {
	out := make([]uint32, 0, min(len(l), 64))
	for _, t := range l {
		if b[t>>6]&(1<<(t&63)) != 0 {
			out = append(out, t)
		}
	}
	return listSet(out)
}

// mergeLists intersects two sorted lists, galloping through the longer one
// when their sizes differ much.
func mergeLists(a, b []uint32) []uint32 {
	return appendMerge(make([]uint32, 0, min(len(a), len(b), 64)), a, b)
}

// appendMerge appends a ∩ b to out.
func appendMerge(out, a, b []uint32) []uint32 {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a)*16 < len(b) {
		for _, t := range a {
			i := sort.Search(len(b), func(i int) bool { return b[i] >= t })
			if i == len(b) {
				break
			}
			if b[i] == t {
				out = append(out, t)
			}
			b = b[i:]
		}
		return out
	}
	return sorted.AppendIntersect(out, a, b)
}

// countIn counts the members of s inside the ranges.
func countIn(s tidset, rs []tidRange) int {
	c := 0
	if s.bits != nil {
		for _, r := range rs {
			c += popRange(s.bits, r.lo, r.hi)
		}
		return c
	}
	for _, r := range rs {
		lo := sort.Search(len(s.list), func(i int) bool { return s.list[i] >= r.lo })
		hi := lo + sort.Search(len(s.list)-lo, func(i int) bool { return s.list[lo+i] >= r.hi })
		c += hi - lo
	}
	return c
}

// popRange counts the bits lo..hi-1 of b.
func popRange(b []uint64, lo, hi uint32) int {
	if lo >= hi {
		return 0
	}
	wl, wh := lo>>6, (hi-1)>>6
	first := ^uint64(0) << (lo & 63)
	last := ^uint64(0) >> (63 - (hi-1)&63)
	if wl == wh {
		return bits.OnesCount64(b[wl] & first & last)
	}
	c := bits.OnesCount64(b[wl]&first) + bits.OnesCount64(b[wh]&last)
	for w := wl + 1; w < wh; w++ {
		c += bits.OnesCount64(b[w])
	}
	return c
}

// each calls f for every member of s, ascending.
func (s tidset) each(f func(t uint32)) {
	if s.bits == nil {
		for _, t := range s.list {
			f(t)
		}
		return
	}
	for w, x := range s.bits {
		for x != 0 {
			f(uint32(w<<6 + bits.TrailingZeros64(x)))
			x &= x - 1
		}
	}
}

// scratch holds the buffers of intersections that are counted and
// forgotten.
type scratch struct {
	bits []uint64
	list []uint32
}

// intersect returns a ∩ b in the scratch buffers, valid until the next
// call; a bitset stays a bitset however sparse.
func (s *scratch) intersect(a, b tidset) tidset {
	switch {
	case a.bits != nil && b.bits != nil:
		if cap(s.bits) < len(a.bits) {
			s.bits = make([]uint64, len(a.bits))
		}
		out := s.bits[:len(a.bits)]
		c := 0
		for i, x := range a.bits {
			y := x & b.bits[i]
			out[i] = y
			c += bits.OnesCount64(y)
		}
		return tidset{bits: out, sup: c}
	case a.bits != nil:
		a, b = b, a
		fallthrough
	case b.bits != nil:
		out := s.list[:0]
		for _, t := range a.list {
			if b.bits[t>>6]&(1<<(t&63)) != 0 {
				out = append(out, t)
			}
		}
		s.list = out
		return listSet(out)
	}
	s.list = appendMerge(s.list[:0], a.list, b.list)
	return listSet(s.list)
}
