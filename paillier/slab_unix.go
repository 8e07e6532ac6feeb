//go:build unix

package paillier

import (
	"math/big"
	"syscall"
	"unsafe"
)

// newSlab returns words zeroed words of anonymous memory mapped outside
// the Go heap, or nil if the kernel refuses the mapping (the caller then
// takes them from the heap). See fixedBase for why the wide tables live
// there.
func newSlab(words int) []big.Word {
	mem, err := syscall.Mmap(-1, 0, words*wordBytes, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	return unsafe.Slice((*big.Word)(unsafe.Pointer(unsafe.SliceData(mem))), words)
}

// freeSlab unmaps a slab of newSlab. Nothing may use it afterwards.
func freeSlab(s []big.Word) {
	mem := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*wordBytes)
	_ = syscall.Munmap(mem) // only fails for a range that is not mapped
}
