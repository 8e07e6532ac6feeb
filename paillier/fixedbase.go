package paillier

import "math/big"

// fixedBase is a fixed-base exponentiation table: rows[i][j-1] holds
// g^(j·2^(w·i)) mod m for j = 1..2^w-1, for every w-bit window i of an
// exponent of up to bits bits. An exponentiation then costs one modular
// multiplication per non-zero window and no squarings.
type fixedBase struct {
	m    *big.Int
	w    int
	bits int
	rows [][]*big.Int
}

func newFixedBase(g, m *big.Int, bits, w int) *fixedBase {
	nw := (bits + w - 1) / w
	fb := &fixedBase{m: m, w: w, bits: nw * w, rows: make([][]*big.Int, nw)}
	size := 1<<w - 1
	base := new(big.Int).Mod(g, m)
	// Rows are independent once their base is known; compute the bases
	// serially (w squarings each), then fill the rows in parallel.
	bases := make([]*big.Int, nw)
	for i := 0; i < nw; i++ {
		bases[i] = new(big.Int).Set(base)
		for k := 0; k < w; k++ {
			base.Mul(base, base)
			base.Mod(base, m)
		}
	}
	parallel(nw, func(i int) {
		row := make([]*big.Int, size)
		row[0] = bases[i]
		for j := 1; j < size; j++ {
			t := new(big.Int).Mul(row[j-1], bases[i])
			row[j] = t.Mod(t, m)
		}
		fb.rows[i] = row
	})
	return fb
}

// exp returns g^e mod m for 0 <= e < 2^bits; larger exponents fall back to
// a plain exponentiation.
func (fb *fixedBase) exp(e *big.Int) *big.Int {
	if e.Sign() < 0 || e.BitLen() > fb.bits {
		g := fb.rows[0][0]
		return new(big.Int).Exp(g, e, fb.m)
	}
	acc := big.NewInt(1)
	words := e.Bits()
	mask := uint(1)<<fb.w - 1
	nw := (e.BitLen() + fb.w - 1) / fb.w
	first := true
	// Reused product and quotient buffers: no allocation per step.
	prod, quo := new(big.Int), new(big.Int)
	for i := 0; i < nw; i++ {
		d := window(words, i*fb.w, fb.w) & mask
		if d == 0 {
			continue
		}
		if first {
			acc.Set(fb.rows[i][d-1])
			first = false
			continue
		}
		prod.Mul(acc, fb.rows[i][d-1])
		quo.QuoRem(prod, fb.m, acc)
	}
	return acc
}

// window extracts w bits starting at bit position pos of the little-endian
// word slice.
func window(words []big.Word, pos, w int) uint {
	const wb = 32 << (^uint(0) >> 63)
	idx := pos / wb
	off := pos % wb
	if idx >= len(words) {
		return 0
	}
	v := uint(words[idx]) >> off
	if off+w > wb && idx+1 < len(words) {
		v |= uint(words[idx+1]) << (wb - off)
	}
	return v
}

// multiExp returns ∏ bases[j]^exps[j] mod m for non-negative exponents
// with Straus's interleaved 4-bit windows: the squarings are shared by all
// bases, so for k bases of b-bit exponents it costs b squarings plus about
// k·(b/4 + 14) multiplications instead of k·(b + b/4).
func multiExp(bases, exps []*big.Int, m *big.Int) *big.Int {
	const w = 4
	maxBits := 0
	for _, e := range exps {
		maxBits = max(maxBits, e.BitLen())
	}
	tables := make([][]*big.Int, len(bases))
	for j, b := range bases {
		t := make([]*big.Int, 1<<w)
		t[1] = new(big.Int).Mod(b, m)
		for k := 2; k < 1<<w; k++ {
			t[k] = new(big.Int).Mul(t[k-1], t[1])
			t[k].Mod(t[k], m)
		}
		tables[j] = t
	}
	acc := big.NewInt(1)
	prod, quo := new(big.Int), new(big.Int)
	started := false
	nw := (maxBits + w - 1) / w
	for i := nw - 1; i >= 0; i-- {
		if started {
			for k := 0; k < w; k++ {
				prod.Mul(acc, acc)
				quo.QuoRem(prod, m, acc)
			}
		}
		for j, e := range exps {
			d := window(e.Bits(), i*w, w) & (1<<w - 1)
			if d == 0 {
				continue
			}
			if !started {
				acc.Set(tables[j][d])
				started = true
				continue
			}
			prod.Mul(acc, tables[j][d])
			quo.QuoRem(prod, m, acc)
		}
	}
	return acc
}
