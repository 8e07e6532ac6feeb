package lattice

// A forward NTT for BinSummer's plaintext W that skips the butterflies on
// zeros. W has one nonzero coefficient per term of a chunk (at most a few
// hundred of n = 8,192), and its NTT was about 36 % of boost's lattice
// path's CPU (docs/boost.md, "The lattice path", profile). The transform is
// Lattigo's standard negacyclic Cooley–Tukey NTT (ring.nttLazy: stages of
// stride t = n/2, n/4, …, 1, the pair (j, j+t) of block i turned by
// roots[m+i], m = n/2t), with other lazy butterflies (nttkernels.go says
// why the result is still Lattigo's bit for bit). Before the stage of stride t the value at position j depends
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
// 64) the stage of stride 32 is all copies. Where the live residues
// bunch (the bins' offsets), two stages run as one radix-4 pass over runs
// of them in assembly, zeros inside the runs included (pairRuns), and the
// stages from the first nearly full one on run densely, two a pass.

import (
	"math/bits"
	"slices"

	"github.com/tuneinsight/lattigo/v6/ring"
)

// sparseNTT is the scratch of sparse forward NTTs (not safe for concurrent
// use; a BinSummer owns one).
type sparseNTT struct {
	flag   []uint8       // by residue mod t: 1 when U is live, 2 when V is
	live   []int32       // scratch of plan: the current stage's live residues
	res    []int32       // every planned stage's residues, by kind, or runs
	stages []nttStage    // the stages run before the dense ones, in order
	spare  []nttStage    // scratch of pairRuns
	bits   []uint64      // scratch of sorted: by residue, a bit
	pos    []int         // scratch of BinSummer.weigh: W's nonzero positions
	seen   []bool        // scratch of BinSummer.weigh: by position, in pos
	roots  []*shoupRoots // by prime of the ring last transformed: its roots (rootsOf)
}

// nttStage is a stage run before the dense ones, of one of three kinds.
// Lists: its residues mod t are res[lo:a] (both halves live), res[a:b]
// (only U) and res[b:hi] (only V). Copy: every V is zero and the residues
// with U live are most of t, so the stage copies each block's first half
// onto its second. Runs: the stages of strides t and t/2 in one radix-4
// pass over the quadruples j of each block with j in one of the ranges
// [res[k], res[k+1]) of res[lo:hi].
type nttStage struct {
	lo, a, b, hi int
	kind         uint8
}

// The kinds of nttStage.
const (
	stageLists = iota
	stageCopy
	stageRuns
)

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
		s.res = s.appendKind(live, 3)
		st.a = len(s.res)
		s.res = s.appendKind(live, 1)
		st.b = len(s.res)
		s.res = s.appendKind(live, 2)
		st.hi = len(s.res)
		for _, r := range live {
			s.flag[r] = 0
		}
		s.live = live
		withV := (st.a - st.lo) + (st.hi - st.b)
		if 4*withV >= 3*t {
			s.res = s.res[:st.lo]
			break
		}
		if withV == 0 && 2*len(live) >= t {
			s.res = s.res[:st.lo]
			st = nttStage{lo: st.lo, a: st.lo, b: st.lo, hi: st.lo, kind: stageCopy}
		}
		s.stages = append(s.stages, st)
	}
	s.pairRuns(n)
}

// appendKind appends to s.res the residues of live flagged kind.
func (s *sparseNTT) appendKind(live []int32, kind uint8) []int32 {
	res := s.res
	for _, r := range live {
		if s.flag[r] == kind {
			res = append(res, r)
		}
	}
	return res
}

// pairRuns replaces two consecutive list stages, from the last up, by one
// radix-4 pass over runs when that is cheaper. The quadruple j of a block
// (positions j, j+t/2, j+t, j+3t/2 for strides t and t/2) has a live
// value only if j is a live residue of the second stage, so runs covering
// those residues cover every live butterfly; the butterflies on zeros
// inside a run give values ≡ 0 mod q (below 4q, like every value), which
// the later stages may skip, copy over or overwrite as they would a zero.
// Runs join live residues less than 8 apart; the radix-4 pass, in
// assembly, costs about 2/5 of a list's butterfly (BenchmarkWeigh).
func (s *sparseNTT) pairRuns(n int) {
	out := s.spare[:0]
	for i := len(s.stages) - 1; i >= 0; i-- {
		up, lo := s.stages[max(i-1, 0)], s.stages[i]
		if i == 0 || up.kind != stageLists || lo.kind != stageLists {
			out = append(out, lo)
			continue
		}
		m := 1 << (i - 1) // the first stage's blocks
		live := s.sorted(s.res[lo.lo:lo.hi])
		st := nttStage{lo: len(s.res), kind: stageRuns}
		quads := 0
		for k := 0; k < len(live); {
			end := k + 1
			for end < len(live) && live[end]-live[end-1] < 8 {
				end++
			}
			s.res = append(s.res, live[k], live[end-1]+1)
			quads += m * int(live[end-1]+1-live[k])
			k = end
		}
		st.hi = len(s.res)
		if ops := m*(up.hi-up.lo) + 2*m*(lo.hi-lo.lo); 8*quads >= 5*ops {
			s.res = s.res[:st.lo]
			out = append(out, lo)
			continue
		}
		out = append(out, st)
		i--
	}
	slices.Reverse(out)
	s.stages, s.spare = out, s.stages
}

// sorted returns the distinct residues res (each below n/2) in ascending
// order, in s.live: through a bitmap, as sorting them took a third of the
// plan's time.
func (s *sparseNTT) sorted(res []int32) []int32 {
	hi := int32(0)
	for _, r := range res {
		hi = max(hi, r)
	}
	words := int(hi)/64 + 1
	if len(s.bits) < words {
		s.bits = make([]uint64, words)
	}
	for _, r := range res {
		s.bits[r/64] |= 1 << (r % 64)
	}
	live := s.live[:0]
	for k, w := range s.bits[:words] {
		for ; w != 0; w &= w - 1 {
			live = append(live, int32(64*k+bits.TrailingZeros64(w)))
		}
		s.bits[k] = 0
	}
	s.live = live
	return live
}

// forward sets p, whose coefficients are zero but at the distinct
// positions pos (each below its modulus), to its NTT modulo every prime of
// rq, each coefficient reduced to [0, q): what rq.NTT gives, and with mont
// what rq.NTT then rq.MForm give (Montgomery form first, on the nonzeros
// only: the NTT is linear).
func (s *sparseNTT) forward(rq *ring.Ring, p ring.Poly, pos []int, mont bool) {
	for _, q := range rq.ModuliChain()[:rq.Level()+1] {
		// Lattigo's NTT is only right below 2^61 (its MRedLazy of
		// U+4q−V, ring/ntt.go), and the output must be its output.
		if q >= 1<<61 {
			rq.NTT(p, p)
			if mont {
				rq.MForm(p, p)
			}
			return
		}
	}
	s.plan(rq.N(), pos)
	s.run(rq, p, pos, mont)
}

// full sets p, each coefficient below its prime, to its NTT modulo every
// prime of rq, each reduced to [0, q): what rq.NTT gives, by the dense
// kernels alone (a fresh encryption's u and errors, binsums_fresh.go).
func (s *sparseNTT) full(rq *ring.Ring, p ring.Poly) {
	for _, q := range rq.ModuliChain()[:rq.Level()+1] {
		if q >= 1<<61 { // as forward: Lattigo's output, which must be matched, is only right below
			rq.NTT(p, p)
			return
		}
	}
	n := rq.N()
	for i, sub := range rq.SubRings[:rq.Level()+1] {
		dense(p.Coeffs[i][:n], n/2, 1, sub.Modulus, s.rootsFor(i, sub))
	}
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
		r := s.rootsFor(i, sub)
		t, m := n/2, 1
		for x := 0; x < len(s.stages); x++ {
			switch st := s.stages[x]; st.kind {
			case stageCopy: // with the copy stages right after it, at once
				k := 1
				for x+k < len(s.stages) && s.stages[x+k].kind == stageCopy {
					k++
				}
				replicate(c, t, m, k)
				x += k - 1
				t, m = t>>(k-1), m<<(k-1)
			case stageRuns:
				for k := st.lo; k < st.hi; k += 2 {
					radix4Fast(c, t, m, q, r, int(s.res[k]), int(s.res[k+1]))
				}
				t, m = t/2, 2*m
			default:
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
		radix4(c, t, m, q, r, 0, t/2)
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

// denseAsm is denseGo with the kernels in assembly on amd64: every pair
// of stages down to stride 4 or 8 in radix4Fast, then the last three in
// last3Fast, or the last two in radix4Fast and the final reduction, or the
// last one alone with it in last1Fast.
func denseAsm(c []uint64, t, m int, q uint64, r *shoupRoots) {
	for ; t >= 16 || t == 8 || t == 2; t, m = t/4, 4*m {
		radix4Fast(c, t, m, q, r, 0, t/2)
	}
	switch t {
	case 4:
		last3Fast(c, q, r)
	case 1:
		last1Fast(c, q, r)
	default: // 0: every stage done
		reduceAll(c, q)
	}
}

// reduceAll brings every coefficient from [0, 4q) to [0, q).
func reduceAll(c []uint64, q uint64) {
	for j := range c {
		c[j] = reduce4(c[j], q, 2*q)
	}
}
