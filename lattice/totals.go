package lattice

import (
	"fmt"
	"math"
	"math/big"
)

// Totals are the exact sums of an aggregate, in fixed point: total i is
// V_i·2^-FracBits for a signed integer V_i of up to 69 bits (the sum of up
// to MaxMembers values below 2^62), held as 128-bit two's complement.
type Totals struct {
	FracBits int
	lo       []uint64
	hi       []int64
}

// Len is the number of totals.
func (t *Totals) Len() int { return len(t.lo) }

// Int64 returns V_i and whether it fits an int64.
func (t *Totals) Int64(i int) (int64, bool) {
	v := int64(t.lo[i])
	return v, t.hi[i] == v>>63
}

// Int64s returns every V_i, or an error if one does not fit an int64 (use
// Big then).
func (t *Totals) Int64s() ([]int64, error) {
	out := make([]int64, len(t.lo))
	for i := range out {
		v, ok := t.Int64(i)
		if !ok {
			return nil, fmt.Errorf("%w: total %d does not fit 64 bits", ErrRange, i)
		}
		out[i] = v
	}
	return out, nil
}

// Big returns V_i.
func (t *Totals) Big(i int) *big.Int {
	v := new(big.Int).SetInt64(t.hi[i])
	v.Lsh(v, 64)
	return v.Add(v, new(big.Int).SetUint64(t.lo[i]))
}

// Float64s returns every V_i·2^-FracBits rounded to the nearest float64
// (ties to even), which is what paillier.FixedPoint.Decode returns for the
// same integer: the fast path converts exactly representable integers and
// scales by a power of two that keeps the result normal; anything else
// goes through big.Float.
func (t *Totals) Float64s() []float64 {
	out := make([]float64, len(t.lo))
	for i := range out {
		v, ok := t.Int64(i)
		if ok && v > -1<<53 && v < 1<<53 && t.FracBits <= 1022 {
			out[i] = math.Ldexp(float64(v), -t.FracBits)
			continue
		}
		f := new(big.Float).SetInt(t.Big(i))
		f.SetMantExp(f, -t.FracBits)
		out[i], _ = f.Float64()
	}
	return out
}
