//go:build !linux

package psi

// newNoiseVector allocates the silent VOLE's noise vector on the heap
// (noise_linux.go maps it with huge pages on Linux).
func newNoiseVector(n int) (v []gf, free func()) { return make([]gf, n), func() {} }
