package psi

import (
	"syscall"
)

// mapScratch maps n bytes for a scratch arena (scratch.go) outside the
// Go heap, in an anonymous mapping the kernel is asked to back with huge
// pages (MADV_HUGEPAGE; the advice is a hint, its failure harmless). The
// arena's largest tenant is the silent VOLE's noise vector (92 MB at
// 2^20 elements), which the EA code reads at 11 random places per
// output: with 4 KiB pages nearly every read is also a TLB miss. The
// memory comes zeroed and holds no pointers. The caller must call free
// once it no longer uses any of it; if the mapping fails, b is nil.
func mapScratch(n int) (b []byte, free func()) {
	if n == 0 {
		return nil, func() {}
	}
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, func() {}
	}
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
	return b, func() { _ = syscall.Munmap(b) }
}
