package psi

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"

	"github.com/cohortdm/cohort/wire"
)

// The unbalanced mode's filter: the server's set, as fingerprints of its
// OPRF values, in a form the client can keep and query (see the package
// doc, "Unbalanced sets").
//
// A fingerprint is the top T = h + fpLowBits bits of SHA-256 of an OPRF
// value H(y)^k, where 2^h is the smallest power of two ≥ the server's n
// distinct elements. A value the server does not hold matches one of n
// random T-bit fingerprints with probability at most n·2^-T ≤ 2^-40 (a
// union bound over the n fingerprints; SHA-256 modelled as a random
// oracle), whatever n is. The filter is the sorted fingerprints in
// Elias–Fano form (P. Elias, "Efficient storage and retrieval by content
// and address of static files", JACM 1974; R. M. Fano, 1971): the low 40
// bits of each as 5 bytes, the high h bits as counts in unary (for each
// of the 2^h buckets, one 1-bit per fingerprint in it, then a 0-bit), so
// n + 2^h ≤ 3n bits, about 42 bits per element in all. KLSAP17 send a
// Bloom or Cuckoo filter; at a false-positive rate of 2^-40 a Bloom
// filter needs 58 bits per element and a Cuckoo filter (bucket size 4,
// 95 % load) about 45, and neither can be smaller than the
// information-theoretic 40 bits.

// fpLowBits is the number of low fingerprint bits kept per element: the
// false-positive exponent (above).
const fpLowBits = 40

// fpLowLen is the bytes of one low part.
const fpLowLen = fpLowBits / 8

// upMaxHigh bounds h: T = h + 40 bits must fit a uint64, so a filter holds
// at most 2^24 distinct elements (UnbalancedMaxServer).
const upMaxHigh = 64 - fpLowBits

// sampleEvery is the spacing of the buckets whose start a decoded filter
// remembers: a query scans at most this many buckets' bits.
const sampleEvery = 256

// highBits returns h for n elements: the smallest h with 2^h ≥ n.
func highBits(n int) uint {
	if n <= 1 {
		return 0
	}
	return uint(bits.Len(uint(n - 1)))
}

// fingerprint is the T-bit fingerprint (T = h + fpLowBits) of an OPRF
// value p.
func fingerprint(p *Point, h uint) uint64 {
	d := sha256.Sum256(append([]byte("cohort-psi-upsi-v1:fp:"), p[:]...))
	return binary.BigEndian.Uint64(d[:8]) >> (64 - h - fpLowBits)
}

// upFilter is a decoded filter over n fingerprints of T = h + 40 bits.
type upFilter struct {
	n     int
	h     uint
	highs []byte // n + 2^h bits, LSB first
	lows  []byte // n × fpLowLen bytes, big-endian, ascending within a bucket
	// starts holds, for every sampleEvery-th bucket b, the bit position in
	// highs where bucket b begins and the index of its first element.
	starts []filterStart
}

type filterStart struct{ bit, elem int }

// filterLen is the length of an encoded filter over n fingerprints under
// h: the unary highs, then the lows.
func filterLen(n int, h uint) int {
	return (n+(1<<h)+7)/8 + n*fpLowLen
}

// checkFilterShape accepts n fingerprints under h: h within upMaxHigh, n
// ≤ 2^h (so a false positive stays below 2^-40) and h at most one above
// highBits(n) (so the 2^h bucket bits stay below 4n + 2, and a peer
// cannot make the client allocate for buckets it does not fill).
func checkFilterShape(n int, h uint) error {
	if n < 0 || h > upMaxHigh || n > 1<<h || h > highBits(n)+1 {
		return fmt.Errorf("%w: %w: filter of %d elements under %d high bits", ErrPeer, wire.ErrMalformed, n, h)
	}
	return nil
}

// buildFilter encodes the distinct values of fps, T-bit fingerprints
// under h, and returns the encoding and their number. Two elements whose
// fingerprints collide count once (for 2^24 elements that happens with
// probability about 2^-17); h stays the one the fingerprints were cut
// under, so a filter may hold a few less than 2^(h-1) elements.
func buildFilter(fps []uint64, h uint) ([]byte, int) {
	s := slices.Clone(fps)
	slices.Sort(s)
	s = slices.Compact(s)
	return encodeFilterBits(s, h), len(s)
}

// encodeFilterBits encodes sorted distinct T-bit fingerprints under h.
func encodeFilterBits(s []uint64, h uint) []byte {
	n := len(s)
	buckets := 1 << h
	hl := (n + buckets + 7) / 8
	out := make([]byte, hl+n*fpLowLen)
	bit := 0
	b := 0
	for i, v := range s {
		hi := int(v >> fpLowBits)
		for ; b < hi; b++ {
			bit++ // a 0-bit ends bucket b
		}
		out[bit/8] |= 1 << (bit % 8)
		bit++
		var lo [8]byte
		binary.BigEndian.PutUint64(lo[:], v)
		copy(out[hl+i*fpLowLen:], lo[8-fpLowLen:])
	}
	return out
}

// decodeUpFilter decodes a filter over n fingerprints under h strictly
// (checkFilterShape): the exact
// length, n 1-bits and 2^h 0-bits with the last bit a 0 (every bucket
// closed), no bit set in the padding, and the lows strictly ascending
// within each bucket (sorted, no repeats). It builds the bucket starts a
// query needs in the same pass.
func decodeUpFilter(b []byte, n int, h uint) (*upFilter, error) {
	if err := checkFilterShape(n, h); err != nil {
		return nil, err
	}
	if len(b) != filterLen(n, h) {
		return nil, fmt.Errorf("%w: %w: filter of %d bytes, want %d for %d elements", ErrPeer, wire.ErrMalformed, len(b), filterLen(n, h), n)
	}
	nbits := n + 1<<h
	hl := (nbits + 7) / 8
	f := &upFilter{n: n, h: h, highs: b[:hl], lows: b[hl:], starts: make([]filterStart, 0, (1<<h+sampleEvery-1)/sampleEvery)}
	if r := nbits % 8; r != 0 && b[hl-1]>>r != 0 {
		return nil, fmt.Errorf("%w: %w: filter sets bits beyond its end", ErrPeer, wire.ErrMalformed)
	}
	// Element i's 1-bit sits at bucket_i + i. Walk the 1-bits a byte at a
	// time; bucket b (a multiple of sampleEvery) starts at bit b + the
	// number of elements before it. n 1-bits each in a bucket below 2^h
	// leave exactly 2^h 0-bits, the last bit among them.
	elem, next := 0, 0 // next: the next sampled bucket
	var prev uint64
	for i, c := range f.highs {
		for ; c != 0; c &= c - 1 {
			bucket := i*8 + bits.TrailingZeros8(c) - elem
			if bucket >= 1<<h || elem >= n {
				return nil, fmt.Errorf("%w: %w: filter has an element past its last bucket", ErrPeer, wire.ErrMalformed)
			}
			for ; next <= bucket; next += sampleEvery {
				f.starts = append(f.starts, filterStart{next + elem, elem})
			}
			v := uint64(bucket)<<fpLowBits | f.low(elem)
			if elem > 0 && v <= prev {
				return nil, fmt.Errorf("%w: %w: filter element %d is not above the one before", ErrPeer, wire.ErrMalformed, elem)
			}
			prev = v
			elem++
		}
	}
	if elem != n {
		return nil, fmt.Errorf("%w: %w: filter holds %d elements, want %d", ErrPeer, wire.ErrMalformed, elem, n)
	}
	for ; next < 1<<h; next += sampleEvery {
		f.starts = append(f.starts, filterStart{next + n, n})
	}
	return f, nil
}

// low returns element i's low 40 bits (5 bytes, big-endian).
func (f *upFilter) low(i int) uint64 {
	b := f.lows[i*fpLowLen : i*fpLowLen+fpLowLen]
	return uint64(b[0])<<32 | uint64(b[1])<<24 | uint64(b[2])<<16 | uint64(b[3])<<8 | uint64(b[4])
}

// contains reports whether the T-bit fingerprint v is in the filter.
func (f *upFilter) contains(v uint64) bool {
	hi := int(v >> fpLowBits)
	if hi >= 1<<f.h {
		return false
	}
	lo := v & (1<<fpLowBits - 1)
	st := f.starts[hi/sampleEvery]
	bit, elem := st.bit, st.elem
	for b := hi / sampleEvery * sampleEvery; b < hi; bit++ { // skip to bucket hi
		if f.highs[bit/8]&(1<<(bit%8)) == 0 {
			b++
		} else {
			elem++
		}
	}
	for ; f.highs[bit/8]&(1<<(bit%8)) != 0; bit++ { // bucket hi's elements
		if f.low(elem) == lo {
			return true
		}
		elem++
	}
	return false
}
