package psi

import (
	"errors"
	"math/bits"
	mrand "math/rand/v2"
)

// The VOLE mode's oblivious key-value store: the random-band OKVS
// (RB-OKVS) of Bienstock, Patel, Seo and Yeo, "Near-Optimal Oblivious
// Key-Value Stores for Efficient PSI, PSU and Volume-Hiding Multi-Maps"
// (USENIX Security 2023), the successor of the binary-band OKVS of
// Rindal and Raghuraman's RR22. Each key k is a row of a random band: a
// start column s(k) in [0, m−w] and w pseudorandom bits b(k); encoding n
// pairs (k_i, v_i) solves Σ_j b(k_i)_j·P[s(k_i)+j] = v_i for the m-vector
// P over GF(2^128) by Gaussian elimination in the order of the starts,
// and decoding a key is the XOR of the ≤ w columns its band selects.
//
// Parameters (package doc): m = ⌈(1+ε)·n⌉ + w with ε = 0.1 and w = 256.
// The paper's fit of its experiments, λ ≈ 0.2691·w − 15.21 at ε = 0.1
// (its §5), puts the failure probability of one encoding near 2^-53 at
// w = 256; a failure is retried with fresh hash keys (okvsAttempts).

const (
	// okvsBand is w, the band width in bits.
	okvsBand = 256
	// okvsWords is the band in 64-bit words.
	okvsWords = okvsBand / 64
	// okvsAttempts bounds the encodings tried with fresh keys.
	okvsAttempts = 4
)

// okvsEpsilon is ε: m is (1+ε)·n columns plus one band.
const okvsEpsilon = 0.1

// errOKVS is an encoding that found a dependent row: retried with the
// next attempt's keys.
var errOKVS = errors.New("psi: OKVS rows are linearly dependent")

// okvsSize is m for n keys.
func okvsSize(n int) int {
	return int(float64(n)*(1+okvsEpsilon)+0.999999) + okvsBand
}

// A key's row is its start column, its band ([okvsWords]uint64: bit j
// of word j/64 is column start+j) and its value.

// okvsHasher maps digests to rows: AES-128 under a key derived from the
// joint seed and the attempt, as a pseudorandom function of the digest.
type okvsHasher struct {
	m     int
	block *fixedAES
	avx2  bool // sum uses bandSumAVX2
}

func newOKVSHasher(seed [32]byte, attempt, m int) okvsHasher {
	return okvsHasher{m: m, block: newFixedAES(derive(seed, "okvs", attempt)), avx2: avx2Available()}
}

// sum is bandSum, with AVX2 where the CPU has it (bandsum_amd64.s):
// branch-free, two columns per instruction, where bandSum takes a
// bit-scan and a branch per selected column. Not constant time in the
// key either way: the window read starts at the key's start column, and
// bandSum's branches and reads follow its band (the AVX2 code reads the
// whole window whatever the band). A cache-timing channel open to code
// on the same machine only, as with gfTable.
func (h okvsHasher) sum(p *[okvsBand]gf, band *[okvsWords]uint64) gf {
	if h.avx2 {
		return bandSumAVX2(&p[0], band)
	}
	return bandSum(p, band)
}

// okvsBatch is the number of keys whose AES blocks are encrypted in one
// fixedAES call: enough to keep its pipeline full, little enough for
// the scratch to stay in L1.
const okvsBatch = 128

// okvsInput is the AES input j (0, 1: the band; 2: the start) of digest
// d: d with the low two bits of its last byte set to j.
func okvsInput(d *[digestLen]byte, j uint64) gf {
	x := gfFrom(d[:])
	x.hi = x.hi&^(3<<56) | j<<56
	return x
}

// sortedKeys computes each key's start (from its input 2, one AES
// block per key, a batch at a time) and returns the keys' indices in the
// order of their starts and those starts, ties in the order of the
// indices. Both the encoder and the decoder then walk the keys in this
// order, so that consecutive keys touch overlapping columns. The tables
// come from sc (nil: the heap).
func (h okvsHasher) sortedKeys(ds [][digestLen]byte, sc *scratch) (order, sorted []int32) {
	order, sorted = take[int32](sc, len(ds)), take[int32](sc, len(ds))
	defer sc.release(sc.mark())       // the keys being sorted
	keys := take[uint64](sc, len(ds)) // start<<32 | index
	var buf [2 * okvsBatch]gf
	for lo := 0; lo < len(ds); lo += len(buf) {
		blk := buf[:min(len(buf), len(ds)-lo)]
		for k := range blk {
			blk[k] = okvsInput(&ds[lo+k], 2)
		}
		h.block.encrypt(blk, blk)
		for k, e := range blk {
			keys[lo+k] = uint64(h.startOf(e))<<32 | uint64(lo+k)
		}
	}
	keys = radixSortHigh(keys, take[uint64](sc, len(ds)), bits.Len(uint(h.m)))
	for k, x := range keys {
		order[k], sorted[k] = int32(uint32(x)), int32(x>>32)
	}
	return order, sorted
}

// radixSortHigh sorts keys by their bits 32 to 32+width−1 (the bits
// above are zero), stably, with tmp as room of the same length, and
// returns the one of the two that holds the result. A counting sort over
// all m starts took a cache miss per key in its m-entry table; this
// takes passes of at most 12 bits each (two at 2^20 keys), whose
// histograms stay in L1 and whose scatter writes go to at most 4096
// places at a time.
func radixSortHigh(keys, tmp []uint64, width int) []uint64 {
	passes := max(1, (width+11)/12)
	digit := (width + passes - 1) / passes
	mask := uint64(1)<<digit - 1
	count := make([]int, 1<<digit)
	for shift := 32; shift < 32+width; shift += digit {
		clear(count)
		for _, x := range keys {
			count[x>>shift&mask]++
		}
		sum := 0
		for d, c := range count {
			count[d], sum = sum, sum+c
		}
		for _, x := range keys {
			d := x >> shift & mask
			tmp[count[d]] = x
			count[d]++
		}
		keys, tmp = tmp, keys
	}
	return keys
}

// bands writes the band of key ds[k] to out[k], for len(ds) ≤ okvsBatch
// keys: the encryptions of its inputs 0 and 1, with bit 0 forced to 1 so
// that no row is empty.
func (h okvsHasher) bands(out [][okvsWords]uint64, ds [][digestLen]byte) {
	var buf [2 * okvsBatch]gf
	blk := buf[:2*len(ds)]
	for k := range ds {
		blk[2*k], blk[2*k+1] = okvsInput(&ds[k], 0), okvsInput(&ds[k], 1)
	}
	h.block.encrypt(blk, blk)
	for k := range ds {
		out[k] = [okvsWords]uint64{blk[2*k].lo | 1, blk[2*k].hi, blk[2*k+1].lo, blk[2*k+1].hi}
	}
}

// startOf is the start column of a key whose input 2 encrypts to e.
func (h okvsHasher) startOf(e gf) int {
	return int(e.lo % uint64(h.m-okvsBand+1))
}

// okvsEncode solves for P (m elements) with decode(P, k_i) = vals[i] for
// the keys of digests ds, or returns errOKVS. Free columns are uniformly
// random (drawn from fill), as RR22's OKVS requires so that P reveals
// nothing of the keys beyond their values.
func okvsEncode(h okvsHasher, ds [][digestLen]byte, vals []gf, fill *mrand.ChaCha8) ([]gf, error) {
	lay := h.layout(ds, nil)
	svals := make([]gf, len(ds))
	gather16(svals, vals, lay.order)
	return okvsEncodeIn(h, lay, svals, fill, nil)
}

// okvsLayout is the keys of a set of digests in the order of their
// starts (sortedKeys): the permutation, the starts and the digests in
// that order. The receiver encodes and then decodes the same keys under
// the same hasher, and computes it once for both.
type okvsLayout struct {
	order, sorted []int32
	sds           [][digestLen]byte
}

// layout computes the layout of ds's keys, its tables from sc (nil:
// the heap).
func (h okvsHasher) layout(ds [][digestLen]byte, sc *scratch) *okvsLayout {
	order, sorted := h.sortedKeys(ds, sc)
	sds := take[[digestLen]byte](sc, len(ds))
	gather16(sds, ds, order)
	return &okvsLayout{order: order, sorted: sorted, sds: sds}
}

// okvsEncodeIn is okvsEncode over the keys of lay (from h.layout), with
// their values svals in that layout's order (the order of the starts),
// which it overwrites. The rows are kept as three tables in that order —
// the starts (lay.sorted), the bands and the values — rather than one
// table of 56-byte rows whose starts and values would be second copies.
// P and the tables come from sc (nil: the heap); only P is kept.
func okvsEncodeIn(h okvsHasher, lay *okvsLayout, svals []gf, fill *mrand.ChaCha8, sc *scratch) ([]gf, error) {
	sorted, sds := lay.sorted, lay.sds
	p := take[gf](sc, h.m)
	defer sc.release(sc.mark()) // bands, pivot, isPivot
	bands := take[[okvsWords]uint64](sc, len(sds))
	for lo := 0; lo < len(sds); lo += okvsBatch {
		hi := min(len(sds), lo+okvsBatch)
		h.bands(bands[lo:hi], sds[lo:hi])
	}
	pivot := take[int32](sc, len(sds)) // column of each row's pivot
	for i := range bands {
		r, start := &bands[i], int(sorted[i])
		p, ok := lowestBit(r)
		if !ok {
			return nil, errOKVS
		}
		col := start + p
		pivot[i] = int32(col)
		for k := i + 1; k < len(bands) && int(sorted[k]) <= col; k++ {
			off := col - int(sorted[k])
			if bands[k][off/64]>>(off%64)&1 == 1 {
				xorShifted(&bands[k], r, int(sorted[k])-start)
				svals[k] = svals[k].add(svals[i])
			}
		}
	}
	isPivot := take[bool](sc, h.m)
	for _, c := range pivot {
		isPivot[c] = true
	}
	for c := range p {
		if !isPivot[c] {
			p[c] = gf{fill.Uint64(), fill.Uint64()}
		}
	}
	for i := len(bands) - 1; i >= 0; i-- {
		start := int(sorted[i])
		off := int(pivot[i]) - start
		band := bands[i]
		band[off/64] &^= 1 << (off % 64) // the pivot itself
		p[pivot[i]] = svals[i].add(h.sum((*[okvsBand]gf)(p[start:]), &band))
	}
	return p, nil
}

// okvsDecode returns Σ_j b(d)_j·P[s(d)+j].
func okvsDecode(h okvsHasher, p []gf, d *[digestLen]byte) gf {
	ds := [][digestLen]byte{*d}
	in := []gf{okvsInput(d, 2)}
	h.block.encrypt(in, in)
	var band [1][okvsWords]uint64
	h.bands(band[:], ds)
	return h.sum((*[okvsBand]gf)(p[h.startOf(in[0]):]), &band[0])
}

// okvsDecodeAll returns Decode(P, d) for every digest of ds, in order.
// It decodes in the order of the keys' starts (sortedKeys), so that
// consecutive keys read overlapping windows of P: one key reads up to w
// elements (4 KiB) from a random place, and in the keys' own order
// nearly every one of them misses the cache. The bands are computed in
// that order a batch at a time, so that no table of rows is built.
func okvsDecodeAll(h okvsHasher, p []gf, ds [][digestLen]byte) []gf {
	return okvsDecodeIn(h, p, h.layout(ds, nil), nil)
}

// okvsDecodeIn is okvsDecodeAll over the keys of lay (from h.layout), in
// the order of the digests lay was computed from; the result comes from
// sc (nil: the heap).
func okvsDecodeIn(h okvsHasher, p []gf, lay *okvsLayout, sc *scratch) []gf {
	order, sorted, sds := lay.order, lay.sorted, lay.sds
	out := take[gf](sc, len(sds))
	var band [okvsBatch][okvsWords]uint64
	for lo := 0; lo < len(sds); lo += okvsBatch {
		hi := min(len(sds), lo+okvsBatch)
		h.bands(band[:], sds[lo:hi])
		for k, i := range order[lo:hi] {
			out[i] = h.sum((*[okvsBand]gf)(p[sorted[lo+k]:]), &band[k])
		}
	}
	return out
}

// bandSum is the XOR of the elements of p the band selects.
// p is an array pointer and the word's columns a 64-array indexed by a
// masked bit position, so that the inner loop has no bounds check; it is
// not inlined, because inside its callers' loops the compiler kept the
// sum on the stack, one store-to-load round trip per column.
//
//go:noinline
func bandSum(p *[okvsBand]gf, band *[okvsWords]uint64) gf {
	var v gf
	for w := range okvsWords {
		q := (*[64]gf)(p[64*w : 64*w+64])
		for b := band[w]; b != 0; b &= b - 1 {
			v = v.add(q[bits.TrailingZeros64(b)&63])
		}
	}
	return v
}

// lowestBit is the index of the band's lowest set bit.
func lowestBit(b *[okvsWords]uint64) (int, bool) {
	for w, x := range b {
		if x != 0 {
			return 64*w + bits.TrailingZeros64(x), true
		}
	}
	return 0, false
}

// xorShifted sets dst ^= src >> sh (0 ≤ sh < okvsBand): src's band
// re-based from its start to dst's start, sh columns later. The bits
// shifted out are below src's pivot, hence zero.
func xorShifted(dst, src *[okvsWords]uint64, sh int) {
	ws, bs := sh/64, uint(sh%64)
	for w := 0; w+ws < okvsWords; w++ {
		x := src[w+ws] >> bs
		if bs != 0 && w+ws+1 < okvsWords {
			x |= src[w+ws+1] << (64 - bs)
		}
		dst[w] ^= x
	}
}

// gather16Go sets dst[k] = src[idx[k]]: gather16 without assembly. The
// OKVS walks the keys in the order of their starts (sortedKeys) but holds
// their digests and values in the caller's order; one gather into that
// order turns the reads that follow into sequential ones, and the
// assembly keeps the gather's own cache misses in flight.
func gather16Go[T gf | [digestLen]byte](dst, src []T, idx []int32) {
	for k, i := range idx {
		dst[k] = src[i]
	}
}

// checkGather16 panics unless gather16 stays inside dst and src.
func checkGather16[T gf | [digestLen]byte](dst, src []T, idx []int32) {
	if len(dst) < len(idx) {
		panic("psi: internal error: gather16 destination")
	}
	for _, i := range idx {
		if uint(i) >= uint(len(src)) {
			panic("psi: internal error: gather16 index")
		}
	}
}
