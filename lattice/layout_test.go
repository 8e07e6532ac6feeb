package lattice

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/cohortdm/cohort/paillier"
)

// plainAdd adds packed coefficient vectors as the homomorphic sum does,
// modulo T.
func plainAdd(p Params, vecs ...[]uint64) []uint64 {
	t := p.PlaintextModulus()
	out := make([]uint64, len(vecs[0]))
	for _, v := range vecs {
		for i, c := range v {
			out[i] = (out[i] + c) % t
		}
	}
	return out
}

// Packing and decoding are exact for every width, number of summands and
// length, edge values included: the sum of the packed vectors decodes to
// the plaintext sums (checked with math/big).
func TestLayoutExact(t *testing.T) {
	p := params(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, vb := range []int{1, 7, 16, 31, 32, 47, 48, 55, 56, 57, 62} {
		for _, n := range []int{1, 2, 5, 17, 64} {
			for _, length := range []int{1, 5, 333} {
				t.Run(fmt.Sprintf("vb=%d/n=%d/len=%d", vb, n, length), func(t *testing.T) {
					l, err := NewLayout(p, length, 0, vb, n)
					if err != nil {
						t.Fatal(err)
					}
					in := randomInputs(rng, n, length, vb)
					var packed [][]uint64
					for _, v := range in {
						c, err := l.EncodeInts(v)
						if err != nil {
							t.Fatal(err)
						}
						packed = append(packed, c)
					}
					got, err := l.Decode(plainAdd(p, packed...), n)
					if err != nil {
						t.Fatal(err)
					}
					checkTotals(t, got, plainSums(in))
				})
			}
		}
	}
}

// The wrap bound: ±(2^vb − 1) is accepted, ±2^vb refused before anything
// is packed; 64 summands fit, 65 are refused; a sum of fewer inputs than
// the layout allows decodes with its own offset.
func TestLayoutBounds(t *testing.T) {
	p := params(t)
	l, err := NewLayout(p, 2, 0, 62, MaxMembers)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range [][]int64{{1<<62 - 1, -(1<<62 - 1)}} {
		if _, err := l.EncodeInts(v); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range [][]int64{{1 << 62, 0}, {0, -1 << 62}, {math.MaxInt64, 0}, {math.MinInt64, 0}} {
		if _, err := l.EncodeInts(v); !errors.Is(err, ErrRange) {
			t.Fatalf("EncodeInts(%v) = %v, want ErrRange", v, err)
		}
	}
	if _, err := NewLayout(p, 2, 0, 63, 2); !errors.Is(err, ErrParams) {
		t.Fatalf("value_bits 63: %v", err)
	}
	if _, err := NewLayout(p, 2, 0, 10, MaxMembers+1); !errors.Is(err, ErrParams) {
		t.Fatalf("%d summands: %v", MaxMembers+1, err)
	}
	// 64 maximal inputs: the largest sum there is.
	max := make([][]uint64, MaxMembers)
	for i := range max {
		max[i], _ = l.EncodeInts([]int64{1<<62 - 1, -(1<<62 - 1)})
	}
	got, err := l.Decode(plainAdd(p, max...), MaxMembers)
	if err != nil {
		t.Fatal(err)
	}
	want := new(big.Int).Mul(big.NewInt(MaxMembers), big.NewInt(1<<62-1))
	checkTotals(t, got, []*big.Int{want, new(big.Int).Neg(want)})
	if _, err := got.Int64s(); !errors.Is(err, ErrRange) {
		t.Fatalf("Int64s of a 68-bit total: %v", err)
	}
	// One input under a layout for 64: decoded with its own offset.
	got, err = l.Decode(plainAdd(p, max[:1]...), 1)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := got.Int64s(); err != nil || v[0] != 1<<62-1 || v[1] != -(1<<62-1) {
		t.Fatalf("one input: %v, %v", v, err)
	}
}

// A plaintext no in-range inputs can produce is refused: a coefficient
// beyond n·(2^w−1), a field below n (an input below −2^vb), bits beyond the
// last field, a nonzero unused coefficient.
func TestLayoutDecodeRefuses(t *testing.T) {
	p := params(t)
	l, err := NewLayout(p, 3, 0, 20, 4)
	if err != nil {
		t.Fatal(err)
	}
	good, _ := l.EncodeInts([]int64{5, -5, 0})
	sum := plainAdd(p, good, good)
	for name, mutate := range map[string]func([]uint64){
		"limb beyond n(2^w-1)": func(c []uint64) { c[0] = p.PlaintextModulus() - 1 },
		"field below n":        func(c []uint64) { c[0] = 0 },
		"bits after last": func(c []uint64) {
			used := 3 * l.field
			c[used/l.limb] |= 1 << (used % l.limb)
		},
		"unused coefficient": func(c []uint64) { c[len(c)-1] = 1 },
	} {
		c := append([]uint64(nil), sum...)
		mutate(c)
		if _, err := l.Decode(c, 2); !errors.Is(err, ErrRange) {
			t.Errorf("%s: %v, want ErrRange", name, err)
		}
	}
	if _, err := l.Decode(sum, 2); err != nil {
		t.Fatal(err)
	}
}

// Fixed point: encoding rounds exactly as paillier.FixedPoint (today's sum
// path), and decoding gives the float64 paillier.FixedPoint.Decode gives for
// the same exact sum.
func TestLayoutFixedPointMatchesPaillier(t *testing.T) {
	p := params(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, frac := range []int{0, 8, 16, 40} {
		fp := paillier.FixedPoint{FracBits: frac}
		const n, length = 5, 200
		l, err := NewLayout(p, length, frac, 62, n)
		if err != nil {
			t.Fatal(err)
		}
		xs := make([][]float64, n)
		var packed [][]uint64
		exact := make([]*big.Int, length)
		for i := range exact {
			exact[i] = new(big.Int)
		}
		for q := range xs {
			xs[q] = make([]float64, length)
			for i := range xs[q] {
				// Halves, negatives, large and tiny magnitudes.
				switch i % 4 {
				case 0:
					xs[q][i] = float64(rng.IntN(1000)-500) + 0.5*math.Ldexp(1, -frac)
				case 1:
					xs[q][i] = -rng.Float64() * math.Ldexp(1, 61-frac)
				case 2:
					xs[q][i] = rng.NormFloat64() * 1e-3
				default:
					xs[q][i] = rng.Float64() * 1000
				}
				v, err := fp.Encode(xs[q][i])
				if err != nil {
					t.Fatal(err)
				}
				exact[i].Add(exact[i], v)
			}
			c, err := l.EncodeFloats(xs[q])
			if err != nil {
				t.Fatal(err)
			}
			packed = append(packed, c)
		}
		got, err := l.Decode(plainAdd(p, packed...), n)
		if err != nil {
			t.Fatal(err)
		}
		checkTotals(t, got, exact)
		floats := got.Float64s()
		for i, e := range exact {
			if want := fp.Decode(e); floats[i] != want {
				t.Fatalf("frac %d total %d: %v, paillier decodes %v", frac, i, floats[i], want)
			}
		}
	}
	l, _ := NewLayout(p, 1, 16, 30, 2)
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Ldexp(1, 14)} {
		if _, err := l.EncodeFloats([]float64{bad}); !errors.Is(err, ErrRange) {
			t.Fatalf("EncodeFloats(%v) = %v, want ErrRange", bad, err)
		}
	}
}

// The plaintext a root sends down is decoded by every party: arbitrary
// coefficients never panic, and whatever decodes is a sum of in-range
// inputs (re-encoding the totals' parts is not possible, so the check is
// that every total is within n·(2^vb−1)).
func FuzzLayoutDecode(f *testing.F) {
	p := params(f)
	l, err := NewLayout(p, 9, 0, 20, 3)
	if err != nil {
		f.Fatal(err)
	}
	good, _ := l.EncodeInts([]int64{1, -1, 0, 1<<20 - 1, -(1<<20 - 1), 7, 8, 9, 10})
	sum := plainAdd(p, good, good)
	f.Add(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, sum[0]), sum[1]), uint8(2))
	f.Add([]byte{1, 2, 3}, uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, n uint8) {
		c := append([]uint64(nil), sum...)
		for i := 0; i+8 <= len(b) && i/8 < len(c); i += 8 {
			c[i/8] = binary.LittleEndian.Uint64(b[i:])
		}
		got, err := l.Decode(c, int(n))
		if err != nil {
			return
		}
		bound := big.NewInt(int64(n) * (1<<20 - 1))
		for i := range got.Len() {
			if v := got.Big(i); v.CmpAbs(bound) > 0 {
				t.Fatalf("total %d = %v beyond %v", i, v, bound)
			}
		}
	})
}
