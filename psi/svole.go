package psi

import (
	"math"
	"math/bits"
	mrand "math/rand/v2"
)

// Silent VOLE over GF(2^128) (package doc, "VOLE mode"): the dual-LPN
// pseudorandom correlation generator of Boyle, Couteau, Gilboa, Ishai,
// Kohl and Scholl ("Efficient Pseudorandom Correlation Generators: Silent
// OT Extension and More", CRYPTO 2019, §5), with the single-point VOLEs
// of Weng, Yang, Katz and Wang ("Wolverine", IEEE S&P 2021, §3) built
// from GGM trees and the correlated OTs of cot.go, and the
// expand-accumulate code of Boyle, Couteau, Gilboa, Ishai, Kohl, Resch
// and Scholl ("Correlated Pseudorandomness from Expand-Accumulate
// Codes", CRYPTO 2022) as the compressing matrix H.
//
// The chooser (PSI receiver) ends with A, C ∈ GF(2^128)^m and the other
// side with Δ and B, C = B + A·Δ: a regular noise vector e of length N =
// trees·per with one nonzero entry in each block of per positions, t
// single-point VOLEs giving w (chooser) and v (sender) with w = v + e·Δ,
// and then A = H·e, C = H·w, B = H·v.

// eaGatherAsm sums exactly 11 positions per output: a constant overflow
// here if eaWeight changes.
const _, _ = uint(eaWeight - 11), uint(11 - eaWeight)

const (
	// eaScale is N/m: the noise vector is 5 times the output (libOTe's
	// configuration of the EA code, EAConfigure).
	eaScale = 5
	// eaWeight is the expander's weight: each output sums 11 accumulated
	// positions (libOTe's ExAcc11).
	eaWeight = 11
	// eaMinDist is the relative minimum distance d/N the noise weight is
	// computed from for ExAcc11 (libOTe's EAConfigure).
	eaMinDist = 0.1
	// voleSecurity is the computational security level in bits.
	voleSecurity = 128
)

// voleParams is the shape of one silent VOLE of m outputs.
type voleParams struct {
	m     int // outputs
	trees int // t: noise weight, one GGM tree per block
	depth int // log2 per
	per   int // block size, a power of two
}

// minNoise is the least noise weight t for 128 bits against linear
// tests: (1 − 2d)^t ≤ 2^-128 with d = eaMinDist, i.e. t ≥ −128 /
// log2(1 − 2d) = 397.6 (libOTe's getRegNoiseWeight), rounded up.
var minNoise = int(math.Ceil(-voleSecurity / math.Log2(1-2*eaMinDist)))

// newVoleParams picks the block size as the largest power of two
// (at least 2) with ⌈eaScale·m/per⌉ ≥ minNoise blocks: N ≥ 5m and t ≥ 398.
func newVoleParams(m int) voleParams {
	n0 := eaScale * m
	depth := 1
	for n0/(1<<(depth+1)) >= minNoise {
		depth++
	}
	per := 1 << depth
	return voleParams{m: m, trees: max(minNoise, (n0+per-1)/per), depth: depth, per: per}
}

// noiseLen is N.
func (p voleParams) noiseLen() int { return p.trees * p.per }

// cots is the number of correlated OTs one VOLE takes: depth per tree
// for the GGM levels, then 128 per tree for its base VOLE (cotRows rounds).
func (p voleParams) cots() int { return p.trees * (p.depth + voleWidth) }

// ggmIndex is the correlated OT of tree j's level l (1-based).
func (p voleParams) ggmIndex(j, l int) int { return j*p.depth + l - 1 }

// baseIndex is the first of tree j's 128 base-VOLE correlated OTs.
func (p voleParams) baseIndex(j int) int { return p.trees*p.depth + j*voleWidth }

// foldBase turns 128 correlated OTs x_0..x_127 into one VOLE element
// Σ_k x_k·X^k: applied to q it gives b, to t it gives c, and the
// chooser's bits read as a polynomial give a, with b = c + a·Δ.
func foldBase(x []gf) gf {
	var r gf
	for k := voleWidth - 1; k >= 0; k-- {
		r = r.mulX().add(x[k])
	}
	return r
}

// ggm is the GGM tree's length-doubling PRG: fixed-key AES in the
// Matyas–Meyer–Oseas form, left = π0(s) ⊕ s and right = π1(s) ⊕ s,
// under two keys every party derives from the same label (Guo, Katz,
// Wang and Yu, "Efficient and Secure Multiparty Computation from
// Fixed-Key Block Ciphers", IEEE S&P 2020, §5). A level's parents are
// encrypted as one batch per key (fixedAES), the same function as one
// cipher.Block call per node.
type ggm struct{ k0, k1 *fixedAES }

func newGGM() ggm {
	var seed [32]byte
	copy(seed[:], "cohort-psi-vole-v1:ggm")
	return ggm{newFixedAES(derive(seed, "left")), newFixedAES(derive(seed, "right"))}
}

// level expands the 2^(l−1) nodes at the front of nodes into the 2^l
// nodes of the next level in place and returns the XOR of the even and
// of the odd children. The parent at index skip (−1 for none) is not
// expanded: its children are left zero. scratch holds 2^l elements, so
// that a level allocates nothing.
func (g ggm) level(nodes []gf, l, skip int, scratch []gf) (even, odd gf) {
	n := 1 << (l - 1)
	left, right := scratch[:n], scratch[n:2*n]
	g.k0.encrypt(left, nodes[:n])
	g.k1.encrypt(right, nodes[:n])
	// Back to front, so that no parent is overwritten before it is read.
	for i := n - 1; i >= 0; i-- {
		if i == skip {
			nodes[2*i], nodes[2*i+1] = gf{}, gf{}
			continue
		}
		s := nodes[i]
		nodes[2*i], nodes[2*i+1] = left[i].add(s), right[i].add(s)
		even, odd = even.add(nodes[2*i]), odd.add(nodes[2*i+1])
	}
	return even, odd
}

// senderTree expands tree j from seed into leaves (per elements) and
// returns its level messages: for level l, the even and odd sums masked
// with the random OTs of correlated OT ggmIndex(j, l), 2·depth elements.
func (p voleParams) senderTree(g ggm, j int, seed gf, leaves []gf, q []gf, delta gf, scratch []gf) []gf {
	msg := make([]gf, 2*p.depth)
	leaves[0] = seed
	for l := 1; l <= p.depth; l++ {
		even, odd := g.level(leaves, l, -1, scratch)
		i := p.ggmIndex(j, l)
		msg[2*l-2] = even.add(cotHash(i, q[i]))
		msg[2*l-1] = odd.add(cotHash(i, q[i].add(delta)))
	}
	return msg
}

// chooserTree rebuilds tree j's leaves but the one at alpha from its
// level messages msg and the chooser's correlated OTs t, whose choice
// bit at level l was the complement of alpha's bit at that level (most
// significant first). The leaf at alpha is left zero.
func (p voleParams) chooserTree(g ggm, j, alpha int, msg []gf, t []gf, leaves []gf, scratch []gf) {
	leaves[0] = gf{}
	for l := 1; l <= p.depth; l++ {
		path := alpha >> (p.depth - l)                   // the unknown node at level l
		parent := path >> 1                              // the unknown node at level l−1
		even, odd := g.level(leaves, l, parent, scratch) // parent's children left zero
		c := 1 - path&1                                  // the sibling's side
		i := p.ggmIndex(j, l)
		k := msg[2*l-2+c].add(cotHash(i, t[i])) // the sum over side c
		sum := even
		if c == 1 {
			sum = odd
		}
		leaves[path^1] = k.add(sum)
	}
}

// eaBatch is the number of outputs whose expander indices are drawn at
// once: the gathers of a batch then run back to back, so that the memory
// system overlaps their cache misses (N elements do not fit in cache).
const eaBatch = 256

// eaExpander draws the expander's indices: eaWeight per output, uniform
// in [0, N) (multiply-shift of a 64-bit draw: a bias below N/2^64), from a
// public PRG keyed by the joint seed, in output order. The PRG is AES-128
// in counter mode (fixedAES over the counters, two draws per block),
// about five times cheaper here than math/rand's ChaCha8 one draw at a
// time; the code only needs the indices to look random to whoever picks
// the noise, and both are pseudorandom functions of the seed.
type eaExpander struct {
	aes *fixedAES
	ctr uint64
	n   uint64
	blk [eaBatch * eaWeight / 2]gf
	idx [eaBatch * eaWeight]uint32
}

func newEAExpander(seed [32]byte, n int) *eaExpander {
	return &eaExpander{aes: newFixedAES(seed[:16]), n: uint64(n)}
}

// next draws the indices of the next cnt ≤ eaBatch outputs.
func (e *eaExpander) next(cnt int) []uint32 {
	idx := e.idx[:cnt*eaWeight]
	blk := e.blk[:(len(idx)+1)/2]
	for i := range blk {
		blk[i] = gf{e.ctr, 0}
		e.ctr++
	}
	e.aes.encrypt(blk, blk)
	for i := 0; i+1 < len(idx); i += 2 {
		lo, _ := bits.Mul64(blk[i/2].lo, e.n)
		hi, _ := bits.Mul64(blk[i/2].hi, e.n)
		idx[i], idx[i+1] = uint32(lo), uint32(hi)
	}
	if len(idx)%2 == 1 {
		lo, _ := bits.Mul64(blk[len(blk)-1].lo, e.n)
		idx[len(idx)-1] = uint32(lo)
	}
	return idx
}

// accumulate sets x_i = x_0 + … + x_i in place.
func accumulate(x []gf) { accumulateFrom(x, gf{}) }

// accumulateFrom sets x_i = carry + x_0 + … + x_i in place and returns
// the last, the carry of the block that follows. The silent VOLE
// accumulates each GGM tree's leaves as soon as they are made, while
// they are in cache, rather than the whole N-vector in a pass of its own.
func accumulateFrom(x []gf, carry gf) gf {
	for i := range x {
		carry = carry.add(x[i])
		x[i] = carry
	}
	return carry
}

// gatherGo writes to out[k] the sum of x at the eaWeight indices of
// output k: gather without assembly.
func gatherGo(out []gf, x []gf, idx []uint32) {
	for k := range out {
		var v gf
		for _, i := range idx[k*eaWeight : (k+1)*eaWeight] {
			v = v.add(x[i])
		}
		out[k] = v
	}
}

// eaEncode is H·x into out (m outputs): x (length N ≤ 2^32) is
// accumulated in place and each output is the sum of eaWeight positions
// of it (eaExpander).
func eaEncode(out []gf, x []gf, seed [32]byte) {
	accumulate(x)
	eaGather(out, x, seed)
}

// eaGather is eaEncode of an x accumulated already.
func eaGather(out []gf, x []gf, seed [32]byte) {
	e := newEAExpander(seed, len(x))
	m := len(out)
	for lo := 0; lo < m; lo += eaBatch {
		hi := min(m, lo+eaBatch)
		gather(out[lo:hi], x, e.next(hi-lo))
	}
}

// voleChoice is the chooser's secret input to one silent VOLE: the noise
// position alpha_j in each block and its value a_j ≠ 0, and the choice
// bits of the correlated OTs they fix (cotRows(cots) bits).
type voleChoice struct {
	alpha []int
	a     []gf
	bits  []byte
}

// newVoleChoice draws the chooser's input from rng (a CSPRNG).
func (p voleParams) newVoleChoice(rng *mrand.ChaCha8) *voleChoice {
	c := &voleChoice{alpha: make([]int, p.trees), a: make([]gf, p.trees), bits: make([]byte, cotRows(p.cots())/8)}
	set := func(i, b int) { c.bits[i/8] |= byte(b) << (i % 8) }
	for j := range p.trees {
		c.alpha[j] = int(rng.Uint64() % uint64(p.per)) // per is a power of two: uniform
		for l := 1; l <= p.depth; l++ {
			set(p.ggmIndex(j, l), 1-(c.alpha[j]>>(p.depth-l))&1)
		}
		for c.a[j] == (gf{}) {
			c.a[j] = gf{rng.Uint64(), rng.Uint64()}
		}
		for k := range voleWidth {
			w := c.a[j].lo >> k
			if k >= 64 {
				w = c.a[j].hi >> (k - 64)
			}
			set(p.baseIndex(j)+k, int(w&1))
		}
	}
	return c
}

// treeMsgLen is the number of elements the sender sends per tree: two
// masked sums per level and γ_j.
func (p voleParams) treeMsgLen() int { return 2*p.depth + 1 }

// senderVOLE is the Δ holder's side from its correlated OTs q: it
// expands a GGM tree from a fresh seed per block, and returns B = H·v
// and its message, per tree the masked level sums and γ_j = b_j + Σ_i
// v_j[i] (b_j its base VOLE share). The seeds come from rng (a CSPRNG).
// The noise vector is taken from sc (nil: the heap) and released on
// return; B comes from the heap (it outlives the arena, voleSend).
func (p voleParams) senderVOLE(q []gf, delta gf, eaSeed [32]byte, rng *mrand.ChaCha8, sc *scratch) (b []gf, msg []gf) {
	g := newGGM()
	b = make([]gf, p.m)
	defer sc.release(sc.mark()) // v is read last by eaGather
	v := take[gf](sc, p.noiseLen())
	msg = make([]gf, 0, p.trees*p.treeMsgLen())
	scratch := make([]gf, p.per)
	var carry gf // v_0 + … up to the tree before j
	for j := range p.trees {
		leaves := v[j*p.per : (j+1)*p.per]
		msg = append(msg, p.senderTree(g, j, gf{rng.Uint64(), rng.Uint64()}, leaves, q, delta, scratch)...)
		next := accumulateFrom(leaves, carry) // the EA code's accumulation
		// γ_j = b_j + Σ_i v_j[i], the sum being next − carry.
		msg = append(msg, foldBase(q[p.baseIndex(j):p.baseIndex(j)+voleWidth]).add(next).add(carry))
		carry = next
	}
	eaGather(b, v, eaSeed)
	return b, msg
}

// chooserVOLE is the chooser's side from its correlated OTs t, its
// choice c and the sender's message: w_j is tree j's leaves with
// w_j[α_j] = γ_j + c_j + Σ_{i≠α_j} v_j[i] = v_j[α_j] + a_j·Δ, e_j is a_j
// at α_j; it returns A = H·e and C = H·w. A, C and the noise vector are
// taken from sc (nil: the heap); the noise vector is released on return.
func (p voleParams) chooserVOLE(t []gf, c *voleChoice, msg []gf, eaSeed [32]byte, sc *scratch) (a, cc []gf) {
	g := newGGM()
	a, cc = take[gf](sc, p.m), take[gf](sc, p.m)
	defer sc.release(sc.mark()) // w is read last by eaEncodeChooser
	w := take[gf](sc, p.noiseLen())
	scratch := make([]gf, p.per)
	var carry gf // w_0 + … up to the tree before j
	for j := range p.trees {
		leaves := w[j*p.per : (j+1)*p.per]
		tm := msg[j*p.treeMsgLen() : (j+1)*p.treeMsgLen()]
		p.chooserTree(g, j, c.alpha[j], tm[:2*p.depth], t, leaves, scratch)
		x := tm[2*p.depth].add(foldBase(t[p.baseIndex(j) : p.baseIndex(j)+voleWidth]))
		for _, l := range leaves {
			x = x.add(l)
		}
		leaves[c.alpha[j]] = x
		carry = accumulateFrom(leaves, carry) // the EA code's accumulation
	}
	p.eaEncodeChooser(a, cc, c, w, eaSeed)
	return a, cc
}

// eaEncodeChooser sets a to the chooser's H·e and cc to H·w (m outputs
// each, w accumulated already) over one draw of the expander's indices. e, its regular noise, is never written out:
// accumulated, it is constant between noise positions, so position i of
// block j holds a_0 + … + a_{j−1}, plus a_j from α_j on.
func (p voleParams) eaEncodeChooser(a, cc []gf, c *voleChoice, w []gf, seed [32]byte) {
	before := make([]gf, p.trees+1) // before[j] = a_0 + … + a_{j−1}
	for j, x := range c.a {
		before[j+1] = before[j].add(x)
	}
	e := newEAExpander(seed, len(w))
	for lo := 0; lo < p.m; lo += eaBatch {
		hi := min(p.m, lo+eaBatch)
		idx := e.next(hi - lo)
		gather(cc[lo:hi], w, idx)
		for k := lo; k < hi; k++ {
			var v gf
			for _, i := range idx[(k-lo)*eaWeight : (k-lo+1)*eaWeight] {
				j, off := int(i)>>p.depth, int(i)&(p.per-1)
				// a_j is added from α_j on: a mask, not a branch on the
				// secret noise position (a coin flip to the predictor).
				m := uint64(int64(c.alpha[j]-1-off) >> 63) // all ones iff off ≥ α_j
				v = v.add(before[j]).add(gf{c.a[j].lo & m, c.a[j].hi & m})
			}
			a[k] = v
		}
	}
}
