package anonymize

import "slices"

// keyIndex is an open-addressing hash table from uint64 keys to dense
// indices 0, 1, 2, ... in insertion order. It replaces a Go map in the
// lattice roll-up and the TDS class counts, where it is several times
// faster, and is reused between uses. Key and index share one slot so a
// probe touches one cache line.
type keyIndex struct {
	slots []slot
	mask  uint64
	n     int
}

type slot struct {
	key uint64
	val int32 // index+1; 0 marks an empty slot
}

// reset empties the table and sizes it for about n keys.
func (h *keyIndex) reset(n int) {
	size := 16
	for size < 2*n {
		size <<= 1
	}
	if cap(h.slots) >= size {
		h.slots = h.slots[:size]
		clear(h.slots)
	} else {
		h.slots = make([]slot, size)
	}
	h.mask = uint64(size - 1)
	h.n = 0
}

func (h *keyIndex) home(key uint64) uint64 {
	return (key * 0x9E3779B97F4A7C15) >> 20 & h.mask
}

// index returns the dense index of key, inserting it as the next one if new.
func (h *keyIndex) index(key uint64) (int, bool) {
	if 2*(h.n+1) > len(h.slots) {
		h.grow()
	}
	for i := h.home(key); ; i = (i + 1) & h.mask {
		s := &h.slots[i]
		if s.val == 0 {
			s.key = key
			h.n++
			s.val = int32(h.n)
			return h.n - 1, false
		}
		if s.key == key {
			return int(s.val) - 1, true
		}
	}
}

func (h *keyIndex) grow() {
	old := slices.Clone(h.slots)
	if cap(h.slots) >= 2*len(old) { // keep the larger buffer an earlier use left
		h.slots = h.slots[:2*len(old)]
		clear(h.slots)
	} else {
		h.slots = make([]slot, 2*len(old))
	}
	h.mask = uint64(len(h.slots) - 1)
	for _, s := range old {
		if s.val == 0 {
			continue
		}
		i := h.home(s.key)
		for h.slots[i].val != 0 {
			i = (i + 1) & h.mask
		}
		h.slots[i] = s
	}
}
