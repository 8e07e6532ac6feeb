package psi

import (
	"testing"
	"unsafe"
)

// TestScratch: tables taken from an arena come zeroed (also where a
// released table was written), aligned (those in the arena), the length asked for, hold what
// is written, do not overlap, and come from the heap when the arena is
// full or nil.
func TestScratch(t *testing.T) {
	for _, size := range []int{0, 1, 4097, 1 << 24} {
		sc := newScratch(size)
		for round := range 3 {
			mark := sc.mark()
			var tables [][]gf
			for _, n := range []int{0, 1, 4097, 1 << 18, 1 << 20} {
				v := take[gf](sc, n)
				if len(v) != n || cap(v) != n {
					t.Fatalf("size %d, round %d: %d elements, capacity %d, want %d", size, round, len(v), cap(v), n)
				}
				if n > 0 && inArena(sc, v) && uintptr(unsafe.Pointer(&v[0]))%scratchAlign != 0 {
					t.Fatalf("size %d: table at %p not aligned", size, &v[0])
				}
				if size == 1<<24 && n == 1<<18 && !inArena(sc, v) {
					t.Fatalf("round %d: a table of 4 MiB not in an arena of 16 MiB", round)
				}
				for i := range v {
					if v[i] != (gf{}) {
						t.Fatalf("size %d, round %d, n=%d: element %d not zero", size, round, n, i)
					}
					v[i] = gf{uint64(i), ^uint64(n)}
				}
				tables = append(tables, v)
			}
			b := take[byte](sc, 100)
			for i := range b {
				b[i] = 0xff
			}
			for _, v := range tables {
				for i := range v {
					if v[i] != (gf{uint64(i), ^uint64(len(v))}) {
						t.Fatalf("size %d, round %d, n=%d: element %d overwritten", size, round, len(v), i)
					}
				}
			}
			sc.release(mark)
		}
		sc.close()
		sc.close() // a second close does nothing
		if v := take[gf](sc, 3); len(v) != 3 {
			t.Fatalf("size %d: a closed arena gave %d elements", size, len(v))
		}
	}
	var sc *scratch
	if v := take[int32](sc, 10); len(v) != 10 {
		t.Fatalf("nil arena: %d elements", len(v))
	}
	sc.release(sc.mark())
	sc.close()
}

// inArena says whether v lies in sc's mapping.
func inArena(sc *scratch, v []gf) bool {
	if len(sc.mem) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(&v[0])), uintptr(unsafe.Pointer(&sc.mem[0]))
	return p >= lo && p < lo+uintptr(len(sc.mem))
}
