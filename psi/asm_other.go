//go:build !amd64 || purego

package psi

// aesniAvailable is false off amd64: fixedAES uses crypto/aes.
func aesniAvailable() bool { return false }

func aesExpandKey128(key *byte, rk *byte) { panic("psi: internal error: no AES-NI") }

func aesEncryptBlocks(rk *byte, dst *byte, src *byte, n int) {
	panic("psi: internal error: no AES-NI")
}

// avx2Available is false off amd64: bandSumFast uses bandSum.
func avx2Available() bool { return false }

func bandSumAVX2(p *gf, band *[okvsWords]uint64) gf { panic("psi: internal error: no AVX2") }

// gather is gatherGo off amd64.
func gather(out []gf, x []gf, idx []uint32) { gatherGo(out, x, idx) }

// gather16 is gather16Go off amd64.
func gather16[T gf | [digestLen]byte](dst, src []T, idx []int32) {
	checkGather16(dst, src, idx)
	gather16Go(dst, src, idx)
}
