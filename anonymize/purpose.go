package anonymize

import (
	"fmt"
	"math"
	"slices"
)

// Purpose- and trust-aware anonymisation (Sun, "Privacy Preserving Data
// Sharing in Data Mining Environment", ch. 4 "Injecting Purpose and Trust
// into Data Anonymisation"): attribute priorities for a purpose from the
// variation-of-information matrix (§4.2), the degree of anonymisation of an
// attribute, a tuple and a table (§4.3), and the decomposition of a
// requested degree into per-attribute generalisation levels (§4.4, here
// and in purposereach.go). The thesis leaves the chain order of the middle
// attributes, the trust → degree projection and the enforcement of k open;
// our choices are on each function, its errata in the package doc.

// NormaliseVI divides the matrix by the sum of its distinct off-diagonal
// entries (the thesis's example: 1.2517, 0.9183, 0.3334 → 0.5, 0.367,
// 0.133). Priorities do not depend on the scale.
func NormaliseVI(vi [][]float64) [][]float64 {
	sum := 0.0
	for i := range vi {
		for j := i + 1; j < len(vi); j++ {
			sum += vi[i][j]
		}
	}
	out := make([][]float64, len(vi))
	for i := range vi {
		out[i] = make([]float64, len(vi))
		for j := range vi {
			if sum > 0 {
				out[i][j] = vi[i][j] / sum
			}
		}
	}
	return out
}

// ChainOrder is the order of Def. 4.3's recursion: the most useful
// attribute first, the least useful last, the others by increasing VI from
// the most useful (the more dependent on it, the more useful; ties by
// index). The thesis does not say how the middle is ordered.
func ChainOrder(vi [][]float64, first, last int) []int {
	var mid []int
	for i := range vi {
		if i != first && i != last {
			mid = append(mid, i)
		}
	}
	slices.SortStableFunc(mid, func(a, b int) int { return cmpFloat(vi[first][a], vi[first][b]) })
	return append(append([]int{first}, mid...), last)
}

// Priorities solves Def. 4.3 along a chain of attributes (chain[0] the most
// useful, priority 1; the last the least, 0): each other attribute's
// priority is the VI-weighted mean of its neighbours',
//
//	P_i = (VI(i, i+1)·P_{i−1} + VI(i−1, i)·P_{i+1}) / (VI(i−1, i) + VI(i, i+1)),
//
// a tridiagonal system solved by the Thomas algorithm in O(m) (every P_i
// in [0, 1], Thm. 4.2). It returns the priority of every attribute index.
// Two neighbours at VI 0 (one determines the other) share a priority.
func Priorities(vi [][]float64, chain []int) ([]float64, error) {
	m := len(chain)
	if m < 2 {
		return nil, fmt.Errorf("%w: a chain of %d attributes", ErrRequirement, m)
	}
	// unknowns P_1 … P_{m−2}: −a_i P_{i−1} + P_i − c_i P_{i+1} = 0
	n := m - 2
	lower, upper, rhs := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := 1; i < m-1; i++ {
		l, r := vi[chain[i-1]][chain[i]], vi[chain[i]][chain[i+1]]
		a, c := 0.5, 0.5
		if l+r > 0 {
			a, c = r/(l+r), l/(l+r)
		}
		lower[i-1], upper[i-1] = a, c
		if i == 1 {
			rhs[0] += a // P_0 = 1
		}
	}
	p := thomas(lower, upper, rhs)
	out := make([]float64, len(vi))
	out[chain[0]] = 1
	for i, x := range p {
		out[chain[i+1]] = x
	}
	return out, nil
}

// thomas solves x_i − lower_i x_{i−1} − upper_i x_{i+1} = rhs_i.
func thomas(lower, upper, rhs []float64) []float64 {
	n := len(rhs)
	cp, dp := make([]float64, n), make([]float64, n)
	for i := range n {
		den := 1.0
		d := rhs[i]
		if i > 0 {
			den += lower[i] * cp[i-1]
			d += lower[i] * dp[i-1]
		}
		cp[i], dp[i] = -upper[i]/den, d/den
	}
	x := make([]float64, n)
	for i := n - 1; i >= 0; i-- {
		x[i] = dp[i]
		if i < n-1 {
			x[i] -= cp[i] * x[i+1]
		}
	}
	return x
}

// AttributeDegree is Def. 4.4: generalising a value steps levels up a
// hierarchy of h levels (ground and root counted), with level weights
// w_{j,j−1} = 1 (beta 0, uniform) or 1/(j−1)^beta (utility weights, steps
// near the root weigh more): the weights of the steps taken over all.
func AttributeDegree(h, steps int, beta float64) float64 {
	if steps <= 0 || h < 2 {
		return 0
	}
	w := func(j int) float64 {
		if beta == 0 {
			return 1
		}
		return 1 / math.Pow(float64(j-1), beta)
	}
	num, den := 0.0, 0.0
	for j := 2; j <= h; j++ {
		den += w(j)
		if j > h-min(steps, h-1) {
			num += w(j)
		}
	}
	return num / den
}

// TupleDegree is Def. 4.5: the priority-weighted mean of the attribute
// degrees (uniform priorities when they sum to 0). Under full-domain
// recoding every tuple has it, so it is also the table's (Def. 4.6).
func TupleDegree(deg, prio []float64) float64 {
	num, den := 0.0, 0.0
	for i := range deg {
		num += prio[i] * deg[i]
		den += prio[i]
	}
	if den == 0 {
		s := 0.0
		for _, d := range deg {
			s += d
		}
		return s / float64(len(deg))
	}
	return num / den
}

// TableDegree is Def. 4.6: the mean over records of Def. 4.5, each cell's
// degree counted from its record's leaf to the published node (the root
// counts as the top level, so unbalanced trees reach degree 1). It also
// takes local recodings, where records' degrees differ (Table 4.1(b)).
func TableDegree(ds *Dataset, g *Generalisation, w []float64, beta float64) float64 {
	if ds.N == 0 {
		return 0
	}
	total := 0.0
	deg := make([]float64, len(ds.Attrs))
	for r := range ds.N {
		for a, at := range ds.Attrs {
			leaf, n := int(at.Leaf[r]), int(g.Node[a][r])
			steps := at.Tax.Nodes[leaf].Depth - at.Tax.Nodes[n].Depth
			if n == at.Tax.Root() {
				steps = at.Tax.MaxLevel()
			}
			deg[a] = AttributeDegree(at.Tax.MaxLevel()+1, steps, beta)
		}
		total += TupleDegree(deg, w)
	}
	return total / float64(ds.N)
}

// DegreeWeights are the weights of Def. 4.5 and the shares of Eq. 4.11:
// the priorities, or with invert their complements 1 − P_i (the thesis's
// algorithm on the complementary priorities, so that the most useful
// attributes are generalised least, where Eq. 4.11 generalises them most); uniform
// when they sum to 0, where both are undefined.
func DegreeWeights(prio []float64, invert bool) []float64 {
	w := slices.Clone(prio)
	sum := 0.0
	for i := range w {
		if invert {
			w[i] = 1 - w[i]
		}
		sum += w[i]
	}
	if sum <= 0 {
		for i := range w {
			w[i] = 1
		}
	}
	return w
}

// Decompose is the decomposition algorithm as printed (§4.4): attribute i
// gets the degree w_i/Σw · target (Step 1, Eq. 4.11), then climbs
// ⌈deg·(h_i − 1)⌉ of its h_i levels (Step 2: the p-th of h_i − 1 equal
// intervals gives p steps, as the worked example reads it). It does not
// reach target in general (see Reach) and does not enforce k.
func Decompose(target float64, w []float64, h []int) []int {
	sum := 0.0
	for _, x := range w {
		sum += x
	}
	steps := make([]int, len(w))
	for i := range w {
		if sum <= 0 || h[i] < 2 {
			continue
		}
		d := w[i] / sum * target
		steps[i] = min(h[i]-1, max(0, int(math.Ceil(d*float64(h[i]-1)-1e-12))))
	}
	return steps
}
