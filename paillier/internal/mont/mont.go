// Package mont multiplies modulo a fixed odd modulus in Montgomery form
// (Montgomery, "Modular multiplication without trial division", Math.
// Comp. 44(170), 1985), on integers held as exactly k little-endian words.
//
// With R = 2^(W·k) for the word size W, the form of x is x·R mod m, and
// Mul(a, b) returns a·b·R⁻¹ mod m, so the product of two forms is the form
// of the product. A multiplication costs 2k² word multiply-adds and no
// division; package paillier's fixed-base tables spent two thirds of their
// multiplications' time in math/big's QuoRem (docs/boost.md, "Time per
// tree"). The word loop is the coarsely integrated operand scanning (CIOS)
// of Koç, Acar and Kaliski, "Analyzing and comparing Montgomery
// multiplication algorithms", IEEE Micro 16(3), 1996, §5, one outer step
// per word of b, in assembly on amd64 (step_amd64.s; math/big's own
// Montgomery multiplication is not exported) and in Go elsewhere.
//
// Nothing here is constant-time: the final subtraction is conditional,
// as are math/big's operations that the tables used before.
package mont

import (
	"math/big"
	"math/bits"
)

// Modulus is the Montgomery arithmetic of one odd modulus. It is
// read-only after New and safe for concurrent use.
type Modulus struct {
	m    []big.Word // exactly k words
	k    int
	minv big.Word // −m⁻¹ mod 2^W
	big  *big.Int
}

// New returns the arithmetic of m, or nil unless m is odd and > 1.
func New(m *big.Int) *Modulus {
	if m.Sign() <= 0 || m.Bit(0) == 0 || m.Cmp(big.NewInt(1)) == 0 {
		return nil
	}
	words := m.Bits()
	mm := &Modulus{m: append([]big.Word(nil), words...), k: len(words), big: new(big.Int).Set(m)}
	// Newton's iteration x ← x·(2 − m·x) doubles the correct low bits of
	// x ≡ m⁻¹ mod 2^W; m·m ≡ 1 mod 8 for odd m, so x = m starts with 3 and
	// five steps reach 96 >= 64.
	x := mm.m[0]
	for i := 0; i < 5; i++ {
		x *= 2 - mm.m[0]*x
	}
	mm.minv = -x
	return mm
}

// Words is k, the length of every operand.
func (mm *Modulus) Words() int { return mm.k }

// ScratchWords is the length of the scratch Mul needs.
func (mm *Modulus) ScratchWords() int { return mm.k + 1 }

// ToForm returns the form of x mod m (x >= 0) in k words.
func (mm *Modulus) ToForm(x *big.Int) []big.Word {
	t := new(big.Int).Lsh(x, uint(mm.k*bits.UintSize))
	t.Mod(t, mm.big)
	out := make([]big.Word, mm.k)
	copy(out, t.Bits())
	return out
}

// FromForm returns the integer in [0, m) whose form is a.
func (mm *Modulus) FromForm(a []big.Word) *big.Int {
	one := make([]big.Word, mm.k)
	one[0] = 1
	z := make([]big.Word, mm.k)
	mm.Mul(z, a, one, make([]big.Word, mm.ScratchWords()))
	return new(big.Int).SetBits(z) // SetBits drops the leading zero words
}

// Mul sets z = a·b·R⁻¹ mod m, in [0, m), for a, b < m of k words each,
// using t (ScratchWords words) as scratch. z may alias a or b.
//
// Step i sets t = (t + a·b[i] + u·m)/2^W, where u = (t[0] + a[0]·b[i])·
// (−m⁻¹) mod 2^W makes the sum divisible by 2^W. Bound: if t <= 2m−1
// before a step, the sum is at most 2m−1 + (m−1)(2^W−1) + m(2^W−1) <
// 2m·2^W, so t <= 2m−1 after it, in k+1 words (the top one 0 or 1).
// After k steps t = (a·b + U·m)/R ≡ a·b·R⁻¹ mod m, and one conditional
// subtraction of m brings it below m.
func (mm *Modulus) Mul(z, a, b, t []big.Word) {
	k := mm.k
	t = t[:k+1]
	a, b = a[:k], b[:k]
	clear(t)
	for i := 0; i < k; i++ {
		step(t, a, mm.m, b[i], mm.minv)
	}
	if t[k] != 0 || !less(t[:k], mm.m) {
		subVV(z[:k], t[:k], mm.m) // the borrow cancels t[k]
		return
	}
	copy(z[:k], t[:k])
}

// stepGeneric is one step of Mul in Go: the definition step_amd64.s
// follows. c1 and c2 carry the high words of a[j]·bi and u·m[j]; each
// x·y + s + c <= (2^W−1)² + 2(2^W−1) = 2^(2W) − 1 fits two words.
func stepGeneric(t, a, m []big.Word, bi, minv big.Word) {
	k := len(a)
	h, l := bits.Mul(uint(a[0]), uint(bi))
	l, cy := bits.Add(l, uint(t[0]), 0)
	c1 := h + cy
	u := l * uint(minv)
	h, l2 := bits.Mul(u, uint(m[0]))
	_, cy = bits.Add(l2, l, 0) // the low word is 0 by the choice of u
	c2 := h + cy
	for j := 1; j < k; j++ {
		h, l = bits.Mul(uint(a[j]), uint(bi))
		l, cy = bits.Add(l, uint(t[j]), 0)
		h += cy
		l, cy = bits.Add(l, c1, 0)
		c1 = h + cy
		h, l2 = bits.Mul(u, uint(m[j]))
		l2, cy = bits.Add(l2, l, 0)
		h += cy
		l2, cy = bits.Add(l2, c2, 0)
		c2 = h + cy
		t[j-1] = big.Word(l2)
	}
	s, cy1 := bits.Add(uint(t[k]), c1, 0)
	s, cy2 := bits.Add(s, c2, 0)
	t[k-1] = big.Word(s)
	t[k] = big.Word(cy1 + cy2)
}

// less reports x < y for little-endian words of equal length.
func less(x, y []big.Word) bool {
	for i := len(x) - 1; i >= 0; i-- {
		if x[i] != y[i] {
			return x[i] < y[i]
		}
	}
	return false
}

// subVV sets z = x − y over len(z) words.
func subVV(z, x, y []big.Word) {
	var borrow uint
	for i := range z {
		var d uint
		d, borrow = bits.Sub(uint(x[i]), uint(y[i]), borrow)
		z[i] = big.Word(d)
	}
}
