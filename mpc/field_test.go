package mpc

import (
	"bytes"
	"crypto/rand"
	"errors"
	"math/big"
	mrand "math/rand/v2"
	"testing"
)

var bigP = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 127), big.NewInt(1))

func toBig(e Elem) *big.Int {
	b := e.Bytes()
	return new(big.Int).SetBytes(b[:])
}

func fromBig(t *testing.T, x *big.Int) Elem {
	t.Helper()
	var b [ElemSize]byte
	x.FillBytes(b[:])
	e, err := DecodeElem(b[:])
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// fieldSamples returns edge elements (0, 1, 2, p−1, p−2, 2^63, 2^64−1,
// 2^64, 2^126, limbs full) and random ones.
func fieldSamples(t *testing.T) []Elem {
	t.Helper()
	edges := []*big.Int{
		big.NewInt(0), big.NewInt(1), big.NewInt(2),
		new(big.Int).Sub(bigP, big.NewInt(1)), new(big.Int).Sub(bigP, big.NewInt(2)),
		new(big.Int).Lsh(big.NewInt(1), 63), new(big.Int).SetUint64(1<<64 - 1),
		new(big.Int).Lsh(big.NewInt(1), 64), new(big.Int).Lsh(big.NewInt(1), 126),
		new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 126), big.NewInt(1)),
	}
	var out []Elem
	for _, x := range edges {
		out = append(out, fromBig(t, x))
	}
	r, err := randElems(rand.Reader, 200)
	if err != nil {
		t.Fatal(err)
	}
	return append(out, r...)
}

// TestFieldAgainstBig checks Add, Sub, Mul, Neg, Inv and Exp against
// math/big on edge and random elements.
func TestFieldAgainstBig(t *testing.T) {
	s := fieldSamples(t)
	mod := func(x *big.Int) *big.Int { return x.Mod(x, bigP) }
	for i, a := range s {
		ab := toBig(a)
		if got, want := toBig(a.Neg()), mod(new(big.Int).Neg(ab)); got.Cmp(want) != 0 {
			t.Fatalf("neg %v: %v, want %v", a, got, want)
		}
		if !a.IsZero() {
			if got, want := toBig(a.Inv()), new(big.Int).ModInverse(ab, bigP); got.Cmp(want) != 0 {
				t.Fatalf("inv %v: %v, want %v", a, got, want)
			}
		}
		for j := i; j < len(s) && j < i+25; j++ {
			b := s[j]
			bb := toBig(b)
			checks := []struct {
				name      string
				got, want *big.Int
			}{
				{"add", toBig(a.Add(b)), mod(new(big.Int).Add(ab, bb))},
				{"sub", toBig(a.Sub(b)), mod(new(big.Int).Sub(ab, bb))},
				{"rsub", toBig(b.Sub(a)), mod(new(big.Int).Sub(bb, ab))},
				{"mul", toBig(a.Mul(b)), mod(new(big.Int).Mul(ab, bb))},
				{"exp", toBig(a.Exp(b)), new(big.Int).Exp(ab, bb, bigP)},
			}
			for _, c := range checks {
				if c.got.Cmp(c.want) != 0 {
					t.Fatalf("%s %v %v: %v, want %v", c.name, a, b, c.got, c.want)
				}
			}
		}
	}
}

// TestSqrt checks that Sqrt finds a root of every square and refuses
// non-squares (−1 is not a square, as p = 3 mod 4).
func TestSqrt(t *testing.T) {
	for _, a := range fieldSamples(t) {
		s := a.Square()
		r, ok := s.Sqrt()
		if !ok || r.Square() != s || (r != a && r != a.Neg()) {
			t.Fatalf("sqrt of %v squared: %v, %v", a, r, ok)
		}
	}
	if _, ok := FromInt(-1).Sqrt(); ok {
		t.Fatal("-1 has a square root mod p")
	}
}

// TestSignedEmbedding checks FromInt and Int at the edges of 48 bits
// and of int64.
func TestSignedEmbedding(t *testing.T) {
	for _, x := range []int64{0, 1, -1, 1<<47 - 1, -(1<<47 - 1), -1 << 47, 1<<63 - 1, -(1<<63 - 1)} {
		e := FromInt(x)
		want := mod(new(big.Int).SetInt64(x))
		if toBig(e).Cmp(want) != 0 {
			t.Fatalf("FromInt(%d) = %v", x, e)
		}
		if got, ok := e.Int(); !ok || got != x {
			t.Fatalf("Int(FromInt(%d)) = %d, %v", x, got, ok)
		}
	}
	if _, ok := Pow2(100).Int(); ok {
		t.Fatal("2^100 fits an int64")
	}
}

func mod(x *big.Int) *big.Int { return x.Mod(x, bigP) }

// TestDecodeStrict checks the round trip and that p, p+1 and 2^128−1
// and wrong lengths are refused.
func TestDecodeStrict(t *testing.T) {
	for _, a := range fieldSamples(t) {
		b := a.Bytes()
		got, err := DecodeElem(b[:])
		if err != nil || got != a {
			t.Fatalf("round trip of %v: %v, %v", a, got, err)
		}
	}
	for _, x := range []*big.Int{bigP, new(big.Int).Add(bigP, big.NewInt(1)),
		new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 128), big.NewInt(1))} {
		var b [ElemSize]byte
		x.FillBytes(b[:])
		if _, err := DecodeElem(b[:]); !errors.Is(err, ErrNotCanonical) {
			t.Fatalf("decode of %v: %v", x, err)
		}
	}
	if _, err := DecodeElem(make([]byte, 15)); !errors.Is(err, ErrLength) {
		t.Fatalf("15 bytes: %v", err)
	}
	v := fieldSamples(t)
	enc := AppendVec(nil, v)
	got, err := DecodeVec(enc)
	if err != nil || len(got) != len(v) {
		t.Fatalf("vector round trip: %d, %v", len(got), err)
	}
	for i := range v {
		if got[i] != v[i] {
			t.Fatalf("vector element %d differs", i)
		}
	}
	for _, bad := range [][]byte{nil, {0, 0, 0}, enc[:len(enc)-1], append(bytes.Clone(enc), 0),
		{0xff, 0xff, 0xff, 0xff}} {
		if _, err := DecodeVec(bad); !errors.Is(err, ErrLength) {
			t.Fatalf("decode of %d bytes: %v", len(bad), err)
		}
	}
}

// TestRandInts checks that randInts stays below 2^bits and reaches its
// top bit.
func TestRandInts(t *testing.T) {
	for _, nb := range []int{1, 7, 63, 64, 65, 88} {
		v, err := randInts(rand.Reader, 256, nb)
		if err != nil {
			t.Fatal(err)
		}
		top := false
		lim := new(big.Int).Lsh(big.NewInt(1), uint(nb))
		half := new(big.Int).Rsh(lim, 1)
		for _, e := range v {
			if toBig(e).Cmp(lim) >= 0 {
				t.Fatalf("%d bits: %v", nb, e)
			}
			top = top || toBig(e).Cmp(half) >= 0
		}
		if !top {
			t.Fatalf("%d bits: no value reached the top bit", nb)
		}
	}
}

// TestShamir shares random secrets with degree t and reconstructs them
// from several sets of t+1 parties, and products from 2t+1.
func TestShamir(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(1, 2))
	for _, c := range configs {
		v, err := randElems(rand.Reader, 50)
		if err != nil {
			t.Fatal(err)
		}
		sh, err := shareVec(rand.Reader, v, c.t, c.n)
		if err != nil {
			t.Fatal(err)
		}
		got := reveal(t, sh, c.t)
		w := make([]Elem, len(v))
		for i := range v {
			w[i] = NewElem(rng.Uint64())
		}
		sw, err := shareVec(rand.Reader, w, c.t, c.n)
		if err != nil {
			t.Fatal(err)
		}
		prod := make([][]Elem, c.n)
		for j := range prod {
			prod[j] = make([]Elem, len(v))
			for i := range v {
				prod[j][i] = sh[j][i].Mul(sw[j][i])
			}
		}
		pr := combine(lagrangeAt0(2*c.t+1), prod[:2*c.t+1], len(v))
		for i := range v {
			if got[i] != v[i] || pr[i] != v[i].Mul(w[i]) {
				t.Fatalf("n=%d t=%d: element %d", c.n, c.t, i)
			}
		}
	}
}
