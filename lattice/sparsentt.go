package lattice

// A forward NTT for BinSummer's plaintext W that skips the butterflies on
// zeros. W has one nonzero coefficient per term of a chunk (at most a few
// hundred of n = 8,192), and its NTT was about 36 % of boost's lattice
// path's CPU (docs/boost.md, "The lattice path", profile). The transform is
// Lattigo's standard negacyclic Cooley–Tukey NTT (ring.nttLazy: stages of
// stride t = n/2, n/4, …, 1, the pair (j, j+t) of block i turned by
// roots[m+i], m = n/2t) with its lazy butterfly, so the result is the same
// polynomial. Before the stage of stride t the value at position j depends
// only on the inputs at positions ≡ j (mod 2t), so the stage's pair (j, j+t)
// is two zeros, and is left alone, unless some nonzero input lies at a
// position ≡ j (mod t). At default_credit's layouts that skips about 40 %
// of the butterflies (all but a few in the first stages, half of them in
// the stages down to the row slot's width, where only the bins' offsets are
// live).

import (
	"math/bits"

	"github.com/tuneinsight/lattigo/v6/ring"
)

// sparseNTT is the scratch of sparse forward NTTs (not safe for concurrent
// use; a BinSummer owns one).
type sparseNTT struct {
	mark []bool // by residue mod t: live in the current stage
	live []int  // the live residues of every sparse stage, stage after stage
	ends []int  // by sparse stage: its residues' end in live
	pos  []int  // scratch of BinSummer.weigh: W's nonzero positions
	seen []bool // scratch of BinSummer.weigh: by position, in pos
}

// plan sets the live residues of each stage for nonzero inputs at the
// distinct positions pos of a degree-n polynomial: a stage is run sparse
// while its live residues are under three quarters of its stride (below
// that, skipping pays for the indirection), densely from then on.
func (s *sparseNTT) plan(n int, pos []int) {
	if len(s.mark) < n/2 {
		s.mark = make([]bool, n/2)
	}
	s.live, s.ends = s.live[:0], s.ends[:0]
	for t := n / 2; t >= 1; t >>= 1 {
		start := len(s.live)
		for _, e := range pos {
			if r := e & (t - 1); !s.mark[r] {
				s.mark[r] = true
				s.live = append(s.live, r)
			}
		}
		for _, r := range s.live[start:] {
			s.mark[r] = false
		}
		if 4*(len(s.live)-start) >= 3*t {
			s.live = s.live[:start]
			return
		}
		s.ends = append(s.ends, len(s.live))
	}
}

// forward sets p, whose coefficients are zero but at the distinct
// positions pos (each below its modulus), to its NTT modulo every prime of
// rq, each coefficient reduced to [0, q): what rq.NTT gives, and with mont
// what rq.NTT then rq.MForm give (Montgomery form first, on the nonzeros
// only: the NTT is linear).
func (s *sparseNTT) forward(rq *ring.Ring, p ring.Poly, pos []int, mont bool) {
	n := rq.N()
	s.plan(n, pos)
	for i, sub := range rq.SubRings[:rq.Level()+1] {
		c := p.Coeffs[i][:n]
		q, mc, br := sub.Modulus, sub.MRedConstant, sub.BRedConstant
		for _, e := range pos {
			if !mont {
				break
			}
			c[e] = ring.MForm(c[e], q, br)
		}
		roots := sub.RootsForward
		t, m := n/2, 1
		for st, end := range s.ends {
			start := 0
			if st > 0 {
				start = s.ends[st-1]
			}
			sparseStage(c, s.live[start:end], t, m, q, mc, roots)
			t, m = t/2, 2*m
		}
		for ; t >= 1; t, m = t/2, 2*m {
			denseStage(c, t, m, q, mc, roots)
		}
		for j := range c {
			c[j] = ring.BRedAdd(c[j], q, br)
		}
	}
}

// butterfly is Lattigo's lazy Cooley–Tukey butterfly (ring.butterfly):
// U + V·F, U − V·F, with F in Montgomery form; U is first brought below 4q
// when reduce is set, which Lattigo does at every other stage (those of m
// with an odd bit length), so that no value passes 8q.
func butterfly(u, v, f, q, mc uint64, reduce bool) (uint64, uint64) {
	if reduce && u >= 4*q {
		u -= 4 * q
	}
	v = ring.MRedLazy(v, f, q, mc)
	return u + v, u + 2*q - v
}

// reduces reports whether the stage of m blocks brings its inputs below 4q
// (as ring.nttUnrolled16Lazy).
func reduces(m int) bool { return bits.Len(uint(m))&1 == 1 }

// sparseStage runs the stage of stride t (m blocks) on the pairs whose
// residue mod t is in live.
func sparseStage(c []uint64, live []int, t, m int, q, mc uint64, roots []uint64) {
	red := reduces(m)
	for i := range m {
		f, base := roots[m+i], 2*i*t
		for _, r := range live {
			x, y := base+r, base+r+t
			c[x], c[y] = butterfly(c[x], c[y], f, q, mc, red)
		}
	}
}

// denseStage runs the stage of stride t (m blocks) on every pair, eight
// pairs at a time, as Lattigo's unrolled NTT: a loop per pair ran at half
// its speed.
func denseStage(c []uint64, t, m int, q, mc uint64, roots []uint64) {
	if t < 8 {
		denseSmall(c, t, m, q, mc, roots)
		return
	}
	red := reduces(m)
	for i := range m {
		f, base := roots[m+i], 2*i*t
		a := c[base : base+t]
		b := c[base+t : base+2*t]
		for x := 0; x+8 <= len(a); x += 8 {
			u, v := (*[8]uint64)(a[x:x+8]), (*[8]uint64)(b[x:x+8])
			u[0], v[0] = butterfly(u[0], v[0], f, q, mc, red)
			u[1], v[1] = butterfly(u[1], v[1], f, q, mc, red)
			u[2], v[2] = butterfly(u[2], v[2], f, q, mc, red)
			u[3], v[3] = butterfly(u[3], v[3], f, q, mc, red)
			u[4], v[4] = butterfly(u[4], v[4], f, q, mc, red)
			u[5], v[5] = butterfly(u[5], v[5], f, q, mc, red)
			u[6], v[6] = butterfly(u[6], v[6], f, q, mc, red)
			u[7], v[7] = butterfly(u[7], v[7], f, q, mc, red)
		}
	}
}

// denseSmall is denseStage for strides 4, 2 and 1, eight coefficients
// (8/2t blocks) at a time.
func denseSmall(c []uint64, t, m int, q, mc uint64, roots []uint64) {
	red := reduces(m)
	for base := 0; base+8 <= len(c); base += 8 {
		u := (*[8]uint64)(c[base : base+8])
		r := roots[m+base/(2*t):]
		switch t {
		case 4:
			f := r[0]
			u[0], u[4] = butterfly(u[0], u[4], f, q, mc, red)
			u[1], u[5] = butterfly(u[1], u[5], f, q, mc, red)
			u[2], u[6] = butterfly(u[2], u[6], f, q, mc, red)
			u[3], u[7] = butterfly(u[3], u[7], f, q, mc, red)
		case 2:
			f, g := r[0], r[1]
			u[0], u[2] = butterfly(u[0], u[2], f, q, mc, red)
			u[1], u[3] = butterfly(u[1], u[3], f, q, mc, red)
			u[4], u[6] = butterfly(u[4], u[6], g, q, mc, red)
			u[5], u[7] = butterfly(u[5], u[7], g, q, mc, red)
		default:
			u[0], u[1] = butterfly(u[0], u[1], r[0], q, mc, red)
			u[2], u[3] = butterfly(u[2], u[3], r[1], q, mc, red)
			u[4], u[5] = butterfly(u[4], u[5], r[2], q, mc, red)
			u[6], u[7] = butterfly(u[6], u[7], r[3], q, mc, red)
		}
	}
}
