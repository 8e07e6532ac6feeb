//go:build !purego

#include "textflag.h"

// bandSum with AVX2 (okvs.go, bandSumFast): the XOR of the columns a
// 256-bit band selects, without a branch per column. Each 256-bit lane
// group holds two columns (lo, hi, lo, hi); a selector with the two
// columns' bits, each repeated over its column's two words, turns the
// band into an all-ones or all-zeros mask per column (VPAND, VPCMPEQQ),
// which gates the columns into one of two accumulators.

DATA bandSel<>+0(SB)/8, $1
DATA bandSel<>+8(SB)/8, $1
DATA bandSel<>+16(SB)/8, $2
DATA bandSel<>+24(SB)/8, $2
GLOBL bandSel<>(SB), RODATA|NOPTR, $32

// func cpuHasAVX2() bool
TEXT ·cpuHasAVX2(SB), NOSPLIT, $0-1
	MOVL $1, AX
	XORL CX, CX
	CPUID
	ANDL $0x18000000, CX // OSXSAVE and AVX
	CMPL CX, $0x18000000
	JNE  no
	XORL CX, CX
	XGETBV               // XCR0: the OS saves XMM (bit 1) and YMM (bit 2)
	ANDL $6, AX
	CMPL AX, $6
	JNE  no
	MOVL $7, AX
	XORL CX, CX
	CPUID
	SHRL $5, BX          // AVX2
	ANDL $1, BX
	MOVB BX, ret+0(FP)
	RET

no:
	MOVB $0, ret+0(FP)
	RET

// func bandSumAVX2(p *gf, band *[4]uint64) gf
TEXT ·bandSumAVX2(SB), NOSPLIT, $0-32
	MOVQ  p+0(FP), SI
	MOVQ  band+8(FP), DI
	VPXOR Y0, Y0, Y0
	VPXOR Y5, Y5, Y5
	MOVQ  $4, CX

word:
	VPBROADCASTQ (DI), Y1
	VMOVDQU      bandSel<>(SB), Y2
	MOVQ         $16, DX

pairs:
	VPAND    Y1, Y2, Y3
	VPCMPEQQ Y2, Y3, Y3
	VPAND    (SI), Y3, Y3
	VPXOR    Y3, Y0, Y0
	VPSLLQ   $2, Y2, Y2
	VPAND    Y1, Y2, Y4
	VPCMPEQQ Y2, Y4, Y4
	VPAND    32(SI), Y4, Y4
	VPXOR    Y4, Y5, Y5
	VPSLLQ   $2, Y2, Y2
	ADDQ     $64, SI
	DECQ     DX
	JNZ      pairs
	ADDQ     $8, DI
	DECQ     CX
	JNZ      word

	VPXOR        Y5, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPXOR        X1, X0, X0
	MOVQ         X0, AX
	VPEXTRQ      $1, X0, BX
	MOVQ         AX, ret_lo+16(FP)
	MOVQ         BX, ret_hi+24(FP)
	VZEROUPPER
	RET
