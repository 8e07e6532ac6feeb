package secureagg

import (
	"fmt"
	"io"
	"math"
)

// ExponentialShares draws one party's shares of m independent Exp(scale)
// noise variables, the noise of report-noisy-max with exponential noise
// (the permute-and-flip mechanism; quantile's exponential mechanism). Each
// share is scale·Gamma(1/honest): Exp(1) is Gamma(1), the sum of honest
// independent Gamma(1/honest) variables, so the shares of any honest
// parties alone add the full noise, whatever the others' (Noise.Colluders,
// as for Laplace). A share beyond tailFactor·scale is redrawn, as
// noiseSampler's are, so that a computation can reserve room for it.
func ExponentialShares(random io.Reader, m int, scale float64, honest int) ([]float64, error) {
	if !(scale > 0) || math.IsInf(scale, 0) || honest < 1 || m < 0 {
		return nil, fmt.Errorf("secureagg: exponential shares: scale %v, %d honest parties", scale, honest)
	}
	s, err := newNoiseSampler(&NoiseReport{Mechanism: exponential, Scale: scale, Shares: honest}, random)
	if err != nil {
		return nil, err
	}
	out := make([]float64, m)
	for i := range out {
		out[i] = s.sample()
	}
	return out, nil
}

// exponential is noiseSampler's mechanism for ExponentialShares: not one a
// spec may ask an aggregation for (a sum's noise must be symmetric), so
// unexported.
const exponential Mechanism = "exponential"
