package coherence

import (
	"slices"

	"github.com/cohortdm/cohort/internal/sorted"
)

// Itemsets is a list of itemsets kept in one slice: each one sorted
// ascending by item.
type Itemsets struct {
	flat []int32
	end  []int
}

// Len is the number of itemsets.
func (s *Itemsets) Len() int { return len(s.end) }

// At returns itemset i; the caller must not change it.
func (s *Itemsets) At(i int) []int32 {
	lo := 0
	if i > 0 {
		lo = s.end[i-1]
	}
	return s.flat[lo:s.end[i]:s.end[i]]
}

// Add appends a copy of set, sorted.
func (s *Itemsets) Add(set []int32) {
	lo := len(s.flat)
	s.flat = append(s.flat, set...)
	slices.Sort(s.flat[lo:])
	s.end = append(s.end, len(s.flat))
}

// All returns the itemsets as separate slices.
func (s *Itemsets) All() [][]int32 {
	out := make([][]int32, s.Len())
	for i := range out {
		out[i] = s.At(i)
	}
	return out
}

// subset reports whether sorted a ⊆ sorted b.
func subset(a, b []int32) bool {
	if len(a) > len(b) {
		return false
	}
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j == len(b) || b[j] != x {
			return false
		}
		j++
	}
	return true
}

// union returns sorted a ∪ b.
func union(a, b []int32) []int32 {
	out := make([]int32, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i] < b[j]:
			out = append(out, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}

// inter returns sorted a ∩ b.
func inter(a, b []int32) []int32 { return sorted.AppendIntersect(nil, a, b) }

// minus returns sorted a − b.
func minus(a, b []int32) []int32 {
	var out []int32
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j < len(b) && b[j] == x {
			continue
		}
		out = append(out, x)
	}
	return out
}

// contains reports whether sorted a holds x.
func contains(a []int32, x int32) bool {
	_, ok := slices.BinarySearch(a, x)
	return ok
}
