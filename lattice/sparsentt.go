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
//
// Two more kinds of pairs are cheap: a pair whose V is zero (no nonzero
// input at a position ≡ j+t mod 2t) only copies U, and one whose U is
// zero only multiplies V by the root. At the first stages most live pairs
// are one-sided, and at default_credit's layout (32 bins in a row slot of
// 64) the stage of stride 32 is all copies. The butterflies themselves
// are in nttkernels.go.

import (
	"github.com/tuneinsight/lattigo/v6/ring"
)

// sparseNTT is the scratch of sparse forward NTTs (not safe for concurrent
// use; a BinSummer owns one).
type sparseNTT struct {
	flag   []uint8    // by residue mod t: 1 when U is live, 2 when V is
	live   []int32    // scratch of plan: the current stage's live residues
	res    []int32    // every planned stage's residues, by kind
	stages []nttStage // the stages run sparse or as copies, in order
	pos    []int      // scratch of BinSummer.weigh: W's nonzero positions
	seen   []bool     // scratch of BinSummer.weigh: by position, in pos
}

// nttStage is a stage run before the dense ones: its residues mod t are
// res[lo:a] (both halves live), res[a:b] (only U) and res[b:hi] (only V);
// copy says every V is zero and the residues with U live are most of t,
// so the stage copies each block's first half onto its second.
type nttStage struct {
	lo, a, b, hi int
	copy         bool
}

// plan classifies the residues of each stage for nonzero inputs at the
// distinct positions pos of a degree-n polynomial. A stage is run sparse
// while its pairs with V live are under three quarters of its stride
// (below that, skipping pays for the indirection), as a copy when it has
// none and U is live at half of it or more, and densely from the first
// other stage on.
func (s *sparseNTT) plan(n int, pos []int) {
	if len(s.flag) < n/2 {
		s.flag = make([]uint8, n/2)
	}
	s.res, s.stages = s.res[:0], s.stages[:0]
	for t := n / 2; t >= 1; t >>= 1 {
		live := s.live[:0]
		for _, e := range pos {
			r := e & (t - 1)
			if s.flag[r] == 0 {
				live = append(live, int32(r))
			}
			if e&t == 0 { // e mod 2t < t: the pair's U
				s.flag[r] |= 1
			} else {
				s.flag[r] |= 2
			}
		}
		st := nttStage{lo: len(s.res)}
		for kind, end := range []*int{&st.a, &st.b, &st.hi} {
			want := [3]uint8{3, 1, 2}[kind]
			for _, r := range live {
				if s.flag[r] == want {
					s.res = append(s.res, r)
				}
			}
			*end = len(s.res)
		}
		for _, r := range live {
			s.flag[r] = 0
		}
		s.live = live
		withV := (st.a - st.lo) + (st.hi - st.b)
		if 4*withV >= 3*t {
			s.res = s.res[:st.lo]
			return
		}
		if withV == 0 && 2*len(live) >= t {
			s.res = s.res[:st.lo]
			st = nttStage{lo: st.lo, a: st.lo, b: st.lo, hi: st.lo, copy: true}
		}
		s.stages = append(s.stages, st)
	}
}

// forward sets p, whose coefficients are zero but at the distinct
// positions pos (each below its modulus), to its NTT modulo every prime of
// rq, each coefficient reduced to [0, q): what rq.NTT gives, and with mont
// what rq.NTT then rq.MForm give (Montgomery form first, on the nonzeros
// only: the NTT is linear).
func (s *sparseNTT) forward(rq *ring.Ring, p ring.Poly, pos []int, mont bool) {
	s.plan(rq.N(), pos)
	s.run(rq, p, pos, mont)
}

// run is forward after plan: the planned stages, then the dense ones.
func (s *sparseNTT) run(rq *ring.Ring, p ring.Poly, pos []int, mont bool) {
	n := rq.N()
	for i, sub := range rq.SubRings[:rq.Level()+1] {
		c, q := p.Coeffs[i][:n], sub.Modulus
		for _, e := range pos {
			if !mont {
				break
			}
			c[e] = ring.MForm(c[e], q, sub.BRedConstant)
		}
		r := rootsOf(sub)
		t, m := n/2, 1
		for _, st := range s.stages {
			if st.copy {
				copyStage(c, t, m)
			} else {
				sparseStage(c, t, m, q, r, s.res[st.lo:st.a], s.res[st.a:st.b], s.res[st.b:st.hi])
			}
			t, m = t/2, 2*m
		}
		dense(c, t, m, q, r)
	}
}

// denseGo runs the stages from stride t (m blocks) down to 1 on every
// pair, two stages a pass while the second's stride is 8 or more, the last
// three in registers, and reduces the result to [0, q).
func denseGo(c []uint64, t, m int, q uint64, r *shoupRoots) {
	for ; t >= 16; t, m = t/4, 4*m {
		radix4(c, t, m, q, r)
	}
	if t == 8 {
		radix2(c, t, m, q, r)
		t, m = t/2, 2*m
	}
	if t == 4 {
		last3(c, q, r)
		return
	}
	for ; t >= 1; t, m = t/2, 2*m {
		radix2(c, t, m, q, r)
	}
	reduceAll(c, q)
}

// denseAsm is denseGo with every pair of stages down to strides 2 and 1
// in radix4Fast, and the stage of stride 1, when left alone, with the
// final reduction in last1Fast (both in assembly on amd64: there a
// sequence of last3's kind would need more registers than it has).
func denseAsm(c []uint64, t, m int, q uint64, r *shoupRoots) {
	for ; t >= 2; t, m = t/4, 4*m {
		radix4Fast(c, t, m, q, r)
	}
	if t == 1 {
		last1Fast(c, q, r)
		return
	}
	reduceAll(c, q)
}

// reduceAll brings every coefficient from [0, 4q) to [0, q).
func reduceAll(c []uint64, q uint64) {
	for j := range c {
		c[j] = reduce4(c[j], q, 2*q)
	}
}
