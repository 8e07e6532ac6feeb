package psi

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// distinctDigests digests every element and removes repeats by digest:
// like distinct, it returns the distinct elements in first-seen order,
// for each position of elems its index in uniq, and the digests of uniq.
// Two different elements with one digest (a 128-bit SHA-256 collision,
// probability about n²/2^129) are an error, never merged. Without
// repeats (the usual case) uniq is elems itself, capacity cut so that
// an append cannot write into the caller's array, and ds is the digests
// as computed: no second 24-byte-per-element table of slice headers for
// the GC to scan, nor a second copy of the digests.
func (d digester) distinctDigests(elems [][]byte) (uniq [][]byte, of []int, ds [][digestLen]byte, err error) {
	all := d.digests(elems)
	first := firstOccurrences(all)
	of = make([]int, len(elems))
	if allFirst(first) {
		for i := range of {
			of[i] = i
		}
		return elems[:len(elems):len(elems)], of, all, nil
	}
	uniq = make([][]byte, 0, len(elems))
	ds = make([][digestLen]byte, 0, len(elems))
	for i, f := range first {
		if int(f) == i {
			of[i] = len(uniq)
			uniq = append(uniq, elems[i])
			ds = append(ds, all[i])
			continue
		}
		if string(elems[f]) != string(elems[i]) {
			return nil, nil, nil, fmt.Errorf("psi: elements %d and an earlier one are different but share a 128-bit digest", i)
		}
		of[i] = of[f]
	}
	return uniq, of, ds, nil
}

// allFirst says whether every element is its own first occurrence.
func allFirst(first []int32) bool {
	for i, f := range first {
		if int(f) != i {
			return false
		}
	}
	return true
}

// partSize is the number of values per part a partitioned table aims
// at: its slots (2 per value, 4 bytes a slot) and entries (24 bytes a
// value) then stay in the L2 cache.
const partSize = 2048

// valEntry is one value of at most 16 bytes in a partition: its bytes as
// two little-endian words (zero past its length) and its position.
type valEntry struct {
	a, b uint64
	pos  int32
}

// valueEntry is value i of l ≤ 16 bytes in vals as an entry.
func valueEntry(vals []byte, i, l int) valEntry {
	var w [16]byte
	copy(w[:], vals[i*l:(i+1)*l])
	return valEntry{a: binary.LittleEndian.Uint64(w[:8]), b: binary.LittleEndian.Uint64(w[8:]), pos: int32(i)}
}

// digestEntry is digest i of all as an entry.
func digestEntry(all [][digestLen]byte, i int) valEntry {
	return valEntry{a: binary.LittleEndian.Uint64(all[i][:8]), b: binary.LittleEndian.Uint64(all[i][8:]), pos: int32(i)}
}

// partBits is the number of top bits that split n values into parts of
// about partSize.
func partBits(n int) int { return bits.Len(uint(n / partSize)) }

// partOf is the part (of 2^pb) of a value whose first word is a: the
// top bits of a multiplicative hash, so that values shorter than 8
// bytes (zero high bytes) spread as well.
func partOf(a uint64, pb int) uint64 { return (a * 0x9E3779B97F4A7C15) >> 1 >> (63 - pb) }

// partition returns entry(0), …, entry(n−1) sorted by part (a stable
// counting sort: within a part, in the order of i) with the offsets of
// the 2^pb parts (part p is [off[p], off[p+1])), building each entry
// twice rather than keeping an unsorted copy. A hash table over all
// values (16 MB or more at 2^20) costs a cache miss per value;
// partitioned, the reads and writes are sequential and each part's table
// is small. The entries come from sc (nil: the heap).
func partition(n, pb int, sc *scratch, entry func(i int) valEntry) (sorted []valEntry, off []int32) {
	off = make([]int32, 1<<pb+1)
	for i := range n {
		off[partOf(entry(i).a, pb)+1]++
	}
	for p := 1; p < len(off); p++ {
		off[p] += off[p-1]
	}
	next := append([]int32(nil), off[:len(off)-1]...)
	sorted = take[valEntry](sc, n)
	for i := range n {
		e := entry(i)
		p := partOf(e.a, pb)
		sorted[next[p]] = e
		next[p]++
	}
	return sorted, off
}

// partTable is an open-addressing table over the entries of one part,
// reused from part to part: slots hold an entry index + 1, 0 is empty.
type partTable struct{ slots []int32 }

// reset empties the table and sizes it for n entries (load < ½).
func (t *partTable) reset(n int) {
	size := 1 << bits.Len(uint(2*n))
	if cap(t.slots) < size {
		t.slots = make([]int32, size)
	}
	t.slots = t.slots[:size]
	clear(t.slots)
}

// find returns the slot of the first entry of es in the table equal to
// e, or the empty slot where e would go.
func (t *partTable) find(es []valEntry, e valEntry) int {
	mask := uint64(len(t.slots) - 1)
	i := ((e.a ^ e.b) * 0xFF51AFD7ED558CCD) >> 32 & mask
	for ; t.slots[i] != 0; i = (i + 1) & mask {
		if o := es[t.slots[i]-1]; o.a == e.a && o.b == e.b {
			break
		}
	}
	return int(i)
}

// firstOccurrences returns for each digest the position of its first
// occurrence in all, part by part (partition).
func firstOccurrences(all [][digestLen]byte) []int32 {
	n := len(all)
	first := make([]int32, n)
	es, off := partition(n, partBits(n), nil, func(i int) valEntry { return digestEntry(all, i) })
	var t partTable
	for p := range len(off) - 1 {
		part := es[off[p]:off[p+1]]
		t.reset(len(part))
		for j, e := range part {
			i := t.find(part, e)
			if t.slots[i] == 0 {
				t.slots[i] = int32(j + 1)
				first[e.pos] = e.pos
			} else {
				first[e.pos] = part[t.slots[i]-1].pos
			}
		}
	}
	return first
}

// matchOutputs returns for each of our n outputs of l ≤ 16 bytes the
// last position k of the peer's values equal to it, or −1; where two of
// ours are equal, the first of them gets it. Both sides are partitioned
// by value and joined part by part, the parts' entries taken from sc
// (nil: the heap).
func matchOutputs(own []byte, n int, peer []byte, nPeer, l int, sc *scratch) []int {
	pb := partBits(max(n, nPeer))
	mine, offM := partition(n, pb, sc, func(i int) valEntry { return valueEntry(own, i, l) })
	theirs, offT := partition(nPeer, pb, sc, func(i int) valEntry { return valueEntry(peer, i, l) })
	matched := make([]int, n)
	for u := range matched {
		matched[u] = -1
	}
	var t partTable
	for p := range len(offM) - 1 {
		part := mine[offM[p]:offM[p+1]]
		t.reset(len(part))
		for j, e := range part {
			if i := t.find(part, e); t.slots[i] == 0 {
				t.slots[i] = int32(j + 1)
			}
		}
		for _, e := range theirs[offT[p]:offT[p+1]] {
			if i := t.find(part, e); t.slots[i] != 0 {
				matched[part[t.slots[i]-1].pos] = int(e.pos)
			}
		}
	}
	return matched
}
