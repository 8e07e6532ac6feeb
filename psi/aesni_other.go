//go:build !amd64 || purego

package psi

// aesniAvailable is false off amd64: fixedAES uses crypto/aes.
func aesniAvailable() bool { return false }

func aesExpandKey128(key *byte, rk *byte) { panic("psi: internal error: no AES-NI") }

func aesEncryptBlocks(rk *byte, dst *byte, src *byte, n int) {
	panic("psi: internal error: no AES-NI")
}
