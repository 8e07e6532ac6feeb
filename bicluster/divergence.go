package bicluster

import (
	"fmt"
	"math"
)

// Divergence names the Bregman divergence of the identification step
// (Ahmad and Khokhar, "Phoenix", §2.2 eq. (1), whose printed form has
// the sum misplaced: B_f(p; q) = Σ_x f(p) − f(q) − ∇f(q)(p − q)).
type Divergence string

const (
	// IDivergence is the Bregman divergence of f(x) = x log x:
	// B(p; q) = p log(p/q) − p + q (KL for normalised measures; the paper's
	// Table 1 "KL-Divergence"). The default.
	IDivergence Divergence = "kl"
	// ItakuraSaito is the Bregman divergence of f(x) = −log x:
	// B(p; q) = p/q − log(p/q) − 1.
	ItakuraSaito Divergence = "itakura-saito"
)

// ParseDivergence parses a divergence name as written in a job spec; ""
// is the default (I-divergence).
func ParseDivergence(s string) (Divergence, error) {
	switch s {
	case "", "kl", "i-divergence", "idivergence":
		return IDivergence, nil
	case "itakura-saito", "is":
		return ItakuraSaito, nil
	}
	return "", fmt.Errorf("%w: unknown divergence %q (want kl or itakura-saito)", ErrParams, s)
}

// cell returns the divergence of one cell's weight x from the
// bicluster's constant model μ (both > 0), divided by μ so that the score
// does not depend on the data's scale: with t = x/μ,
//
//	I-divergence:   B(x; μ)/μ = t log t − t + 1
//	Itakura–Saito:  B(x; μ)   = t − log t − 1   (already scale-free)
//
// x may be 0 for the I-divergence (t log t → 0), not for Itakura–Saito.
func (d Divergence) cell(x, mu float64) float64 {
	t := x / mu
	if d == ItakuraSaito {
		return t - math.Log(t) - 1
	}
	if t == 0 {
		return 1
	}
	return t*math.Log(t) - t + 1
}
