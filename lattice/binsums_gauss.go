package lattice

// The fresh encryptions' Gaussian errors (binsums_fresh.go) by a
// cumulative table. Lattigo's sampler for Xe = DiscreteGaussian{σ, bound}
// (σ = 3.2, bound 19.2 here) draws |z| of a standard normal z by the
// ziggurat, rejects σ|z| > bound, rounds σ|z| to the nearest integer k
// and gives ±k with a fair sign: so P(0) = P(σ|z| < 1/2) and, for k ≥ 1,
// P(±k) = P(k − 1/2 ≤ σ|z| < k + 1/2) / 2 each, all conditioned on σ|z| ≤
// bound (k + 1/2 past the bound read as the bound). With erf, P(σ|z| < x)
// = erf(x/(σ√2)), so the magnitude's distribution function is
// C(k) = erf(min(k + 1/2, bound)/(σ√2)) / erf(bound/(σ√2)), and k runs to
// ⌊bound + 1/2⌋ (19). gaussTable keeps C(k)·2^63 and draws a magnitude
// from 63 uniform bits of a ChaCha8 word by counting the entries at or
// below them (every entry compared: the time does not depend on the
// value), and the sign from the 64th. The table's entries are float64
// erf values scaled to 63 bits, about 2^-53 from the exact
// probabilities, finer than the ziggurat's 31-bit strips; Lattigo's
// sampler reads 8 bytes a coefficient from a BLAKE2b stream and computes
// in floating point, which was a tenth of the lattice path's CPU after
// the other changes (docs/boost.md). TestFreshGaussian checks the counts
// of each value and the variance σ² + 1/12 of a rounded Gaussian.

import (
	"fmt"
	"math"
	mrand "math/rand/v2"

	"github.com/tuneinsight/lattigo/v6/ring"
)

// gaussTable draws Xe's errors modulo the primes of Q.
type gaussTable struct {
	cdt []uint64     // cdt[k] = C(k)·2^63 for magnitudes k below the largest
	val [][][]uint64 // by prime, sign (0: +, 1: −), magnitude: the residue
}

// newGaussTable returns the table of x for the primes of rq.
func newGaussTable(x ring.DiscreteGaussian, rq *ring.Ring) (gaussTable, error) {
	if !(x.Sigma > 0 && x.Bound >= 1 && x.Bound <= 64) {
		return gaussTable{}, fmt.Errorf("%w: errors of σ %g and bound %g", ErrParams, x.Sigma, x.Bound)
	}
	s := x.Sigma * math.Sqrt2
	all := math.Erf(x.Bound / s)
	top := int(x.Bound + 0.5) // the largest magnitude
	var g gaussTable
	for k := range top {
		c := math.Erf(math.Min(float64(k)+0.5, x.Bound)/s) / all
		g.cdt = append(g.cdt, uint64(c*(1<<63)))
	}
	for _, q := range rq.ModuliChain() {
		v := [][]uint64{make([]uint64, top+1), make([]uint64, top+1)}
		for k := range top + 1 {
			v[0][k] = uint64(k)
			if k > 0 {
				v[1][k] = q - uint64(k)
			}
		}
		g.val = append(g.val, v)
	}
	return g, nil
}

// read sets e to fresh errors drawn with prng.
func (g *gaussTable) read(prng *mrand.ChaCha8, e ring.Poly) {
	for i := range e.Coeffs[0] {
		r := prng.Uint64()
		sign, u := r>>63, r&(1<<63-1)
		k := 0
		for _, c := range g.cdt {
			k += int(1 ^ (u-c)>>63) // u ≥ c: both below 2^63
		}
		for j, v := range g.val {
			e.Coeffs[j][i] = v[sign][k]
		}
	}
}
