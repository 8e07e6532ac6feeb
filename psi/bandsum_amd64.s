//go:build !purego

#include "textflag.h"

// bandSum with AVX2 (okvs.go, okvsHasher.sum): the XOR of the columns a
// 256-bit band selects, without a branch per column. Each 256-bit load
// holds two columns (lo, hi, lo, hi). The band's word is broadcast, its
// two low lanes shifted one further (bandAdj), and for the pair of
// columns 2j, 2j+1 a left shift by 62−2j puts column 2j's bit in the
// sign bit of the low lanes and column 2j+1's in the high lanes;
// VBLENDVPD then takes the pair's lanes or zero by those sign bits. The
// 32 pairs of a word are unrolled (the shift is an immediate), so no
// shift depends on the one before, and the sum goes to four
// accumulators. 3 instructions per pair of columns.

DATA bandAdj<>+0(SB)/8, $1
DATA bandAdj<>+8(SB)/8, $1
DATA bandAdj<>+16(SB)/8, $0
DATA bandAdj<>+24(SB)/8, $0
GLOBL bandAdj<>(SB), RODATA|NOPTR, $32

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
	MOVQ    p+0(FP), SI
	MOVQ    band+8(FP), DI
	VPXOR   Y0, Y0, Y0
	VPXOR   Y1, Y1, Y1
	VPXOR   Y2, Y2, Y2
	VPXOR   Y3, Y3, Y3
	VPXOR   Y15, Y15, Y15
	VMOVDQU bandAdj<>(SB), Y14
	MOVQ    $4, CX

word:
	VPBROADCASTQ (DI), Y4
	VPSLLVQ      Y14, Y4, Y4
	VPSLLQ    $62, Y4, Y5
	VBLENDVPD Y5, 0(SI), Y15, Y5
	VPXOR     Y5, Y0, Y0
	VPSLLQ    $60, Y4, Y6
	VBLENDVPD Y6, 32(SI), Y15, Y6
	VPXOR     Y6, Y1, Y1
	VPSLLQ    $58, Y4, Y7
	VBLENDVPD Y7, 64(SI), Y15, Y7
	VPXOR     Y7, Y2, Y2
	VPSLLQ    $56, Y4, Y8
	VBLENDVPD Y8, 96(SI), Y15, Y8
	VPXOR     Y8, Y3, Y3
	VPSLLQ    $54, Y4, Y5
	VBLENDVPD Y5, 128(SI), Y15, Y5
	VPXOR     Y5, Y0, Y0
	VPSLLQ    $52, Y4, Y6
	VBLENDVPD Y6, 160(SI), Y15, Y6
	VPXOR     Y6, Y1, Y1
	VPSLLQ    $50, Y4, Y7
	VBLENDVPD Y7, 192(SI), Y15, Y7
	VPXOR     Y7, Y2, Y2
	VPSLLQ    $48, Y4, Y8
	VBLENDVPD Y8, 224(SI), Y15, Y8
	VPXOR     Y8, Y3, Y3
	VPSLLQ    $46, Y4, Y5
	VBLENDVPD Y5, 256(SI), Y15, Y5
	VPXOR     Y5, Y0, Y0
	VPSLLQ    $44, Y4, Y6
	VBLENDVPD Y6, 288(SI), Y15, Y6
	VPXOR     Y6, Y1, Y1
	VPSLLQ    $42, Y4, Y7
	VBLENDVPD Y7, 320(SI), Y15, Y7
	VPXOR     Y7, Y2, Y2
	VPSLLQ    $40, Y4, Y8
	VBLENDVPD Y8, 352(SI), Y15, Y8
	VPXOR     Y8, Y3, Y3
	VPSLLQ    $38, Y4, Y5
	VBLENDVPD Y5, 384(SI), Y15, Y5
	VPXOR     Y5, Y0, Y0
	VPSLLQ    $36, Y4, Y6
	VBLENDVPD Y6, 416(SI), Y15, Y6
	VPXOR     Y6, Y1, Y1
	VPSLLQ    $34, Y4, Y7
	VBLENDVPD Y7, 448(SI), Y15, Y7
	VPXOR     Y7, Y2, Y2
	VPSLLQ    $32, Y4, Y8
	VBLENDVPD Y8, 480(SI), Y15, Y8
	VPXOR     Y8, Y3, Y3
	VPSLLQ    $30, Y4, Y5
	VBLENDVPD Y5, 512(SI), Y15, Y5
	VPXOR     Y5, Y0, Y0
	VPSLLQ    $28, Y4, Y6
	VBLENDVPD Y6, 544(SI), Y15, Y6
	VPXOR     Y6, Y1, Y1
	VPSLLQ    $26, Y4, Y7
	VBLENDVPD Y7, 576(SI), Y15, Y7
	VPXOR     Y7, Y2, Y2
	VPSLLQ    $24, Y4, Y8
	VBLENDVPD Y8, 608(SI), Y15, Y8
	VPXOR     Y8, Y3, Y3
	VPSLLQ    $22, Y4, Y5
	VBLENDVPD Y5, 640(SI), Y15, Y5
	VPXOR     Y5, Y0, Y0
	VPSLLQ    $20, Y4, Y6
	VBLENDVPD Y6, 672(SI), Y15, Y6
	VPXOR     Y6, Y1, Y1
	VPSLLQ    $18, Y4, Y7
	VBLENDVPD Y7, 704(SI), Y15, Y7
	VPXOR     Y7, Y2, Y2
	VPSLLQ    $16, Y4, Y8
	VBLENDVPD Y8, 736(SI), Y15, Y8
	VPXOR     Y8, Y3, Y3
	VPSLLQ    $14, Y4, Y5
	VBLENDVPD Y5, 768(SI), Y15, Y5
	VPXOR     Y5, Y0, Y0
	VPSLLQ    $12, Y4, Y6
	VBLENDVPD Y6, 800(SI), Y15, Y6
	VPXOR     Y6, Y1, Y1
	VPSLLQ    $10, Y4, Y7
	VBLENDVPD Y7, 832(SI), Y15, Y7
	VPXOR     Y7, Y2, Y2
	VPSLLQ    $8, Y4, Y8
	VBLENDVPD Y8, 864(SI), Y15, Y8
	VPXOR     Y8, Y3, Y3
	VPSLLQ    $6, Y4, Y5
	VBLENDVPD Y5, 896(SI), Y15, Y5
	VPXOR     Y5, Y0, Y0
	VPSLLQ    $4, Y4, Y6
	VBLENDVPD Y6, 928(SI), Y15, Y6
	VPXOR     Y6, Y1, Y1
	VPSLLQ    $2, Y4, Y7
	VBLENDVPD Y7, 960(SI), Y15, Y7
	VPXOR     Y7, Y2, Y2
	VPSLLQ    $0, Y4, Y8
	VBLENDVPD Y8, 992(SI), Y15, Y8
	VPXOR     Y8, Y3, Y3
	ADDQ $1024, SI
	ADDQ $8, DI
	DECQ CX
	JNZ  word

	VPXOR        Y1, Y0, Y0
	VPXOR        Y3, Y2, Y2
	VPXOR        Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPXOR        X1, X0, X0
	MOVQ         X0, AX
	VPEXTRQ      $1, X0, BX
	MOVQ         AX, ret_lo+16(FP)
	MOVQ         BX, ret_hi+24(FP)
	VZEROUPPER
	RET
