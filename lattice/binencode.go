package lattice

// The class holder's plaintexts on boost's lattice path (EncryptPairs),
// encoded from their nonzero coefficients only. A chunk's plaintext holds
// 2·nodes values a row slot of 2·nodes·bins coefficients (at 32 bins, one
// coefficient in 32), and bgv.Encoder.Encode scaled all n coefficients by
// T⁻¹ modulo Q with big integers and transformed them all (about a tenth
// of the lattice path's CPU, docs/boost.md). encodePlaced writes what
// Encode writes: each value, times the plaintext's scale modulo T, times
// T⁻¹ modulo each prime of Q, then the NTT skipping zeros (sparsentt.go).

import (
	"math/bits"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
)

// placedEncoder is an Encryptor's scratch for encodePlaced.
type placedEncoder struct {
	tInv []uint64 // by prime of Q: T⁻¹ modulo it
	pos  []int
	ntt  sparseNTT
}

// encodePlaced sets pt (coefficient encoding, NTT form, at Q's top level,
// its scale as bgv.NewPlaintext sets it) to what bgv.Encoder.Encode makes
// of l.place(g, h, k).
func (e *Encryptor) encodePlaced(l *BinLayout, g, h []int64, k int, pt *rlwe.Plaintext) {
	params := e.pk.Params.bgv
	rq := params.RingQ().AtLevel(pt.Level())
	t := params.PlaintextModulus()
	pe := &e.placed
	if pe.tInv == nil {
		for _, q := range rq.ModuliChain() {
			pe.tInv = append(pe.tInv, ring.ModExp(t%q, q-2, q))
		}
	}
	scale := pt.Scale.Uint64() % t
	for j := range pt.Value.Coeffs {
		clear(pt.Value.Coeffs[j])
	}
	pos := pe.pos[:0]
	put := func(at int, v int64) {
		hi, lo := bits.Mul64(centred(v, t), scale)
		m := bits.Rem64(hi, lo, t)
		pos = append(pos, at)
		for j, sub := range rq.SubRings[:rq.Level()+1] {
			pt.Value.Coeffs[j][at] = ring.BRed(m, pe.tInv[j], sub.Modulus, sub.BRedConstant)
		}
	}
	s, per := l.span(), l.nodes
	for r := 0; r < l.rows && (k*l.rows+r)*per < len(g); r++ {
		i := (k*l.rows + r) * per
		for j := range per {
			put(2*s*r+j*l.bins, g[i+j])
			put(2*s*r+s+j*l.bins, h[i+j])
		}
	}
	pe.pos = pos
	pe.ntt.forward(rq, pt.Value, pos, false)
}
