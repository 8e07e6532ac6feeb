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
// probability about n²/2^129) are an error, never merged.
func (d digester) distinctDigests(elems [][]byte) (uniq [][]byte, of []int, ds [][digestLen]byte, err error) {
	all := d.digests(elems)
	first := firstOccurrences(all)
	of = make([]int, len(elems))
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

// dedupBucket is the number of digests per partition firstOccurrences
// aims at: its table (2 slots per digest, 4 bytes a slot) then stays in
// the L1 or L2 cache.
const dedupBucket = 2048

// dedupEntry is one digest in its partition: its first 8 bytes and its
// position.
type dedupEntry struct {
	key uint64
	pos int32
}

// firstOccurrences returns for each digest the position of its first
// occurrence in all. One hash table over all digests (16 MB at 2^20)
// cost a cache miss per digest; instead the digests are partitioned by
// their top bits (a counting sort, sequential reads and writes) into
// parts of about dedupBucket, in order of position within each part, and
// each part is deduplicated with a small table. Digests are pseudorandom,
// so the parts are even.
func firstOccurrences(all [][digestLen]byte) []int32 {
	n := len(all)
	first := make([]int32, n)
	b := bits.Len(uint(n / dedupBucket)) // 2^b parts
	count := make([]int32, 1<<b+1)
	part := func(k uint64) uint64 { return k >> 1 >> (63 - b) } // b may be 0
	for i := range all {
		count[part(binary.LittleEndian.Uint64(all[i][:8]))+1]++
	}
	for p := 1; p < len(count); p++ {
		count[p] += count[p-1]
	}
	entries := make([]dedupEntry, n)
	next := append([]int32(nil), count[:len(count)-1]...)
	for i := range all {
		k := binary.LittleEndian.Uint64(all[i][:8])
		p := part(k)
		entries[next[p]] = dedupEntry{key: k, pos: int32(i)}
		next[p]++
	}
	var table []int32 // entry index + 1 within the part; 0 is empty
	for p := range len(count) - 1 {
		es := entries[count[p]:count[p+1]]
		size := 1 << bits.Len(uint(2*len(es))) // > 2·len: load < ½
		if cap(table) < size {
			table = make([]int32, size)
		}
		table = table[:size]
		clear(table)
		dedupPart(es, table, all, first)
	}
	return first
}

// dedupPart sets first for the entries of one part, in position order,
// with table (a power of two long, zero, more than twice len(es)).
func dedupPart(es []dedupEntry, table []int32, all [][digestLen]byte, first []int32) {
	mask := uint64(len(table) - 1)
	for j, e := range es {
		i := (e.key * 0x9E3779B97F4A7C15) >> 32 & mask
		for ; table[i] != 0; i = (i + 1) & mask {
			o := es[table[i]-1]
			if o.key == e.key && all[o.pos] == all[e.pos] {
				break
			}
		}
		if table[i] == 0 {
			table[i] = int32(j + 1)
			first[e.pos] = e.pos
		} else {
			first[e.pos] = first[es[table[i]-1].pos]
		}
	}
}
