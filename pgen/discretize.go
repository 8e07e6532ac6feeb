package pgen

import (
	"cmp"
	"math"
	"slices"
)

// mdlCuts are the cut points of Fayyad and Irani's supervised
// discretisation ("Multi-Interval Discretization of Continuous-Valued
// Attributes for Classification Learning", IJCAI 1993): the threshold of
// largest information gain splits the rows, recursively on each side, as
// long as the gain passes the minimum description length criterion
// Gain > (log2(N−1) + log2(3^k − 2) − k·E + k1·E1 + k2·E2) / N (k classes
// present in the N rows, entropies E in bits; 1 and 2 the two sides).
// Thresholds are midpoints between adjacent distinct values; a value x is
// in interval i when cuts[i−1] < x <= cuts[i]. The cuts come out sorted.
func mdlCuts(xs []float64, class []int32, nc int) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Or(cmp.Compare(xs[a], xs[b]), a-b) })
	var cuts []float64
	var split func(lo, hi int)
	split = func(lo, hi int) {
		total := make([]uint64, nc)
		for _, i := range idx[lo:hi] {
			total[class[i]]++
		}
		left, right := make([]uint64, nc), slices.Clone(total)
		n := float64(hi - lo)
		best, at := math.Inf(-1), -1
		var bl, br []uint64
		for j := lo; j+1 < hi; j++ {
			c := class[idx[j]]
			left[c]++
			right[c]--
			if xs[idx[j]] == xs[idx[j+1]] {
				continue
			}
			if g := infoGain(total, left, right); g > best+1e-12 {
				best, at, bl, br = g, j, slices.Clone(left), slices.Clone(right)
			}
		}
		if at < 0 {
			return
		}
		k, k1, k2 := present(total), present(bl), present(br)
		delta := math.Log2(math.Pow(3, float64(k))-2) - (float64(k)*entropy(total) - float64(k1)*entropy(bl) - float64(k2)*entropy(br))
		if best <= (math.Log2(n-1)+delta)/n {
			return
		}
		split(lo, at+1)
		lo2, hi2 := xs[idx[at]], xs[idx[at+1]]
		cut := lo2 + (hi2-lo2)/2
		if cut >= hi2 { // adjacent floats
			cut = lo2
		}
		cuts = append(cuts, cut)
		split(at+1, hi)
	}
	split(0, len(xs))
	return cuts
}

// present is the number of classes with a row.
func present(c []uint64) int {
	k := 0
	for _, x := range c {
		if x > 0 {
			k++
		}
	}
	return k
}

// entropy is the class entropy of counts, in bits. The explicit
// conversion keeps the compiler from fusing the multiply and subtract
// (the Go spec lets it on some architectures): every member redoes the
// models from the log and must get the same bits.
func entropy(c []uint64) float64 {
	var n, h float64
	for _, x := range c {
		n += float64(x)
	}
	for _, x := range c {
		if x > 0 {
			p := float64(x) / n
			h -= float64(p * math.Log2(p))
		}
	}
	return h
}

// infoGain is the information gain, in bits, of splitting total into left
// and right.
func infoGain(total, left, right []uint64) float64 {
	var n, nl, nr float64
	for c := range total {
		n, nl, nr = n+float64(total[c]), nl+float64(left[c]), nr+float64(right[c])
	}
	return entropy(total) - (nl*entropy(left)+nr*entropy(right))/n
}
