package psi

import (
	"unsafe"
)

// scratch is one party's arena for the large, pointer-free tables of one
// VOLE exchange (the noise vector, the VOLE outputs, the OKVS's layout,
// bands and values), outside the Go heap. The tables of one phase are
// dead before the next phase's are made, but on the heap the garbage
// collector lets the heap grow to twice what is live before it reuses
// any of it, and every page of that growth is a page fault (at 2^20
// elements the heap of the two parties reached 500–690 MB, with 0.5–0.9 s
// of system time against 2–3 s of user time). The arena is a stack:
// mark and release bracket a phase, and the memory released is handed
// out again, already faulted in.
//
// Nothing taken from an arena may outlive its close, nor be reachable
// from a result: close unmaps the memory. Where the mapping failed, or a
// table does not fit, the table comes from make instead.
type scratch struct {
	mem  []byte
	off  int // bytes handed out
	high int // bytes ever handed out: past it the mapping is still zero
	free func()
}

// newScratch reserves an arena of n bytes (only the pages used are
// faulted in).
func newScratch(n int) *scratch {
	mem, free := mapScratch(n)
	return &scratch{mem: mem, free: free}
}

// close unmaps the arena; nothing taken from it may be used after. A
// second close does nothing (the range may have been mapped anew).
func (s *scratch) close() {
	if s != nil && s.free != nil {
		s.free()
		s.free, s.mem, s.off, s.high = nil, nil, 0, 0
	}
}

// mark returns the arena's position, for release.
func (s *scratch) mark() int {
	if s == nil {
		return 0
	}
	return s.off
}

// release hands out the memory taken since mark m again: no table taken
// after m may be used after release.
func (s *scratch) release(m int) {
	if s != nil && m <= s.off {
		s.off = m
	}
}

// scratchElem are the element types an arena holds: none holds a
// pointer, which the garbage collector would not see.
type scratchElem interface {
	gf | [okvsWords]uint64 | [digestLen]byte | valEntry | uint64 | int32 | byte | bool
}

// scratchAlign is the alignment of every table: a cache line.
const scratchAlign = 64

// take returns a zeroed table of n elements from arena s (nil: from make).
func take[T scratchElem](s *scratch, n int) []T {
	if n == 0 {
		return []T{}
	}
	size := n * int(unsafe.Sizeof(*new(T)))
	if s == nil || size > len(s.mem)-s.off {
		return make([]T, n)
	}
	b := s.mem[s.off : s.off+size]
	clear(b[:min(size, max(0, s.high-s.off))]) // past high it is still zero
	s.off += (size + scratchAlign - 1) &^ (scratchAlign - 1)
	s.off = min(s.off, len(s.mem))
	s.high = max(s.high, s.off)
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}

// senderScratch is the arena a VOLE sender takes, in bytes: its noise
// vector.
func (p voleParams) senderScratch() int {
	return gfLen*p.noiseLen() + scratchAlign
}

// receiverScratch is the arena a VOLE receiver of n elements takes, in
// bytes: A, C and the noise vector, whose room then holds the OKVS
// layout, values, bands and P, the decoded values and the outputs.
func (p voleParams) receiverScratch(n int) int {
	return gfLen*(2*p.m+p.noiseLen()) + 128*n + 40*p.m + 64*scratchAlign
}
