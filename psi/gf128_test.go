package psi

import (
	mrand "math/rand/v2"
	"testing"
)

func randGF(r *mrand.Rand) gf { return gf{r.Uint64(), r.Uint64()} }

// TestGFField checks the field laws the VOLE relies on, against the
// reduction polynomial written out: X^127·X = X^7 + X^2 + X + 1, products
// commute, distribute over addition, and nonzero elements have an
// inverse (d^(2^128-2)·d = 1), which fails for a reducible modulus.
func TestGFField(t *testing.T) {
	x127 := gf{0, 1 << 63}
	if got := x127.mul(gf{2, 0}); got != (gf{0x87, 0}) {
		t.Fatalf("X^127·X = %x, want X^7+X^2+X+1", got)
	}
	r := mrand.New(mrand.NewPCG(1, 2))
	for range 50 {
		a, b, c := randGF(r), randGF(r), randGF(r)
		if a.mul(b) != b.mul(a) {
			t.Fatal("multiplication does not commute")
		}
		if a.mul(b.add(c)) != a.mul(b).add(a.mul(c)) {
			t.Fatal("multiplication does not distribute")
		}
		if a.mul(b.mul(c)) != a.mul(b).mul(c) {
			t.Fatal("multiplication is not associative")
		}
	}
	a := randGF(r)
	inv, p := gf{1, 0}, a // a^(2^128-2) = Π_{i=1..127} a^(2^i)
	for range 127 {
		p = p.mul(p)
		inv = inv.mul(p)
	}
	if a.mul(inv) != (gf{1, 0}) {
		t.Fatal("a·a^(2^128-2) ≠ 1: the modulus is not irreducible or mul is wrong")
	}
}

// TestGFTable checks the Δ table against shift-and-add, the byte form
// round trip, and that the table of 0 and of 1 are what they must be.
func TestGFTable(t *testing.T) {
	r := mrand.New(mrand.NewPCG(3, 4))
	for range 20 {
		d := randGF(r)
		tbl := newGFTable(d)
		for range 50 {
			f := randGF(r)
			if tbl.mul(f) != d.mul(f) {
				t.Fatalf("table product differs from shift-and-add for %x·%x", d, f)
			}
		}
	}
	one := newGFTable(gf{1, 0})
	f := randGF(r)
	if one.mul(f) != f || newGFTable(gf{}).mul(f) != (gf{}) {
		t.Fatal("table of 1 or 0 is wrong")
	}
	var b [gfLen]byte
	f.put(b[:])
	if gfFrom(b[:]) != f {
		t.Fatal("byte form does not round-trip")
	}
}
