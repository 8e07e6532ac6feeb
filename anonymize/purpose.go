package anonymize

import (
	"fmt"
	"math"
	"slices"
)

// Purpose- and trust-aware anonymisation (Sun's thesis, ch. 4): attribute
// priorities for a purpose from the variation-of-information matrix
// (§4.2), the degree of anonymisation of an attribute, a tuple and a table
// (§4.3), and the decomposition of a requested degree into per-attribute
// generalisation levels (§4.4). The thesis leaves the chain order of the
// middle attributes, the trust → degree projection and the enforcement of
// k open; our choices are on each function.

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

// TrustDegree is our projection from a requester's trust t ∈ [0, 1] to
// the degree of anonymisation: (1 − t)², the "quadratic projection" the
// thesis uses without writing it down.
func TrustDegree(t float64) float64 { return (1 - t) * (1 - t) }

// Decompose is the decomposition algorithm (§4.4): attribute i gets the
// degree P_i/ΣP · target (Eq. 4.11; with invert, (1 − P_i)/Σ(1 − P) so that
// the most useful attributes are generalised least, the reading the
// motivation asks for), then is generalised ⌈deg·(h_i − 1)⌉ steps of its
// h_i levels (uniform intervals, as printed). k is not enforced here (see
// Raise).
func Decompose(target float64, prio []float64, h []int, invert bool) []int {
	share := slices.Clone(prio)
	if invert {
		for i := range share {
			share[i] = 1 - share[i]
		}
	}
	sum := 0.0
	for _, s := range share {
		sum += s
	}
	steps := make([]int, len(prio))
	for i := range prio {
		if sum <= 0 || h[i] < 2 {
			continue
		}
		d := share[i] / sum * target
		steps[i] = min(h[i]-1, max(0, int(math.Ceil(d*float64(h[i]-1)-1e-12))))
	}
	return steps
}

// Raise enforces k after a decomposition, which the thesis does not: while
// the full-domain generalisation levels is not k-anonymous, the attribute
// of least priority that can still go up goes up one level. It returns the
// levels, or an error when even the root is not k-anonymous.
func Raise(ds *Dataset, levels []int, prio []float64, k int) ([]int, error) {
	levels = slices.Clone(levels)
	order := make([]int, len(levels))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmpFloat(prio[a], prio[b]) })
	for !HashTableSatisfies(ds, levels, k, nil) {
		raised := false
		for _, a := range order {
			if levels[a] < ds.Attrs[a].Tax.MaxLevel() {
				levels[a]++
				raised = true
				break
			}
		}
		if !raised {
			return nil, fmt.Errorf("%w: not %d-anonymous even fully generalised", ErrRequirement, k)
		}
	}
	return levels, nil
}
