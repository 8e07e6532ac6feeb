package transform

import (
	"math/rand/v2"
	"slices"
)

// NonMono is the label of a value whose rows carry more than one class.
const NonMono = -1

// Profile is one numeric attribute as the breakpoint procedures see it:
// its active domain δ(A) in increasing order and, for each value, the one
// class label all its rows carry, or NonMono (Bu et al., Definition 9, with
// the erratum: a value is monochromatic when there do NOT exist two rows
// with that value and different labels).
type Profile struct {
	Values []float64
	Label  []int32
}

// NewProfile profiles column x whose rows have class indices cls. It also
// returns the rank of each row's value in Values.
func NewProfile(x []float64, cls []int32) (*Profile, []int32) {
	vals, ranks := rank(x)
	p := &Profile{Values: vals, Label: make([]int32, len(vals))}
	seen := make([]bool, len(vals))
	for r, k := range ranks {
		switch {
		case !seen[k]:
			seen[k], p.Label[k] = true, cls[r]
		case p.Label[k] != cls[r]:
			p.Label[k] = NonMono
		}
	}
	return p, ranks
}

// ChooseBP is Bu et al.'s Figure 5: w breakpoints drawn uniformly without
// replacement from the n values, returned as sorted indices into the
// values. The first value is never drawn, because the first piece starts
// there anyway, so w breakpoints make w+1 pieces (w is capped at n−1).
func ChooseBP(n, w int, rng *rand.Rand) []int {
	cands := make([]int, 0, max(n-1, 0))
	for i := 1; i < n; i++ {
		cands = append(cands, i)
	}
	return pick(nil, cands, w, rng)
}

// ChooseMaxMP is Bu et al.'s Figure 6 over the labels of a Profile: one
// scan in value order starts a piece at the first value of every maximal
// run of monochromatic values with one label (lines 10-16) and at the
// first non-monochromatic value after such a run (lines 3-7); when that
// gives fewer than w breakpoints, the rest are drawn from the
// non-monochromatic values that are not yet breakpoints, as ChooseBP draws
// (lines 18-20), all of them when there are too few. Runs of fewer than
// minWidth values (§5.3's minimum width, counted in distinct values) are
// treated as non-monochromatic first. Breakpoints are sorted indices into
// the values; the scan may return index 0 (Figure 7's value 1).
func ChooseMaxMP(label []int32, w, minWidth int, rng *rand.Rand) []int {
	label = demoteShortRuns(label, minWidth)
	var bp []int
	mp := false
	cur := int32(NonMono)
	for i, l := range label {
		switch {
		case l == NonMono:
			if mp { // the end of a monochromatic piece
				bp = append(bp, i)
				mp, cur = false, NonMono
			}
		case !mp: // the end of a non-monochromatic piece
			bp = append(bp, i)
			mp, cur = true, l
		case cur != l: // a different label
			bp = append(bp, i)
			cur = l
		}
	}
	if len(bp) >= w {
		return bp
	}
	var cands []int
	for i := 1; i < len(label); i++ {
		if label[i] == NonMono && !slices.Contains(bp, i) {
			cands = append(cands, i)
		}
	}
	return pick(bp, cands, w-len(bp), rng)
}

// demoteShortRuns returns label with every maximal run of one
// monochromatic label shorter than minWidth values marked NonMono (a copy;
// label itself when nothing changes).
func demoteShortRuns(label []int32, minWidth int) []int32 {
	if minWidth <= 1 {
		return label
	}
	out := label
	for i := 0; i < len(label); {
		j := i + 1
		for j < len(label) && label[j] == label[i] {
			j++
		}
		if label[i] != NonMono && j-i < minWidth {
			if &out[0] == &label[0] {
				out = slices.Clone(label)
			}
			for k := i; k < j; k++ {
				out[k] = NonMono
			}
		}
		i = j
	}
	return out
}

// pick adds k elements of cands, drawn uniformly without replacement, to
// bp and returns the union sorted.
func pick(bp, cands []int, k int, rng *rand.Rand) []int {
	switch {
	case k >= len(cands):
		bp = append(bp, cands...)
	case k > 0:
		for _, i := range rng.Perm(len(cands))[:k] {
			bp = append(bp, cands[i])
		}
	}
	slices.Sort(bp)
	return bp
}

// Piece is a contiguous run of an attribute's sorted values, [Start,
// Start+Len), with one transformation. A Mono piece holds values whose
// rows all carry one class label, so any bijection may recode it (Bu et
// al.'s monochromatic piece, F_bi); every other piece is recoded strictly
// monotonically in the attribute's direction (F_mono).
type Piece struct {
	Start int  `json:"start"`
	Len   int  `json:"len"`
	Mono  bool `json:"mono"`
}

// pieces cuts n values at the breakpoints (each starts a piece; the first
// piece starts at 0). With permute, a piece whose values all carry one
// monochromatic label is Mono.
func pieces(label []int32, bp []int, permute bool) []Piece {
	n := len(label)
	starts := []int{0}
	for _, b := range bp {
		if b > starts[len(starts)-1] && b < n {
			starts = append(starts, b)
		}
	}
	out := make([]Piece, len(starts))
	for i, s := range starts {
		end := n
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		p := Piece{Start: s, Len: end - s}
		if permute && label[s] != NonMono {
			p.Mono = true
			for k := s; k < end; k++ {
				p.Mono = p.Mono && label[k] == label[s]
			}
		}
		out[i] = p
	}
	return out
}
