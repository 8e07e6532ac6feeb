package psi

import "encoding/binary"

// Arithmetic in GF(2^128) = GF(2)[X]/(X^128 + X^7 + X^2 + X + 1), the
// field of the VOLE mode's correlation C = B + A·Δ (package doc, "VOLE
// mode"). An element is 128 coefficients, X^0 at bit 0 of lo and X^127 at
// bit 63 of hi; its 16-byte form is lo then hi, little-endian. Addition
// is XOR. Products by the one secret Δ of an exchange go through a
// per-exchange table (gfTable): the protocol multiplies by Δ once per
// OKVS column and per element, and a table lookup per byte is an order of
// magnitude faster than a bit loop in Go, which has no carry-less
// multiply. The lookups depend on the multiplier's bytes, a cache-timing
// channel open to code on the same machine only, not to the peer.

// gf is an element of GF(2^128).
type gf struct{ lo, hi uint64 }

// gfLen is the length of an element's byte form.
const gfLen = 16

// gfFrom reads an element from its 16-byte form.
func gfFrom(b []byte) gf {
	return gf{binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])}
}

// put writes e's 16-byte form to b.
func (e gf) put(b []byte) {
	binary.LittleEndian.PutUint64(b, e.lo)
	binary.LittleEndian.PutUint64(b[8:], e.hi)
}

func (e gf) add(f gf) gf { return gf{e.lo ^ f.lo, e.hi ^ f.hi} }

// mulX is e·X: a shift, and the reduction X^128 = X^7 + X^2 + X + 1.
func (e gf) mulX() gf {
	carry := e.hi >> 63
	return gf{e.lo<<1 ^ carry*0x87, e.hi<<1 | e.lo>>63}
}

// mul is e·f by shift-and-add: the reference the table is tested
// against, and the product for the few multiplications outside it.
func (e gf) mul(f gf) gf {
	var r gf
	for i := range 128 {
		w := f.lo
		if i >= 64 {
			w = f.hi
		}
		if w>>(i%64)&1 == 1 {
			r = r.add(e)
		}
		e = e.mulX()
	}
	return r
}

// gfTable is multiplication by one fixed element d: t[k][b] = d·b·X^(8k)
// for every byte b at every byte position k, so d·f is the XOR of 16
// lookups, one per byte of f.
type gfTable [16][256]gf

// newGFTable builds the table of d (4096 entries, each one XOR).
func newGFTable(d gf) *gfTable {
	t := new(gfTable)
	for k := range 16 {
		for i := range 8 {
			t[k][1<<i] = d
			d = d.mulX()
		}
		for b := 3; b < 256; b++ {
			if low := b & -b; low != b {
				t[k][b] = t[k][b&(b-1)].add(t[k][low])
			}
		}
	}
	return t
}

// mul is d·f.
func (t *gfTable) mul(f gf) gf {
	var r gf
	for k := range 8 {
		r = r.add(t[k][byte(f.lo>>(8*k))])
		r = r.add(t[k+8][byte(f.hi>>(8*k))])
	}
	return r
}
