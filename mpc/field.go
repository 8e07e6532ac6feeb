package mpc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
)

// P is the field's modulus, the Mersenne prime 2^127 - 1, as two limbs
// (hi, lo). A Mersenne modulus reduces with a shift and an add instead
// of a division, and 127 bits leave room for k-bit integers (k <= 48),
// a statistical mask of kappa = 40 bits and a sum over every party's
// mask without wrapping (see Mod2m).
const (
	pLo uint64 = 1<<64 - 1
	pHi uint64 = 1<<63 - 1
)

// ElemSize is the length of an encoded element: 16 bytes, big-endian.
const ElemSize = 16

// Errors of the decoders, returned wrapped with the field they concern.
var (
	// ErrNotCanonical is returned for an encoded element >= p.
	ErrNotCanonical = errors.New("mpc: element not below the modulus")
	// ErrLength is returned when an encoding's length does not fit its header.
	ErrLength = errors.New("mpc: encoding has the wrong length")
)

// Elem is an element of GF(2^127 - 1), always held reduced (value < p).
// The zero value is 0. Arithmetic is on two uint64 limbs with math/bits;
// Mul and Add do not branch on the value except for the final
// conditional subtraction, which is not constant time (see the package
// doc).
type Elem struct{ hi, lo uint64 }

// NewElem returns x mod p for a non-negative x.
func NewElem(x uint64) Elem { return Elem{lo: x} }

// FromInt embeds a signed integer as x mod p: x >= 0 maps to x, x < 0
// to p + x. Signed k-bit values (k <= 48) are used this way throughout.
func FromInt(x int64) Elem {
	if x >= 0 {
		return Elem{lo: uint64(x)}
	}
	return Elem{}.Sub(Elem{lo: uint64(-x)})
}

// Int returns the signed integer e stands for, for an e within
// +-(2^63 - 1) of zero: values above (p-1)/2 are negative. ok is false
// when e is farther from zero than an int64 holds.
func (e Elem) Int() (v int64, ok bool) {
	if e.hi == 0 && e.lo < 1<<63 {
		return int64(e.lo), true
	}
	n := Elem{}.Sub(e)
	if n.hi == 0 && n.lo < 1<<63 {
		return -int64(n.lo), true
	}
	return 0, false
}

// IsZero reports whether e is 0.
func (e Elem) IsZero() bool { return e.hi|e.lo == 0 }

// Uint64 returns the low 64 bits of e's canonical value.
func (e Elem) Uint64() uint64 { return e.lo }

// reduce128 reduces a 128-bit value (hi, lo) below 2^128 - 1 mod p:
// v = 2^127 h + l is congruent to h + l, then one conditional
// subtraction brings it below p.
func reduce128(hi, lo uint64) Elem {
	top := hi >> 63
	hi &= pHi
	lo, c := bits.Add64(lo, top, 0)
	hi += c
	return condSub(hi, lo)
}

// condSub subtracts p once from a value below 2p.
func condSub(hi, lo uint64) Elem {
	l, b := bits.Sub64(lo, pLo, 0)
	h, b := bits.Sub64(hi, pHi, b)
	if b == 0 {
		return Elem{h, l}
	}
	return Elem{hi, lo}
}

// Add returns e + f mod p.
func (e Elem) Add(f Elem) Elem {
	lo, c := bits.Add64(e.lo, f.lo, 0)
	hi, _ := bits.Add64(e.hi, f.hi, c) // < 2^128: both are < 2^127
	return reduce128(hi, lo)
}

// Sub returns e - f mod p.
func (e Elem) Sub(f Elem) Elem {
	lo, b := bits.Sub64(e.lo, f.lo, 0)
	hi, b := bits.Sub64(e.hi, f.hi, b)
	if b != 0 { // wrapped: add p back, modulo 2^128
		lo, c := bits.Add64(lo, pLo, 0)
		hi, _ = bits.Add64(hi, pHi, c)
		return Elem{hi, lo}
	}
	return Elem{hi, lo}
}

// Neg returns -e mod p.
func (e Elem) Neg() Elem { return Elem{}.Sub(e) }

// Mul returns e * f mod p. The 254-bit product x = 2^127 H + L is
// congruent to H + L (2^127 = 1 mod p), both below 2^127.
func (e Elem) Mul(f Elem) Elem {
	// Schoolbook 2x2 limbs: x = w3 2^192 + w2 2^128 + w1 2^64 + w0.
	h00, l00 := bits.Mul64(e.lo, f.lo)
	h01, l01 := bits.Mul64(e.lo, f.hi)
	h10, l10 := bits.Mul64(e.hi, f.lo)
	h11, l11 := bits.Mul64(e.hi, f.hi)
	w0 := l00
	w1, c := bits.Add64(h00, l01, 0)
	w2, c2 := bits.Add64(h01, l11, c)
	w3 := h11 + c2
	w1, c = bits.Add64(w1, l10, 0)
	w2, c2 = bits.Add64(w2, h10, c)
	w3 += c2
	// L = low 127 bits; H = x >> 127.
	lLo, lHi := w0, w1&pHi
	hLo := w1>>63 | w2<<1
	hHi := w2>>63 | w3<<1
	lo, c := bits.Add64(lLo, hLo, 0)
	hi, _ := bits.Add64(lHi, hHi, c)
	return reduce128(hi, lo)
}

// Square returns e * e mod p.
func (e Elem) Square() Elem { return e.Mul(e) }

// Exp returns e^x mod p, x read as the integer of x's canonical value
// (square and multiply, from the top bit; not constant time).
func (e Elem) Exp(x Elem) Elem {
	r := NewElem(1)
	for i := 127; i >= 0; i-- {
		r = r.Square()
		var bit uint64
		if i >= 64 {
			bit = x.hi >> (i - 64) & 1
		} else {
			bit = x.lo >> i & 1
		}
		if bit == 1 {
			r = r.Mul(e)
		}
	}
	return r
}

// Inv returns e^-1 = e^(p-2) mod p (Fermat); Inv of 0 is 0, which
// callers rule out before they divide.
func (e Elem) Inv() Elem { return e.Exp(Elem{pHi, pLo - 2}) }

// Sqrt returns e^((p+1)/4) = e^(2^125), a square root of e when e is a
// square (p = 3 mod 4), and ok = false when e is not a square. Of the
// two roots it returns the one that is itself a square, a public,
// deterministic choice (RandomBits relies on only that).
func (e Elem) Sqrt() (r Elem, ok bool) {
	r = e
	for range 125 {
		r = r.Square()
	}
	return r, r.Square() == e
}

// Pow2 returns 2^i mod p for 0 <= i < 127.
func Pow2(i int) Elem {
	if i >= 64 {
		return Elem{hi: 1 << (i - 64)}
	}
	return Elem{lo: 1 << i}
}

// Bytes returns e's fixed 16-byte big-endian encoding.
func (e Elem) Bytes() [ElemSize]byte {
	var b [ElemSize]byte
	binary.BigEndian.PutUint64(b[:8], e.hi)
	binary.BigEndian.PutUint64(b[8:], e.lo)
	return b
}

// DecodeElem reads one element from exactly 16 bytes, rejecting any
// value >= p, so that every element has one encoding.
func DecodeElem(b []byte) (Elem, error) {
	if len(b) != ElemSize {
		return Elem{}, fmt.Errorf("element: %w", ErrLength)
	}
	e := Elem{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
	if e.hi > pHi || e.hi == pHi && e.lo == pLo {
		return Elem{}, fmt.Errorf("element: %w", ErrNotCanonical)
	}
	return e, nil
}

// String prints e as 0x-prefixed hex. It exists for tests: protocol
// errors never print an element.
func (e Elem) String() string { return fmt.Sprintf("0x%016x%016x", e.hi, e.lo) }

// MaxVec bounds the length of a decoded vector (2^24 elements, 256 MiB),
// so a peer's header cannot make a decoder allocate without limit.
const MaxVec = 1 << 24

// AppendVec appends v's encoding to b: a 4-byte big-endian count, then
// each element's 16 bytes.
func AppendVec(b []byte, v []Elem) []byte {
	b = slices.Grow(b, 4+len(v)*ElemSize)
	b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
	for _, e := range v {
		b = binary.BigEndian.AppendUint64(b, e.hi)
		b = binary.BigEndian.AppendUint64(b, e.lo)
	}
	return b
}

// DecodeVec reads a vector written by AppendVec from exactly b: the
// count must be at most MaxVec and match the bytes that follow, and
// every element must be canonical.
func DecodeVec(b []byte) ([]Elem, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("vector header: %w", ErrLength)
	}
	n := binary.BigEndian.Uint32(b)
	if n > MaxVec || uint64(len(b)-4) != uint64(n)*ElemSize {
		return nil, fmt.Errorf("vector count: %w", ErrLength)
	}
	v := make([]Elem, n)
	for i := range v {
		e, err := DecodeElem(b[4+i*ElemSize : 4+(i+1)*ElemSize])
		if err != nil {
			return nil, fmt.Errorf("vector element %d: %w", i, err)
		}
		v[i] = e
	}
	return v, nil
}

// randElems returns m independent uniform elements read from r: 16
// bytes each, read in one call, the top bit cleared, and the value p
// (probability 2^-127 per element) drawn again.
func randElems(r io.Reader, m int) ([]Elem, error) {
	buf := make([]byte, m*ElemSize)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, fmt.Errorf("mpc: randomness: %w", err)
	}
	v := make([]Elem, m)
	var one [ElemSize]byte
	for i := range v {
		b := buf[i*ElemSize : (i+1)*ElemSize]
		for {
			b[0] &= 0x7f
			e, err := DecodeElem(b)
			if err == nil {
				v[i] = e
				break
			}
			if _, err := io.ReadFull(r, one[:]); err != nil {
				return nil, fmt.Errorf("mpc: randomness: %w", err)
			}
			b = one[:]
		}
	}
	return v, nil
}

// randInts returns m independent uniform integers in [0, 2^bits) as
// elements, bits <= 120, read from r in one call.
func randInts(r io.Reader, m, nbits int) ([]Elem, error) {
	buf := make([]byte, m*ElemSize)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, fmt.Errorf("mpc: randomness: %w", err)
	}
	v := make([]Elem, m)
	for i := range v {
		b := buf[i*ElemSize:]
		hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:16])
		if nbits >= 64 {
			hi &= 1<<(nbits-64) - 1
		} else {
			hi, lo = 0, lo&(1<<nbits-1)
		}
		v[i] = Elem{hi, lo}
	}
	return v, nil
}
