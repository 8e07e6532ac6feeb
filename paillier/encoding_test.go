package paillier

import (
	"crypto/rand"
	"errors"
	"math"
	"math/big"
	mrand "math/rand/v2"
	"testing"
)

func TestFixedPoint(t *testing.T) {
	f := FixedPoint{FracBits: 32}
	for _, x := range []float64{0, 1, -1, 0.5, -0.5, 3.141592653589793, -2.718281828, 1e-9, -1e12, 123456.000001} {
		v, err := f.Encode(x)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Decode(v); math.Abs(got-x) > math.Ldexp(1, -33) {
			t.Fatalf("%v -> %v -> %v", x, v, got)
		}
	}
	// Rounding: halves away from zero.
	g := FixedPoint{FracBits: 1}
	for x, want := range map[float64]int64{0.25: 1, -0.25: -1, 0.24: 0, 1.75: 4, -1.75: -4} {
		v, _ := g.Encode(x)
		if v.Int64() != want {
			t.Fatalf("Encode(%v) = %v want %d", x, v, want)
		}
	}
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := f.Encode(x); !errors.Is(err, ErrOverflow) {
			t.Fatalf("Encode(%v) accepted", x)
		}
	}
	// Encrypted sum of reals with negatives.
	_, _, sk := testKeys(t)
	xs := []float64{1.5, -2.25, 1000.125, -0.0625}
	acc := mustEnc(t, &sk.PublicKey, big.NewInt(0))
	for _, x := range xs {
		v, _ := f.Encode(x)
		m, err := sk.EncodeSigned(v)
		if err != nil {
			t.Fatal(err)
		}
		acc = sk.Add(acc, mustEnc(t, &sk.PublicKey, m))
	}
	m, _ := sk.Decrypt(acc)
	if got := f.Decode(sk.DecodeSigned(m)); got != 1.5-2.25+1000.125-0.0625 {
		t.Fatalf("sum %v", got)
	}
}

func TestPackingEncryptedSums(t *testing.T) {
	_, _, sk := testKeys(t)
	pk := &sk.PublicKey
	const valueBits, additions = 40, 10
	p, err := NewPacking(pk, valueBits, additions)
	if err != nil {
		t.Fatal(err)
	}
	if p.SlotBits != valueBits+1+4 || p.Slots != (pk.NS.BitLen()-1)/p.SlotBits {
		t.Fatalf("slot layout %+v", p)
	}
	count := 3*p.Slots + 2
	bound := int64(1)<<valueBits - 1
	want := make([]*big.Int, count)
	for i := range want {
		want[i] = new(big.Int)
	}
	var sum []*Ciphertext
	for k := 0; k < additions; k++ {
		vals := make([]*big.Int, count)
		for i := range vals {
			switch {
			case k == 0 && i == 0:
				vals[i] = big.NewInt(bound)
			case k == 0 && i == 1:
				vals[i] = big.NewInt(-bound)
			default:
				vals[i] = big.NewInt(mrand.Int64N(2*bound+1) - bound)
			}
			want[i].Add(want[i], vals[i])
		}
		pts, err := p.Pack(vals)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := pk.EncryptMany(rand.Reader, pts)
		if err != nil {
			t.Fatal(err)
		}
		if sum == nil {
			sum = cs
		} else {
			for j := range cs {
				sum[j] = pk.Add(sum[j], cs[j])
			}
		}
	}
	pts := make([]*big.Int, len(sum))
	for j, c := range sum {
		pts[j], _ = sk.Decrypt(c)
	}
	got, err := p.Unpack(pts, count, additions)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i].Cmp(want[i]) != 0 {
			t.Fatalf("slot %d: got %v want %v", i, got[i], want[i])
		}
	}
	// Extreme: all values at the bound, all additions.
	ext := make([]*big.Int, p.Slots)
	for i := range ext {
		ext[i] = big.NewInt(bound)
		if i%2 == 1 {
			ext[i] = big.NewInt(-bound)
		}
	}
	pt, _ := p.Pack(ext)
	tot := new(big.Int).Mul(pt[0], big.NewInt(additions))
	if tot.Cmp(pk.NS) >= 0 {
		t.Fatal("packed sum wraps n^s")
	}
	if r, err := p.Unpack([]*big.Int{tot}, p.Slots, additions); err != nil || r[0].Int64() != bound*additions || r[1].Int64() != -bound*additions {
		t.Fatalf("extreme sum: %v %v", r, err)
	}
}

func TestPackingErrors(t *testing.T) {
	_, _, sk := testKeys(t)
	p, err := NewPacking(&sk.PublicKey, 16, 4)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Pack([]*big.Int{big.NewInt(1 << 16)}); !errors.Is(err, ErrOverflow) {
		t.Fatal("value at 2^valueBits accepted")
	}
	if _, err := p.Pack([]*big.Int{big.NewInt(-(1 << 16))}); !errors.Is(err, ErrOverflow) {
		t.Fatal("value at -2^valueBits accepted")
	}
	pts, _ := p.Pack([]*big.Int{big.NewInt(5), big.NewInt(-5)})
	if _, err := p.Unpack(pts, 2, 5); !errors.Is(err, ErrOverflow) {
		t.Fatal("summands > additions accepted")
	}
	if _, err := p.Unpack(pts, 1, 1); !errors.Is(err, ErrOverflow) {
		t.Fatal("non-zero unused slot accepted")
	}
	// A negative wrap-around modulo n^s is out of range.
	neg := new(big.Int).Sub(sk.NS, pts[0])
	if _, err := p.Unpack([]*big.Int{neg}, 2, 1); !errors.Is(err, ErrOverflow) {
		t.Fatal("wrapped plaintext accepted")
	}
	// Overflowed slot: more than summands·(2^(v+1)-1).
	over := new(big.Int).Lsh(one, uint(p.SlotBits)-1)
	over.Add(over, new(big.Int).Lsh(one, uint(p.SlotBits)))
	if _, err := p.Unpack([]*big.Int{over}, 2, 1); !errors.Is(err, ErrOverflow) {
		t.Fatal("overflowed slot accepted")
	}
	if _, err := p.Unpack(pts, 5, 1); !errors.Is(err, ErrOverflow) {
		t.Fatal("count mismatch accepted")
	}
	if _, err := NewPacking(&sk.PublicKey, 600, 1); !errors.Is(err, ErrOverflow) {
		t.Fatal("slot wider than plaintext accepted")
	}
	if got, err := p.Unpack(pts, 2, 1); err != nil || got[0].Int64() != 5 || got[1].Int64() != -5 {
		t.Fatalf("%v %v", got, err)
	}
}
