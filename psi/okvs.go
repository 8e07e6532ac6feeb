package psi

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
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

// okvsRow is one key's row: start column, band (bit j of word j/64 is
// column start+j) and value.
type okvsRow struct {
	start int
	band  [okvsWords]uint64
	val   gf
}

// okvsHasher maps digests to rows: AES-128 under a key derived from the
// joint seed and the attempt, as a pseudorandom function of the digest.
type okvsHasher struct {
	m     int
	block cipher.Block
}

func newOKVSHasher(seed [32]byte, attempt, m int) okvsHasher {
	b, err := aes.NewCipher(derive(seed, "okvs", attempt))
	if err != nil {
		panic("psi: internal error: AES-128 key: " + err.Error())
	}
	return okvsHasher{m: m, block: b}
}

// row fills r's start and band for digest d: two AES blocks of d with
// the low two bits of its last byte set to 0 and 1 give the band, a
// third (2) the start. Bit 0 of the band is forced to 1, so that no row
// is empty.
func (h okvsHasher) row(r *okvsRow, d *[digestLen]byte) {
	in := *d
	var out [16]byte
	for j := range 2 {
		in[digestLen-1] = d[digestLen-1]&^3 | byte(j)
		h.block.Encrypt(out[:], in[:])
		r.band[2*j] = binary.LittleEndian.Uint64(out[:])
		r.band[2*j+1] = binary.LittleEndian.Uint64(out[8:])
	}
	r.band[0] |= 1
	in[digestLen-1] = d[digestLen-1]&^3 | 2
	h.block.Encrypt(out[:], in[:])
	r.start = int(binary.LittleEndian.Uint64(out[:]) % uint64(h.m-okvsBand+1))
}

// okvsEncode solves for P (m elements) with decode(P, k_i) = vals[i] for
// the keys of digests ds, or returns errOKVS. Free columns are uniformly
// random (drawn from fill), as RR22's OKVS requires so that P reveals
// nothing of the keys beyond their values.
func okvsEncode(h okvsHasher, ds [][digestLen]byte, vals []gf, fill *mrand.ChaCha8) ([]gf, error) {
	rows := make([]okvsRow, len(ds))
	for i := range ds {
		h.row(&rows[i], &ds[i])
		rows[i].val = vals[i]
	}
	rows = sortByStart(rows, h.m)
	pivot := make([]int, len(rows)) // column of each row's pivot
	for i := range rows {
		r := &rows[i]
		p, ok := lowestBit(&r.band)
		if !ok {
			return nil, errOKVS
		}
		col := r.start + p
		pivot[i] = col
		for k := i + 1; k < len(rows) && rows[k].start <= col; k++ {
			o := &rows[k]
			off := col - o.start
			if o.band[off/64]>>(off%64)&1 == 1 {
				xorShifted(&o.band, &r.band, o.start-r.start)
				o.val = o.val.add(r.val)
			}
		}
	}
	p := make([]gf, h.m)
	isPivot := make([]bool, h.m)
	for _, c := range pivot {
		isPivot[c] = true
	}
	for c := range p {
		if !isPivot[c] {
			p[c] = gf{fill.Uint64(), fill.Uint64()}
		}
	}
	for i := len(rows) - 1; i >= 0; i-- {
		r := &rows[i]
		v := r.val
		off := pivot[i] - r.start
		for w := range okvsWords {
			b := r.band[w]
			if w == off/64 {
				b &^= 1 << (off % 64) // the pivot itself
			}
			for b != 0 {
				j := 64*w + bits.TrailingZeros64(b)
				b &= b - 1
				v = v.add(p[r.start+j])
			}
		}
		p[pivot[i]] = v
	}
	return p, nil
}

// okvsDecode returns Σ_j b(d)_j·P[s(d)+j].
func okvsDecode(h okvsHasher, p []gf, d *[digestLen]byte) gf {
	var r okvsRow
	h.row(&r, d)
	return bandSum(p[r.start:r.start+okvsBand], &r.band)
}

// okvsDecodeAll returns Decode(P, d) for every digest of ds, in order.
// It decodes in the order of the keys' starts, so that consecutive keys
// read overlapping windows of P: one key reads up to w elements (4 KiB)
// from a random place, and in the keys' own order nearly every one of
// them misses the cache.
func okvsDecodeAll(h okvsHasher, p []gf, ds [][digestLen]byte) []gf {
	rows := make([]okvsRow, len(ds))
	count := make([]int32, h.m+1)
	for i := range ds {
		h.row(&rows[i], &ds[i])
		count[rows[i].start+1]++
	}
	// A counting sort of the keys' indices by start: the rows stay where
	// they are (one cache line each), the window of P moves forward.
	for c := 1; c <= h.m; c++ {
		count[c] += count[c-1]
	}
	order := make([]int32, len(ds))
	for i := range rows {
		order[count[rows[i].start]] = int32(i)
		count[rows[i].start]++
	}
	out := make([]gf, len(ds))
	for _, i := range order {
		r := &rows[i]
		out[i] = bandSum(p[r.start:r.start+okvsBand], &r.band)
	}
	return out
}

// bandSum is the XOR of the elements of p the band selects.
func bandSum(p []gf, band *[okvsWords]uint64) gf {
	var v gf
	for w, b := range band {
		for b != 0 {
			v = v.add(p[64*w+bits.TrailingZeros64(b)])
			b &= b - 1
		}
	}
	return v
}

// sortByStart orders rows by start column (a counting sort: O(n+m)).
func sortByStart(rows []okvsRow, m int) []okvsRow {
	count := make([]int, m+1)
	for i := range rows {
		count[rows[i].start+1]++
	}
	for c := 1; c <= m; c++ {
		count[c] += count[c-1]
	}
	out := make([]okvsRow, len(rows))
	for i := range rows {
		out[count[rows[i].start]] = rows[i]
		count[rows[i].start]++
	}
	return out
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
