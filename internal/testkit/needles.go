package testkit

import (
	"maps"
	"slices"
)

// Needles finds any of many byte strings in a haystack in one pass, for
// leakage checks that look for every secret value of a case (hundreds of
// them) in every captured message (some of them megabytes of ciphertext):
// one bytes.Contains per secret and message read each message once per
// secret, which was half of some job tests' CPU.
//
// Each position of the haystack is looked up in a bitset of the needles'
// first two bytes, and only on a hit in a set of the needles of each
// length, so random bytes cost about a load and a test per position.
type Needles struct {
	first [1 << 16 / 64]uint64      // bit b0<<8|b1 set: some needle starts b0 b1
	byLen map[int]map[string][]byte // needles by length, keyed by their bytes
	lens  []int                     // the lengths in byLen, shortest first
}

// NewNeedles is a finder of needles, each at least two bytes long (it
// panics on a shorter one: it would match by chance anywhere).
func NewNeedles(needles [][]byte) *Needles {
	n := &Needles{byLen: map[int]map[string][]byte{}}
	for _, x := range needles {
		if len(x) < 2 {
			panic("testkit: a needle shorter than two bytes")
		}
		i := int(x[0])<<8 | int(x[1])
		n.first[i/64] |= 1 << (i % 64)
		set := n.byLen[len(x)]
		if set == nil {
			set = map[string][]byte{}
			n.byLen[len(x)] = set
		}
		set[string(x)] = x
	}
	n.lens = slices.Sorted(maps.Keys(n.byLen))
	return n
}

// Find returns the needle that occurs first in b (the shortest of those
// that start at that position), or nil if none does.
func (n *Needles) Find(b []byte) []byte {
	if len(n.lens) == 0 {
		return nil
	}
	for p := 0; p+n.lens[0] <= len(b); p++ {
		i := int(b[p])<<8 | int(b[p+1])
		if n.first[i/64]&(1<<(i%64)) == 0 {
			continue
		}
		for _, l := range n.lens {
			if p+l > len(b) {
				break
			}
			if x, ok := n.byLen[l][string(b[p:p+l])]; ok {
				return x
			}
		}
	}
	return nil
}
