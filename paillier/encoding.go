package paillier

import (
	"fmt"
	"math"
	"math/big"
)

// FixedPoint encodes reals as signed integers round(x·2^FracBits). Map the
// result to a plaintext with PublicKey.EncodeSigned (or pack it with
// Packing), add homomorphically, and decode the signed sum with Decode. A
// sum of k values of magnitude below 2^b needs b + FracBits + log2(k) + 1
// bits of plaintext space.
type FixedPoint struct {
	// FracBits is the number of fractional bits F (0..1000).
	FracBits int
}

// Encode returns round(x·2^F) (halves away from zero). NaN and ±Inf are
// errors.
func (f FixedPoint) Encode(x float64) (*big.Int, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil, fmt.Errorf("%w: cannot encode %v", ErrOverflow, x)
	}
	if f.FracBits < 0 || f.FracBits > 1000 {
		return nil, fmt.Errorf("%w: FracBits must be in 0..1000", ErrOverflow)
	}
	bf := new(big.Float).SetPrec(0).SetFloat64(x) // exact
	bf.SetMantExp(bf, f.FracBits)
	// Round half away from zero: add ±1/2 then truncate, exactly.
	half := new(big.Float).SetFloat64(0.5)
	if x < 0 {
		half.Neg(half)
	}
	bf.SetPrec(uint(f.FracBits) + 1100)
	bf.Add(bf, half)
	v, _ := bf.Int(nil) // truncates toward zero
	return v, nil
}

// Decode returns v·2^-F as the nearest float64 (NaN for a nil v).
func (f FixedPoint) Decode(v *big.Int) float64 {
	if v == nil {
		return math.NaN()
	}
	bf := new(big.Float).SetInt(v)
	bf.SetMantExp(bf, -f.FracBits)
	x, _ := bf.Float64()
	return x
}

// Packing packs many bounded signed integers into one plaintext, slot j at
// bits [j·SlotBits, (j+1)·SlotBits). A value v with |v| < 2^ValueBits is
// stored as v + 2^ValueBits ∈ [0, 2^(ValueBits+1)) (offset encoding), so a
// sum of up to Additions packed vectors stays below Additions·2^(ValueBits+1)
// ≤ 2^SlotBits and never carries into the next slot. The top slot ends
// below the top bit of n^s, so packed sums never wrap modulo n^s.
type Packing struct {
	// SlotBits is the width of one slot and Slots the number of slots per
	// plaintext.
	SlotBits, Slots int
	// ValueBits bounds the inputs: |v| < 2^ValueBits.
	ValueBits int
	// Additions is the number of packed vectors that may be summed.
	Additions int

	offset *big.Int // 2^ValueBits
	mask   *big.Int // 2^SlotBits - 1
	limit  *big.Int // 2^(Slots·SlotBits)
}

// NewPacking returns a packing for pk's plaintext space with headroom for
// sums of up to additions vectors of signed values |v| < 2^valueBits.
func NewPacking(pk *PublicKey, valueBits, additions int) (*Packing, error) {
	if err := pk.checkShape(); err != nil {
		return nil, err
	}
	if valueBits < 1 || additions < 1 {
		return nil, fmt.Errorf("%w: valueBits and additions must be positive", ErrOverflow)
	}
	if valueBits >= pk.ns().BitLen() {
		// Checked before 2^(valueBits+1) is built: an absurd valueBits
		// must not allocate gigabytes.
		return nil, fmt.Errorf("%w: %d-bit values do not fit the plaintext space", ErrOverflow, valueBits)
	}
	// Slot sums are at most additions·(2^(valueBits+1) - 1).
	maxSum := new(big.Int).Lsh(one, uint(valueBits)+1)
	maxSum.Sub(maxSum, one)
	maxSum.Mul(maxSum, big.NewInt(int64(additions)))
	slotBits := maxSum.BitLen()
	avail := pk.ns().BitLen() - 1
	slots := avail / slotBits
	if slots < 1 {
		return nil, fmt.Errorf("%w: a %d-bit slot does not fit the plaintext space", ErrOverflow, slotBits)
	}
	p := &Packing{SlotBits: slotBits, Slots: slots, ValueBits: valueBits, Additions: additions}
	p.offset = new(big.Int).Lsh(one, uint(valueBits))
	p.mask = new(big.Int).Lsh(one, uint(slotBits))
	p.mask.Sub(p.mask, one)
	p.limit = new(big.Int).Lsh(one, uint(slots*slotBits))
	return p, nil
}

// Plaintexts returns how many plaintexts count values need.
func (p *Packing) Plaintexts(count int) int { return (count + p.Slots - 1) / p.Slots }

// Pack packs values into ⌈len/Slots⌉ plaintexts. Unused slots of the last
// plaintext are zero. It fails with ErrOverflow if some |v| >= 2^ValueBits.
func (p *Packing) Pack(values []*big.Int) ([]*big.Int, error) {
	out := make([]*big.Int, 0, p.Plaintexts(len(values)))
	t := new(big.Int)
	for start := 0; start < len(values); start += p.Slots {
		end := min(start+p.Slots, len(values))
		acc := new(big.Int)
		for j := end - 1; j >= start; j-- {
			v := values[j]
			if v == nil || new(big.Int).Abs(v).Cmp(p.offset) >= 0 {
				return nil, fmt.Errorf("%w: value %d exceeds %d bits", ErrOverflow, j, p.ValueBits)
			}
			acc.Lsh(acc, uint(p.SlotBits))
			t.Add(v, p.offset)
			acc.Add(acc, t)
		}
		out = append(out, acc)
	}
	return out, nil
}

// Unpack recovers count signed sums from plaintexts that hold the sum of
// summands packed vectors (summands = 1 for a single vector). It fails with
// ErrOverflow if summands exceeds Additions, if a plaintext is out of range
// (for example a negative wrap-around) or a slot is inconsistent with a sum
// of summands in-range values.
func (p *Packing) Unpack(plaintexts []*big.Int, count, summands int) ([]*big.Int, error) {
	if summands < 1 || summands > p.Additions {
		return nil, fmt.Errorf("%w: %d summands, packing allows 1..%d", ErrOverflow, summands, p.Additions)
	}
	if count < 0 || len(plaintexts) != p.Plaintexts(count) {
		return nil, fmt.Errorf("%w: %d plaintexts cannot hold %d values", ErrOverflow, len(plaintexts), count)
	}
	k := big.NewInt(int64(summands))
	off := new(big.Int).Mul(p.offset, k)
	maxSlot := new(big.Int).Lsh(p.offset, 1)
	maxSlot.Sub(maxSlot, one)
	maxSlot.Mul(maxSlot, k)
	out := make([]*big.Int, 0, count)
	for pi, pt := range plaintexts {
		if pt == nil || pt.Sign() < 0 || pt.Cmp(p.limit) >= 0 {
			return nil, fmt.Errorf("%w: plaintext %d out of packing range", ErrOverflow, pi)
		}
		rest := new(big.Int).Set(pt)
		n := min(p.Slots, count-pi*p.Slots)
		for j := 0; j < p.Slots; j++ {
			slot := new(big.Int).And(rest, p.mask)
			rest.Rsh(rest, uint(p.SlotBits))
			if j >= n {
				if slot.Sign() != 0 {
					return nil, fmt.Errorf("%w: unused slot %d of plaintext %d is not zero", ErrOverflow, j, pi)
				}
				continue
			}
			if slot.Cmp(maxSlot) > 0 || slot.Cmp(k) < 0 {
				return nil, fmt.Errorf("%w: slot %d of plaintext %d overflowed", ErrOverflow, j, pi)
			}
			out = append(out, slot.Sub(slot, off))
		}
	}
	return out, nil
}
