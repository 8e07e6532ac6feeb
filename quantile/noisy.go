package quantile

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/cohortdm/cohort/secureagg"
)

// This file is the noised search (params.noise; the package doc's
// Differential privacy): a bisection of the public range [a, b] on a fixed
// grid, every round's pooled counts carrying noise, so that the number of
// rounds, and with it each round's share of the budget, is fixed before
// any count is seen. Like search.go it is pure and deterministic: the grid
// values are computed with explicit roundings (no fused operations), so
// every leader derives the same thresholds from the same noisy counts.

// maxNoisyRounds bounds the grid: 2^maxNoisyRounds cells. Each round
// spends ε/rounds, so a deeper grid buys precision with noise.
const maxNoisyRounds = 40

// noiseFracBits is the fixed-point precision of a noised round's counts
// and noise shares.
const noiseFracBits = 16

// noisyRounds is the number of halvings of [a, b] that reach precision:
// the smallest R with (b − a)/2^R ≤ precision (both exact, as dividing by
// a power of two is), or an error when it exceeds maxNoisyRounds.
func noisyRounds(a, b, precision float64) (int, error) {
	w := b - a
	if math.IsInf(w, 0) {
		return 0, errors.New("b − a overflows")
	}
	for r := 1; r <= maxNoisyRounds; r++ {
		if math.Ldexp(w, -r) <= precision {
			return r, nil
		}
	}
	return 0, fmt.Errorf("(b − a)/precision needs more than 2^%d cells", maxNoisyRounds)
}

// noisySearch bisects every quantile's bracket (value(lo), value(hi)] over
// the grid value(j) = a + j·(b − a)/2^rounds, j = 0 … 2^rounds, one halving
// per round whatever the counts say, so the search ends after exactly
// rounds rounds. A value below a counts as a, one above b as b: the
// answer is the quantile of the pooled column clamped to [a, b].
type noisySearch struct {
	a, b, cell float64
	rounds     int
	qs         []float64
	n          int64 // the noisy pooled row count, at least 1
	counted    bool
	ks         []int64
	lo, hi     []int64 // grid indices
	applied    int
}

func newNoisySearch(qs []float64, a, b float64, rounds int) *noisySearch {
	s := &noisySearch{a: a, b: b, cell: math.Ldexp(b-a, -rounds), rounds: rounds, qs: qs,
		ks: make([]int64, len(qs)), lo: make([]int64, len(qs)), hi: make([]int64, len(qs))}
	for i := range s.hi {
		s.hi[i] = 1 << rounds
	}
	return s
}

// value is grid point j; the conversion keeps the product from being
// fused with the sum, so the value is the same on every architecture.
func (s *noisySearch) value(j int64) float64 {
	if j == 1<<s.rounds {
		return s.b
	}
	return s.a + float64(float64(j)*s.cell)
}

func (s *noisySearch) needsTotal() bool { return !s.counted }

func (s *noisySearch) finished() bool { return s.applied == s.rounds }

// thresholds are the midpoints of every bracket, sorted and distinct
// (brackets that agree share a slot, and with it the noise).
func (s *noisySearch) thresholds() []float64 {
	if s.finished() {
		return nil
	}
	out := make([]float64, 0, len(s.qs))
	for i := range s.qs {
		out = append(out, s.value(s.lo[i]+(s.hi[i]-s.lo[i])/2))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// apply halves every bracket by one round's noisy counts: the half above
// the midpoint when its noisy count is below the quantile's noisy rank,
// else the half below. Noisy counts need not be consistent (monotone, or
// within [0, N]), so none is checked beyond its slot.
func (s *noisySearch) apply(total *int64, thresholds []float64, counts []int64) error {
	if len(counts) != len(thresholds) {
		return fmt.Errorf("%w: %d counts for %d thresholds", errCounts, len(counts), len(thresholds))
	}
	if s.finished() {
		return errors.New("a count round after the last")
	}
	if total != nil {
		s.n, s.counted = max(*total, 1), true
		for i, q := range s.qs {
			s.ks[i] = rank(q, s.n)
		}
	}
	if !s.counted {
		return errors.New("counts before the pooled row count")
	}
	at := make(map[float64]int64, len(thresholds))
	for j, t := range thresholds {
		at[t] = counts[j]
	}
	for i := range s.qs {
		mid := s.lo[i] + (s.hi[i]-s.lo[i])/2
		c, ok := at[s.value(mid)]
		if !ok {
			return fmt.Errorf("%w: a bracket's midpoint was not counted", errCounts)
		}
		if c >= s.ks[i] {
			s.hi[i] = mid
		} else {
			s.lo[i] = mid
		}
	}
	s.applied++
	return nil
}

// results reports, for each quantile, the decimal with the fewest digits
// in its final cell (value(lo), value(hi)].
func (s *noisySearch) results() []Quantile {
	out := make([]Quantile, len(s.qs))
	for i, q := range s.qs {
		b := bracket{lo: orderKey(s.value(s.lo[i])), hi: orderKey(s.value(s.hi[i]))}
		out[i] = Quantile{Q: q, Value: shortest(b)}
	}
	return out
}

// roundNoise is one round's noise: the job's budget split evenly over the
// rounds (basic composition: R draws of ε/R and δ/R are (ε, δ)-DP), and the
// sensitivity of a vector of slots counts, which one row moves by at most
// 1 each (L1 slots, L2 √slots), whatever its value: a count needs no
// bounds from the owner.
func roundNoise(n *secureagg.Noise, rounds, slots int) *secureagg.Noise {
	c := *n
	c.Epsilon /= float64(rounds)
	c.Delta /= float64(rounds)
	c.Sensitivity = countSensitivity(c.Mechanism, slots)
	return &c
}

// countSensitivity is how far adding or removing one row moves a vector
// of slots counts, in the norm the mechanism is calibrated to.
func countSensitivity(m secureagg.Mechanism, slots int) float64 {
	if m == secureagg.Gaussian {
		return math.Sqrt(float64(slots))
	}
	return float64(slots)
}

// toNoisyCounts reads a decrypted noisy sum as counts, rounded to whole
// numbers (post-processing, which costs no privacy); they may be negative
// or exceed the row count. The error names no value.
func toNoisyCounts(sum []float64) ([]int64, error) {
	out := make([]int64, len(sum))
	for i, v := range sum {
		r := math.Round(v)
		if !(math.Abs(r) <= 1<<53) {
			return nil, errors.New("a pooled noisy count is out of range")
		}
		out[i] = int64(r)
	}
	return out, nil
}

// noiseReport is what a noised job's result says of its noise: the budget
// each party's datasets spent on the column (re-runs of a round spend
// again, in the parties' ledgers) and how it was split over the rounds.
func (p *Params) noiseReport() map[string]any {
	n := p.Noise
	return map[string]any{"mechanism": n.Mechanism, "epsilon": n.Epsilon, "delta": n.Delta, "rounds": p.rounds,
		"round_epsilon": n.Epsilon / float64(p.rounds), "round_delta": n.Delta / float64(p.rounds)}
}
