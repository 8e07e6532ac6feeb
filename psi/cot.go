package psi

import (
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
)

// Correlated OT for the VOLE mode: the IKNP extension (Ishai, Kilian,
// Nissim and Petrank, "Extending Oblivious Transfers Efficiently",
// CRYPTO 2003) with voleWidth = 128 base OTs. The VOLE receiver (the PSI
// receiver) is the base-OT sender of seed pairs and the extension's
// chooser; the VOLE sender is the base-OT receiver with choice bits s,
// which are its VOLE secret Δ. After the extension the chooser holds t_i
// for each choice bit r_i and the other side q_i = t_i + r_i·Δ, read as
// elements of GF(2^128): a VOLE whose chooser's vector is over GF(2).
// Hashing q_i and q_i + Δ (cotHash) gives the two random messages of an
// OT, of which the chooser knows the one of its bit.

// voleWidth is the number of base OTs of the VOLE mode: Δ's 128 bits.
const voleWidth = 128

// cotRows rounds a number of correlated OTs up to whole 128-row blocks.
func cotRows(n int) int { return (n + otBlockRows - 1) / otBlockRows * otBlockRows }

// cotChooser runs the chooser's side for choice bits r (bit i, LSB
// first, of r[i/8]) over rows rows (a multiple of 128): it returns the
// columns u^j = G(k0_j) ⊕ G(k1_j) ⊕ r for j < 128, column j at
// [j·rows/8, (j+1)·rows/8), and the rows t_i of t^j = G(k0_j).
func cotChooser(k0, k1 []cipher.Block, r []byte, rows int) (u []byte, t []gf) {
	cb := rows / 8
	u, tc := make([]byte, voleWidth*cb), make([]byte, voleWidth*cb)
	_ = parallel(voleWidth, func(lo, hi int) error {
		for j := lo; j < hi; j++ {
			tj, uj := tc[j*cb:(j+1)*cb], u[j*cb:(j+1)*cb]
			prg(tj, k0[j], 0)
			copy(uj, r[:cb])
			subtleXor(uj, tj)
			prgXor(uj, k1[j], 0)
		}
		return nil
	})
	return u, cols128ToRows(tc, rows)
}

// cotSender runs the other side: from the columns u (overwritten) and
// its base-OT keys k_{s_j}, the rows q_i of q^j = G(k_{s_j}) ⊕ s_j·u^j,
// that is q_i = t_i + r_i·Δ with Δ = s.
func cotSender(u []byte, ks []cipher.Block, choice []int, rows int) []gf {
	cb := rows / 8
	_ = parallel(voleWidth, func(lo, hi int) error {
		for j := lo; j < hi; j++ {
			col := u[j*cb : (j+1)*cb]
			if choice[j] == 1 {
				prgXor(col, ks[j], 0)
			} else {
				prg(col, ks[j], 0)
			}
		}
		return nil
	})
	return cols128ToRows(u, rows)
}

// deltaOf is Δ as a field element: base-OT choice bit j is the
// coefficient of X^j.
func deltaOf(choice []int) gf {
	var d gf
	for j, c := range choice[:voleWidth] {
		if j < 64 {
			d.lo |= uint64(c) << j
		} else {
			d.hi |= uint64(c) << (j - 64)
		}
	}
	return d
}

// cols128ToRows transposes 128 columns of rows bits (bit i of a column,
// LSB first, is row i) into rows elements: bit j of row i is the
// coefficient of X^j. rows is a multiple of 128.
func cols128ToRows(cols []byte, rows int) []gf {
	cb := rows / 8
	out := make([]gf, rows)
	var a [64]uint64
	for half := range rows / 64 {
		for g := range 2 {
			for c := range 64 {
				a[c] = binary.LittleEndian.Uint64(cols[(64*g+c)*cb+8*half:])
			}
			transpose64(&a)
			for r := range 64 {
				if g == 0 {
					out[64*half+r].lo = a[r]
				} else {
					out[64*half+r].hi = a[r]
				}
			}
		}
	}
	return out
}

// cotHash is the correlation-robust hash that turns correlated OT i into
// a random OT: SHA-256 of a label, the index and x, cut to 16 bytes.
// The sender's two messages are cotHash(i, q_i) and cotHash(i, q_i+Δ).
func cotHash(i int, x gf) gf {
	var b [8 + 8 + gfLen]byte
	copy(b[:], "cotv1\x00\x00\x00")
	binary.LittleEndian.PutUint64(b[8:], uint64(i))
	x.put(b[16:])
	s := sha256.Sum256(b[:])
	return gfFrom(s[:])
}
