package psi

import (
	"syscall"
	"unsafe"
)

// newNoiseVector allocates the silent VOLE's N-element noise vector (92
// MB at 2^20 elements) outside the Go heap, in an anonymous mapping the
// kernel is asked to back with huge pages (MADV_HUGEPAGE; the advice is
// a hint, its failure harmless). The EA code reads the vector at 11
// random places per output: with 4 KiB pages nearly every read is also
// a TLB miss, and on the heap the vector would drive extra GC cycles
// that rescan the caller's elements. It holds no pointers. The caller
// must call free once it no longer uses the vector; if the mapping
// fails the vector comes from make and free does nothing.
func newNoiseVector(n int) (v []gf, free func()) {
	if n == 0 {
		return nil, func() {}
	}
	b, err := syscall.Mmap(-1, 0, n*gfLen, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return make([]gf, n), func() {}
	}
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
	return unsafe.Slice((*gf)(unsafe.Pointer(&b[0])), n), func() { _ = syscall.Munmap(b) }
}
