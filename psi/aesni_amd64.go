//go:build !purego

package psi

// cpuHasAESNI reports CPUID.1:ECX.AESNI[bit 25].
func cpuHasAESNI() bool

// aesExpandKey128 writes the 11 round keys of the AES-128 key at key
// (16 bytes) to rk (176 bytes).
//
//go:noescape
func aesExpandKey128(key *byte, rk *byte)

// aesEncryptBlocks encrypts the n 16-byte blocks at src under the round
// keys rk into dst (which may be src).
//
//go:noescape
func aesEncryptBlocks(rk *byte, dst *byte, src *byte, n int)

// aesniAvailable reports whether fixedAES may use the assembly.
func aesniAvailable() bool { return cpuHasAESNI() }
