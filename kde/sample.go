package kde

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// Bandwidths is Scott's rule of thumb, the paper's bandwidth (Tan and Ng,
// "Privacy-Preserving Sharing of Horizontally-Distributed Private Data for
// Constructing Accurate Classifiers", section 5.2, eq. 16): for n rows of d
// columns, h_i = (4/(d+2))^(1/(d+4)) · n^(-1/(d+4)) · σ_i, with σ_i the
// unbiased standard deviation of column i. It meets the paper's eq. 15
// (h → 0 and n·h^d → ∞), so the sample is asymptotically independent of
// the rows. Fewer than two rows give no deviation: nil.
func Bandwidths(rows [][]float64) []float64 {
	n := len(rows)
	if n < 2 {
		return nil
	}
	d := len(rows[0])
	scale := math.Pow(4/float64(d+2), 1/float64(d+4)) * math.Pow(float64(n), -1/float64(d+4))
	h := make([]float64, d)
	for i := range d {
		var mean, m2 float64 // Welford: one pass, no cancellation
		for j, r := range rows {
			delta := r[i] - mean
			mean += delta / float64(j+1)
			m2 += delta * (r[i] - mean)
		}
		h[i] = scale * math.Sqrt(m2/float64(n-1))
	}
	return h
}

// Epanechnikov draws from the standard Epanechnikov density
// 3/4·(1 − x²) on [−1, 1] (the paper's eq. 11 with h = 1), by Devroye's
// rule: of three uniforms on [−1, 1], the second when the third is the
// largest in magnitude, else the third.
func Epanechnikov(rng *rand.Rand) float64 {
	u1, u2, u3 := 2*rng.Float64()-1, 2*rng.Float64()-1, 2*rng.Float64()-1
	if math.Abs(u3) >= math.Abs(u2) && math.Abs(u3) >= math.Abs(u1) {
		return u2
	}
	return u3
}

// Resample is the paper's Algorithm 1 (KDE Resampling) for one class of
// one site: m rows, each a row of rows chosen uniformly at random plus
// h_i·E_i in column i, E_i standard Epanechnikov; that is, m independent
// draws from the product-Epanechnikov density estimate of eq. 10. The
// draws keep no order of rows: that is what defeats the paper's section 4
// attack.
func Resample(rows [][]float64, h []float64, m int, rng *rand.Rand) [][]float64 {
	out := make([][]float64, m)
	for j := range out {
		r := rows[rng.IntN(len(rows))]
		y := make([]float64, len(h))
		for i := range h {
			y[i] = r[i] + h[i]*Epanechnikov(rng)
		}
		out[j] = y
	}
	return out
}

// Estimate is a product-Epanechnikov kernel density estimate (the paper's
// eq. 10), for measuring how far one site's estimate lies from another
// (DAPL): its rows sorted by the first column so that At visits only the
// kernels whose support holds the point.
type Estimate struct {
	rows [][]float64
	h    []float64
}

// NewEstimate is the estimate of rows with bandwidths h; nil when a
// bandwidth is zero (a constant column: the estimate has no density).
func NewEstimate(rows [][]float64, h []float64) *Estimate {
	if len(rows) == 0 || len(h) == 0 || slices.ContainsFunc(h, func(x float64) bool { return !(x > 0) }) {
		return nil
	}
	s := slices.Clone(rows)
	slices.SortFunc(s, func(a, b []float64) int { return cmp.Compare(a[0], b[0]) })
	return &Estimate{rows: s, h: h}
}

// At is the estimate's density at x.
func (e *Estimate) At(x []float64) float64 {
	lo, _ := slices.BinarySearchFunc(e.rows, x[0]-e.h[0], func(r []float64, t float64) int { return cmp.Compare(r[0], t) })
	norm := 1.0
	for _, h := range e.h {
		norm *= 0.75 / h
	}
	var sum float64
	for _, r := range e.rows[lo:] {
		if r[0] > x[0]+e.h[0] {
			break
		}
		k := 1.0
		for i, h := range e.h {
			u := (x[i] - r[i]) / h
			if u <= -1 || u >= 1 {
				k = 0
				break
			}
			k *= 1 - u*u
		}
		sum += k
	}
	return norm * sum / float64(len(e.rows))
}

// Draw is one draw from the estimate (Resample's step).
func (e *Estimate) Draw(rng *rand.Rand) []float64 {
	return Resample(e.rows, e.h, 1, rng)[0]
}

// L1 estimates ∫|p − q| (between 0 and 2) by n draws from the mixture
// g = (p + q)/2: the mean of 2·|p − q|/(p + q) at the draws, which is
// bounded, so the estimate's error is at most 2/√n in standard deviation.
func L1(p, q *Estimate, n int, rng *rand.Rand) float64 {
	var sum float64
	for j := range n {
		var x []float64
		if j%2 == 0 {
			x = p.Draw(rng)
		} else {
			x = q.Draw(rng)
		}
		a, b := p.At(x), q.At(x)
		if a+b > 0 {
			sum += 2 * math.Abs(a-b) / (a + b)
		}
	}
	return sum / float64(n)
}
