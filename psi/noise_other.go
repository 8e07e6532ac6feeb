//go:build !linux

package psi

// mapScratch maps no memory here: the scratch arena's slices come from
// make (noise_linux.go maps them with huge pages on Linux).
func mapScratch(n int) (b []byte, free func()) { return nil, func() {} }
