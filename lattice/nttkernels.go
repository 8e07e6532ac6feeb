package lattice

// The butterflies and stage kernels of sparseNTT.forward. They compute the
// transform of Lattigo's standard negacyclic NTT (the same roots, in the
// same order) but with Harvey's lazy butterfly and Shoup's multiplication
// by a root instead of Lattigo's Montgomery one: the forward NTT is a fixed
// linear map modulo q, so any sequence of operations that keeps every
// value congruent modulo q to the one of Lattigo's butterflies, and ends
// with each coefficient reduced to [0, q), yields its output bit for bit.
//
// Bounds: every value lies in [0, 4q) between stages (forward takes
// q < 2^61, so 4q fits 64 bits). A butterfly brings U below 2q, takes T = V·ω lazily in [0, 2q)
// (Shoup: for any V < 2^64), and writes U + T and U − T + 2q, both in
// [0, 4q). Shoup's product costs one full and two low multiplications
// where Montgomery's costs two full and one low, on a shorter dependency
// chain.

import (
	"math/bits"
	"slices"

	"github.com/tuneinsight/lattigo/v6/ring"
)

// shoupRoots are one prime's forward NTT roots in Lattigo's order
// (RootsForward: the stage of m blocks turns block i by w[m+i]), in
// standard form, with their Shoup companions wp[k] = ⌊w[k]·2^64/q⌋.
type shoupRoots struct {
	q, psi uint64 // the prime and its primitive 2n-th root: they fix the rest
	w, wp  []uint64
	wi     []uint64 // w and wp interleaved, for the assembly
	// w8 has, for each eight coefficients b, the pairs (w, wp) of the
	// last three stages' roots in last3's order (indices n/8+b, n/4+2b,
	// n/4+2b+1, n/2+4b, …, n/2+4b+3): one pointer for all seven leaves
	// last3Asm registers for the eight values.
	w8 []uint64
}

// useRoots starts s from p's roots (Params.roots), which rootsFor still
// checks against the ring it is given.
func (s *sparseNTT) useRoots(p Params) {
	s.roots = slices.Clone(p.roots)
}

// rootsFor returns the roots of prime i of the ring being transformed:
// those useRoots gave, or made once per sparseNTT (n divisions a prime)
// and made again if the ring's prime i is another.
func (s *sparseNTT) rootsFor(i int, sub *ring.SubRing) *shoupRoots {
	if i >= len(s.roots) {
		s.roots = append(s.roots, make([]*shoupRoots, i+1-len(s.roots))...)
	}
	if r := s.roots[i]; r != nil && r.q == sub.Modulus && r.psi == sub.RootsForward[1] && len(r.w) == len(sub.RootsForward) {
		return r
	}
	s.roots[i] = rootsOf(sub)
	return s.roots[i]
}

// rootsOf returns sub's forward roots with their Shoup companions.
func rootsOf(sub *ring.SubRing) *shoupRoots {
	f, q := sub.RootsForward, sub.Modulus
	r := &shoupRoots{q: q, psi: f[1], w: make([]uint64, len(f)), wp: make([]uint64, len(f)), wi: make([]uint64, 2*len(f))}
	for k, x := range f {
		w := ring.IMForm(x, q, sub.MRedConstant) // in [0, q), as Div64 needs
		r.w[k] = w
		r.wp[k], _ = bits.Div64(w, 0, q)
		r.wi[2*k], r.wi[2*k+1] = r.w[k], r.wp[k]
	}
	n := sub.N
	for b := range n / 8 {
		for _, k := range [7]int{n/8 + b, n/4 + 2*b, n/4 + 2*b + 1, n/2 + 4*b, n/2 + 4*b + 1, n/2 + 4*b + 2, n/2 + 4*b + 3} {
			r.w8 = append(r.w8, r.w[k], r.wp[k])
		}
	}
	return r
}

// mulShoup is a·w modulo q in [0, 2q), for any a < 2^64, w < q and
// wp = ⌊w·2^64/q⌋: the quotient estimate ⌊a·wp/2^64⌋ is at most one below
// ⌊a·w/q⌋, and the remainder fits 64 bits as 2q does.
func mulShoup(a, w, wp, q uint64) uint64 {
	hi, _ := bits.Mul64(a, wp)
	return a*w - hi*q
}

// bfly is Harvey's butterfly: (U, V) in [0, 4q) to U + V·ω and U − V·ω,
// lazily in [0, 4q); q2 is 2q.
func bfly(u, v, w, wp, q, q2 uint64) (uint64, uint64) {
	if u >= q2 {
		u -= q2
	}
	t := mulShoup(v, w, wp, q)
	return u + t, u - t + q2
}

// reduce4 brings a value of [0, 4q) to [0, q).
func reduce4(v, q, q2 uint64) uint64 {
	if v >= q2 {
		v -= q2
	}
	if v >= q {
		v -= q
	}
	return v
}

// radix2 runs the stage of stride t (m blocks) on every pair.
func radix2(c []uint64, t, m int, q uint64, r *shoupRoots) {
	q2 := 2 * q
	for i := range m {
		w, wp := r.w[m+i], r.wp[m+i]
		a := c[2*i*t : 2*i*t+t]
		b := c[2*i*t+t : 2*i*t+2*t][:len(a)] // one length: no bounds checks
		for j := range a {
			a[j], b[j] = bfly(a[j], b[j], w, wp, q, q2)
		}
	}
}

// radix4 runs the stages of strides t and t/2 (m blocks, then 2m) in one
// pass over memory, on the quadruples j of each block with lo ≤ j < hi
// (all: 0, t/2): each is loaded and stored once for both stages.
func radix4(c []uint64, t, m int, q uint64, r *shoupRoots, lo, hi int) {
	q2, h := 2*q, t/2
	for i := range m {
		w1, p1 := r.w[m+i], r.wp[m+i]
		w2, p2 := r.w[2*m+2*i], r.wp[2*m+2*i]
		w3, p3 := r.w[2*m+2*i+1], r.wp[2*m+2*i+1]
		blk := c[2*i*t : 2*i*t+2*t]
		a0 := blk[lo:hi]
		a1 := blk[h+lo : h+hi][:len(a0)]
		a2 := blk[t+lo : t+hi][:len(a0)]
		a3 := blk[t+h+lo : t+h+hi][:len(a0)]
		for j := range a0 {
			x0, x2 := bfly(a0[j], a2[j], w1, p1, q, q2)
			x1, x3 := bfly(a1[j], a3[j], w1, p1, q, q2)
			a0[j], a1[j] = bfly(x0, x1, w2, p2, q, q2)
			a2[j], a3[j] = bfly(x2, x3, w3, p3, q, q2)
		}
	}
}

// last3 runs the stages of strides 4, 2 and 1 on each eight coefficients in
// registers and leaves them reduced to [0, q): the transform's end.
func last3(c []uint64, q uint64, r *shoupRoots) {
	q2, n := 2*q, len(c)
	w4, p4 := r.w[n/8:n/4], r.wp[n/8:n/4]
	w2, p2 := r.w[n/4:n/2], r.wp[n/4:n/2]
	w1, p1 := r.w[n/2:n], r.wp[n/2:n]
	for b := range n / 8 {
		u := (*[8]uint64)(c[8*b : 8*b+8])
		f, fp := w4[b], p4[b]
		x0, x4 := bfly(u[0], u[4], f, fp, q, q2)
		x1, x5 := bfly(u[1], u[5], f, fp, q, q2)
		x2, x6 := bfly(u[2], u[6], f, fp, q, q2)
		x3, x7 := bfly(u[3], u[7], f, fp, q, q2)
		g, gp := (*[2]uint64)(w2[2*b:]), (*[2]uint64)(p2[2*b:])
		x0, x2 = bfly(x0, x2, g[0], gp[0], q, q2)
		x1, x3 = bfly(x1, x3, g[0], gp[0], q, q2)
		x4, x6 = bfly(x4, x6, g[1], gp[1], q, q2)
		x5, x7 = bfly(x5, x7, g[1], gp[1], q, q2)
		h, hp := (*[4]uint64)(w1[4*b:]), (*[4]uint64)(p1[4*b:])
		x0, x1 = bfly(x0, x1, h[0], hp[0], q, q2)
		x2, x3 = bfly(x2, x3, h[1], hp[1], q, q2)
		x4, x5 = bfly(x4, x5, h[2], hp[2], q, q2)
		x6, x7 = bfly(x6, x7, h[3], hp[3], q, q2)
		u[0], u[1] = reduce4(x0, q, q2), reduce4(x1, q, q2)
		u[2], u[3] = reduce4(x2, q, q2), reduce4(x3, q, q2)
		u[4], u[5] = reduce4(x4, q, q2), reduce4(x5, q, q2)
		u[6], u[7] = reduce4(x6, q, q2), reduce4(x7, q, q2)
	}
}

// last1 runs the stage of stride 1 and leaves its results reduced to
// [0, q): the transform's end.
func last1(c []uint64, q uint64, r *shoupRoots) {
	q2, n := 2*q, len(c)
	w, wp := r.w[n/2:n], r.wp[n/2:n]
	for j := range n / 2 {
		u := (*[2]uint64)(c[2*j : 2*j+2])
		x, y := bfly(u[0], u[1], w[j], wp[j], q, q2)
		u[0], u[1] = reduce4(x, q, q2), reduce4(y, q, q2)
	}
}

// sparseStage runs the stage of stride t (m blocks) on the pairs of the
// residues mod t in full (both halves live), uOnly (V is zero: the
// butterfly copies U) and vOnly (U is zero: it gives V·ω and −V·ω); the
// other pairs are zeros and stay so.
func sparseStage(c []uint64, t, m int, q uint64, r *shoupRoots, full, uOnly, vOnly []int32) {
	q2 := 2 * q
	for i := range m {
		w, wp := r.w[m+i], r.wp[m+i]
		blk := c[2*i*t : 2*i*t+2*t]
		a, b := blk[:t], blk[t:2*t]
		for _, j := range full {
			a[j], b[j] = bfly(a[j], b[j], w, wp, q, q2)
		}
		for _, j := range uOnly {
			b[j] = a[j]
		}
		for _, j := range vOnly {
			x := mulShoup(b[j], w, wp, q)
			a[j], b[j] = x, q2-x
		}
	}
}

// replicate runs k consecutive copy stages (every V zero, so each copies
// its blocks' first halves onto their second) from stride t (m blocks)
// on, at once: each block of 2t ends as its first w = t/2^(k−1) values
// over and over. The copy stages a W's sparse transform ends with are
// strides 4 and 2 on a9a's layouts, where a stage at a time made a call to
// copy for every two or four values (a quarter of a W's time); here short
// runs are copied value by value, long ones by doubling copies.
func replicate(c []uint64, t, m, k int) {
	w := t >> (k - 1)
	for i := range m {
		b := c[2*i*t : 2*(i+1)*t]
		if w >= 16 {
			for p := w; p < len(b); p *= 2 {
				copy(b[p:2*p], b[:p])
			}
			continue
		}
		for p := w; p < len(b); p++ {
			b[p] = b[p-w]
		}
	}
}
