package lattice

import (
	"fmt"
	"math"
	"math/bits"
)

// MaxLength bounds the values of one aggregate (16 Mi): enough for every
// job, small enough that a layout never allocates out of proportion.
const MaxLength = 1 << 24

// Layout fixes how a vector of fixed-point values becomes plaintext
// coefficients modulo T, so that the sum of up to Summands such vectors
// never wraps.
//
// A value v = round(x·2^FracBits) with |v| < 2^ValueBits is stored as the
// offset u = v + 2^ValueBits ∈ [1, 2^(ValueBits+1)) in a field of ℓ bits,
// ℓ = bitlen(Summands·(2^(ValueBits+1)−1)), so the sum of Summands fields
// never carries into the next. The fields are laid end to end in one long
// bit string, cut into limbs of w bits, w the largest with
// Summands·(2^w−1) < T, one limb per plaintext coefficient, so that a
// coefficient of the sum never reaches T. Decoding adds the limb sums with
// carries (exact integer arithmetic), cuts the fields out again and
// subtracts n·2^ValueBits for n inputs. A field wider than a limb (ValueBits
// up to 62) spans several coefficients; several narrow fields share one.
// The plaintext modulus therefore never limits ValueBits: it only sets the
// density, w/ℓ values per coefficient.
type Layout struct {
	Length    int // values per vector, 1..MaxLength
	FracBits  int // x is encoded as round(x·2^FracBits), 0..1000
	ValueBits int // every encoded input has |v| < 2^ValueBits, 1..62
	Summands  int // vectors that may be added, 1..MaxMembers

	field  int // ℓ, bits per value
	limb   int // w, bits per coefficient
	coeffs int // coefficients used
	cts    int // ciphertexts
	slots  int
}

// NewLayout checks the bounds and derives the packing for params. Every
// refusal names the bound it hits, never a value.
func NewLayout(p Params, length, fracBits, valueBits, summands int) (*Layout, error) {
	switch {
	case length < 1 || length > MaxLength:
		return nil, fmt.Errorf("%w: length must be in 1..%d", ErrParams, MaxLength)
	case fracBits < 0 || fracBits > 1000:
		return nil, fmt.Errorf("%w: frac_bits must be in 0..1000", ErrParams)
	case valueBits < 1 || valueBits > 62:
		return nil, fmt.Errorf("%w: value_bits must be in 1..62 (|round(x·2^frac_bits)| < 2^62)", ErrParams)
	case summands < 1 || summands > MaxMembers:
		return nil, fmt.Errorf("%w: summands must be in 1..%d (the noise budget)", ErrParams, MaxMembers)
	}
	l := &Layout{Length: length, FracBits: fracBits, ValueBits: valueBits, Summands: summands, slots: p.Slots()}
	// ℓ = bitlen(summands·(2^(vb+1)−1)), up to 69 bits.
	hi, lo := bits.Mul64(uint64(summands), 1<<(valueBits+1)-1)
	l.field = 128 - bits.LeadingZeros64(hi)
	if hi == 0 {
		l.field = 64 - bits.LeadingZeros64(lo)
	}
	// w: the largest with summands·(2^w − 1) ≤ T − 1.
	l.limb = 63 - bits.LeadingZeros64((p.PlaintextModulus()-1)/uint64(summands)+1)
	if l.limb < 1 {
		return nil, fmt.Errorf("%w: summands exceed the plaintext modulus", ErrParams)
	}
	total := uint64(length) * uint64(l.field)
	l.coeffs = int((total + uint64(l.limb) - 1) / uint64(l.limb))
	l.cts = (l.coeffs + l.slots - 1) / l.slots
	return l, nil
}

// Ciphertexts is the number of ciphertexts one vector takes.
func (l *Layout) Ciphertexts() int { return l.cts }

// ValuesPerCoefficient is the packing density w/ℓ.
func (l *Layout) ValuesPerCoefficient() float64 { return float64(l.limb) / float64(l.field) }

// Shape names the layout. Every party of one aggregation must use the same
// layout; contributions carry the shape and are refused under another.
func (l *Layout) Shape() string {
	return fmt.Sprintf("%s/len=%d/frac=%d/value=%d/summands=%d", ParamsBGV13, l.Length, l.FracBits, l.ValueBits, l.Summands)
}

// EncodeFloats encodes x as round(x·2^FracBits), rounding halves away from
// zero (exactly as paillier.FixedPoint.Encode does), and packs it. A value
// that is NaN, infinite or beyond ±2^ValueBits after scaling is ErrRange,
// before anything is encrypted.
func (l *Layout) EncodeFloats(x []float64) ([]uint64, error) {
	if len(x) != l.Length {
		return nil, fmt.Errorf("%w: %d values, layout has %d", ErrParams, len(x), l.Length)
	}
	bound := math.Ldexp(1, l.ValueBits)
	v := make([]int64, len(x))
	for i, xi := range x {
		// Ldexp is exact (the scale is a power of two and |x·2^F| < 2^62
		// is checked next, so nothing overflows or underflows to a wrong
		// value); Round rounds halves away from zero.
		r := math.Round(math.Ldexp(xi, l.FracBits))
		if !(math.Abs(r) < bound) { // also NaN
			return nil, fmt.Errorf("%w: an input is NaN, infinite or not below 2^value_bits = 2^%d after scaling by 2^frac_bits", ErrRange, l.ValueBits)
		}
		v[i] = int64(r)
	}
	return l.pack(v), nil
}

// EncodeInts packs integers that are already in fixed point. |v| ≥
// 2^ValueBits is ErrRange.
func (l *Layout) EncodeInts(v []int64) ([]uint64, error) {
	if len(v) != l.Length {
		return nil, fmt.Errorf("%w: %d values, layout has %d", ErrParams, len(v), l.Length)
	}
	bound := int64(1) << l.ValueBits
	for _, x := range v {
		if x <= -bound || x >= bound {
			return nil, fmt.Errorf("%w: an input is not strictly within ±2^value_bits = ±2^%d", ErrRange, l.ValueBits)
		}
	}
	return l.pack(v), nil
}

// pack writes the offset values into limbs of w bits: the coefficient
// vector of all ciphertexts, cts·slots long, zero beyond the used ones.
func (l *Layout) pack(v []int64) []uint64 {
	out := make([]uint64, l.cts*l.slots)
	w := uint(l.limb)
	mask := uint64(1)<<w - 1
	var pos uint64 // bit position of the next field
	for _, x := range v {
		u := uint64(x) + 1<<l.ValueBits // in [1, 2^(vb+1))
		limb, off := pos/uint64(w), uint(pos%uint64(w))
		for u != 0 {
			out[limb] |= (u << off) & mask
			u >>= w - off
			limb, off = limb+1, 0
		}
		pos += uint64(l.field)
	}
	return out
}

// decode turns the decrypted coefficients of a sum of n inputs back into
// exact totals. It refuses (ErrRange) anything n in-range inputs cannot
// produce: a coefficient beyond n·(2^w−1), a used bit beyond the last
// field, a field outside [n, n·(2^(vb+1)−1)], or a nonzero unused
// coefficient. The checks catch a corrupted decryption with overwhelming
// probability; they cannot catch a malicious input that stays in range.
func (l *Layout) decode(coeffs []uint64, n int) (*Totals, error) {
	if len(coeffs) != l.cts*l.slots || n < 1 || n > l.Summands {
		return nil, fmt.Errorf("%w: %d coefficients of %d inputs for layout %s", ErrMismatch, len(coeffs), n, l.Shape())
	}
	outOfRange := fmt.Errorf("%w: the decrypted sum is not a sum of %d inputs within ±2^%d", ErrRange, n, l.ValueBits)
	w := uint(l.limb)
	mask := uint64(1)<<w - 1
	maxLimb := uint64(n) * mask
	digits := make([]uint64, l.coeffs)
	var carry uint64
	for j := range digits {
		if coeffs[j] > maxLimb {
			return nil, outOfRange
		}
		acc := coeffs[j] + carry // < 2^58 + 2^58
		digits[j], carry = acc&mask, acc>>w
	}
	if carry != 0 {
		return nil, outOfRange
	}
	for _, c := range coeffs[l.coeffs:] {
		if c != 0 {
			return nil, outOfRange
		}
	}
	used := uint64(l.Length) * uint64(l.field)
	if tail := used % uint64(w); tail != 0 && digits[len(digits)-1]>>tail != 0 {
		return nil, outOfRange
	}
	t := &Totals{FracBits: l.FracBits, lo: make([]uint64, l.Length), hi: make([]int64, l.Length)}
	// The offset of n inputs, n·2^vb, and the field's range [n, n·(2^(vb+1)−1)].
	offHi, offLo := bits.Mul64(uint64(n), 1<<l.ValueBits)
	maxHi, maxLo := bits.Mul64(uint64(n), 1<<(l.ValueBits+1)-1)
	var pos uint64
	for i := range t.lo {
		fHi, fLo := readField(digits, pos, w, uint(l.field))
		pos += uint64(l.field)
		if (fHi == 0 && fLo < uint64(n)) || fHi > maxHi || (fHi == maxHi && fLo > maxLo) {
			return nil, outOfRange
		}
		lo, borrow := bits.Sub64(fLo, offLo, 0)
		hi, _ := bits.Sub64(fHi, offHi, borrow)
		t.lo[i], t.hi[i] = lo, int64(hi)
	}
	return t, nil
}

// readField reads the `size`-bit field at bit position pos of the digits
// (w bits each) as a 128-bit number.
func readField(digits []uint64, pos uint64, w, size uint) (hi, lo uint64) {
	limb, off := pos/uint64(w), uint(pos%uint64(w))
	var got uint
	for got < size {
		take := min(w-off, size-got)
		chunk := (digits[limb] >> off) & (1<<take - 1)
		// Place chunk at bit `got` of (hi, lo).
		if got < 64 {
			lo |= chunk << got
			if got+take > 64 {
				hi |= chunk >> (64 - got)
			}
		} else {
			hi |= chunk << (got - 64)
		}
		got += take
		limb, off = limb+1, 0
	}
	return hi, lo
}
