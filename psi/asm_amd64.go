//go:build !purego

package psi

import "unsafe"

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

// cpuHasAVX2 reports AVX2 with the OS saving the YMM registers.
func cpuHasAVX2() bool

// bandSumAVX2 is bandSum (okvs.go) of the 256 elements at p.
//
//go:noescape
func bandSumAVX2(p *gf, band *[okvsWords]uint64) gf

// avx2Available reports whether bandSumFast may use the assembly.
func avx2Available() bool { return cpuHasAVX2() }

// eaGatherAsm is gather for eaWeight = 11 with software prefetch
// (eagather_amd64.s): n outputs from 11·n indices, each < len(x).
//
//go:noescape
func eaGatherAsm(out *gf, x *gf, idx *uint32, n int)

// gather is gatherGo through eaGatherAsm, which needs only SSE2 (every
// amd64 CPU).
func gather(out []gf, x []gf, idx []uint32) {
	if len(out) == 0 {
		return
	}
	if len(idx) < len(out)*eaWeight {
		panic("psi: internal error: EA indices")
	}
	eaGatherAsm(&out[0], &x[0], &idx[0], len(out))
}

// gather16Asm sets dst[k] = src[idx[k]] for n 16-byte elements, with
// software prefetch (eagather_amd64.s).
//
//go:noescape
func gather16Asm(dst, src unsafe.Pointer, idx *int32, n int)

// gather16 is gather16Go through gather16Asm.
func gather16[T gf | [digestLen]byte](dst, src []T, idx []int32) {
	checkGather16(dst, src, idx)
	if len(idx) > 0 {
		gather16Asm(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), &idx[0], len(idx))
	}
}
