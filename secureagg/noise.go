package secureagg

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
)

// Mechanism names a differential-privacy noise distribution.
type Mechanism string

// Mechanisms.
const (
	// Laplace gives ε-DP for a vector of L1 sensitivity Δ1 with noise
	// Lap(Δ1/ε) on every coordinate (Dwork, Theorem 1).
	Laplace Mechanism = "laplace"
	// Gaussian gives (ε, δ)-DP, 0 < ε < 1, for a vector of L2 sensitivity Δ2
	// with noise N(0, σ²), σ = Δ2·√(2 ln(1.25/δ))/ε, on every coordinate.
	Gaussian Mechanism = "gaussian"
)

// Noise asks for output privacy: noise added inside the encrypted sum, so
// that only the noisy sum is ever decrypted. Every party must pass the same
// Noise.
type Noise struct {
	Mechanism   Mechanism
	Epsilon     float64
	Delta       float64 // Gaussian only, in (0, 1)
	Sensitivity float64 // of the summed vector: L1 for Laplace, L2 for Gaussian
	// Colluders is how many parties' noise shares an adversary may know
	// (each party knows its own). Each share is sized so that the other
	// N−Colluders shares alone add the full noise; the released sum then
	// carries more noise than the target (research §3.1.3, caveat).
	Colluders int
}

// NoiseReport records the privacy budget spent by one aggregation.
type NoiseReport struct {
	Mechanism   Mechanism `msgpack:"mechanism" json:"mechanism"`
	Epsilon     float64   `msgpack:"epsilon" json:"epsilon"`
	Delta       float64   `msgpack:"delta" json:"delta"`
	Sensitivity float64   `msgpack:"sensitivity" json:"sensitivity"`
	Scale       float64   `msgpack:"scale" json:"scale"` // Laplace b or Gaussian σ of the honest parties' total
	Shares      int       `msgpack:"shares" json:"shares"`
	Colluders   int       `msgpack:"colluders" json:"colluders"`
}

// tailFactor bounds one noise share at tailFactor·scale. A share beyond it
// is redrawn; the chance of that is below e^-64 for Laplace shares and
// 1e-50 for Gaussian ones, so the distribution is unchanged for any
// practical purpose, and the bound lets the packing reserve room for noise.
const tailFactor = 64

// plan checks n and derives the per-share sampler for a step of parties.
func (n *Noise) plan(parties int) (*NoiseReport, error) {
	if !(n.Epsilon > 0) || math.IsInf(n.Epsilon, 0) {
		return nil, fmt.Errorf("secureagg: noise epsilon %v must be positive", n.Epsilon)
	}
	if !(n.Sensitivity > 0) || math.IsInf(n.Sensitivity, 0) {
		return nil, fmt.Errorf("secureagg: noise sensitivity %v must be positive", n.Sensitivity)
	}
	if n.Colluders < 0 || n.Colluders >= parties {
		return nil, fmt.Errorf("secureagg: noise colluders %d outside 0..%d", n.Colluders, parties-1)
	}
	r := &NoiseReport{Mechanism: n.Mechanism, Epsilon: n.Epsilon, Sensitivity: n.Sensitivity,
		Shares: parties, Colluders: n.Colluders}
	switch n.Mechanism {
	case Laplace:
		if n.Delta != 0 {
			return nil, fmt.Errorf("secureagg: laplace noise takes no delta")
		}
		r.Scale = n.Sensitivity / n.Epsilon
	case Gaussian:
		if !(n.Delta > 0 && n.Delta < 1) {
			return nil, fmt.Errorf("secureagg: gaussian noise delta %v outside (0, 1)", n.Delta)
		}
		if n.Epsilon >= 1 {
			return nil, fmt.Errorf("secureagg: gaussian noise needs epsilon < 1, got %v", n.Epsilon)
		}
		r.Delta = n.Delta
		r.Scale = n.Sensitivity * math.Sqrt(2*math.Log(1.25/n.Delta)) / n.Epsilon
	default:
		return nil, fmt.Errorf("secureagg: unknown noise mechanism %q", n.Mechanism)
	}
	return r, nil
}

// shareBound is the largest magnitude one party's noise share may take.
func (r *NoiseReport) shareBound() float64 {
	if r == nil {
		return 0
	}
	return tailFactor * r.Scale
}

// noiseSampler draws one party's noise shares: the sum of the shares of
// m = Shares−Colluders parties is exactly Lap(b) (each share a difference of
// two Gamma(1/m, b) variables; Laplace is infinitely divisible) or N(0, σ²)
// (each share N(0, σ²/m)).
type noiseSampler struct {
	rep *NoiseReport
	m   float64
	rng *rand.Rand
}

// newNoiseSampler seeds a ChaCha8 generator from random (crypto/rand in
// production), so noise is unpredictable to other parties.
func newNoiseSampler(rep *NoiseReport, random io.Reader) (*noiseSampler, error) {
	var seed [32]byte
	if _, err := io.ReadFull(random, seed[:]); err != nil {
		return nil, fmt.Errorf("secureagg: seed noise: %w", err)
	}
	return &noiseSampler{rep: rep, m: float64(rep.Shares - rep.Colluders), rng: rand.New(rand.NewChaCha8(seed))}, nil
}

func (s *noiseSampler) sample() float64 {
	bound := s.rep.shareBound()
	for {
		var x float64
		switch s.rep.Mechanism {
		case Laplace:
			x = s.rep.Scale * (gamma(s.rng, 1/s.m) - gamma(s.rng, 1/s.m))
		case Gaussian:
			x = s.rep.Scale / math.Sqrt(s.m) * s.rng.NormFloat64()
		case exponential:
			x = s.rep.Scale * gamma(s.rng, 1/s.m)
		}
		if math.Abs(x) <= bound {
			return x
		}
	}
}

// gamma draws Gamma(shape a, scale 1) by Marsaglia–Tsang, boosting a < 1
// with Gamma(a) = Gamma(a+1)·U^(1/a) (computed in logs so tiny shapes do not
// underflow early).
func gamma(rng *rand.Rand, a float64) float64 {
	boost := 0.0
	if a < 1 {
		u := 1 - rng.Float64() // (0, 1]
		boost = math.Log(u) / a
		a++
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := 1 - rng.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return math.Exp(math.Log(d*v) + boost)
		}
	}
}
