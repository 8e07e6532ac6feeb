//go:build !purego

#include "textflag.h"

// AES-128 with AES-NI for fixedAES (fixedaes.go): the key schedule, and
// ECB encryption of many blocks eight at a time, so that the eight
// independent AESENC chains fill the unit's pipeline where one block per
// call (crypto/cipher.Block) waits out each round's latency.

// func cpuHasAESNI() bool
TEXT ·cpuHasAESNI(SB), NOSPLIT, $0-1
	MOVL  $1, AX
	MOVL  $0, CX
	CPUID
	SHRL  $25, CX
	ANDL  $1, CX
	MOVB  CX, ret+0(FP)
	RET

// EXPAND writes the next round key from X0 (the previous one) and X1
// (AESKEYGENASSIST of it); X4 is scratch, zero on the first use. As
// crypto/internal/fips140/aes's expandKeyAsm.
#define EXPAND(rcon) \
	AESKEYGENASSIST $rcon, X0, X1; \
	PSHUFD          $0xff, X1, X1; \
	SHUFPS          $0x10, X0, X4; \
	PXOR            X4, X0; \
	SHUFPS          $0x8c, X0, X4; \
	PXOR            X4, X0; \
	PXOR            X1, X0; \
	MOVUPS          X0, (BX); \
	ADDQ            $16, BX

// func aesExpandKey128(key *byte, rk *byte)
TEXT ·aesExpandKey128(SB), NOSPLIT, $0-16
	MOVQ   key+0(FP), AX
	MOVQ   rk+8(FP), BX
	MOVUPS (AX), X0
	MOVUPS X0, (BX)
	ADDQ   $16, BX
	PXOR   X4, X4
	EXPAND(0x01)
	EXPAND(0x02)
	EXPAND(0x04)
	EXPAND(0x08)
	EXPAND(0x10)
	EXPAND(0x20)
	EXPAND(0x40)
	EXPAND(0x80)
	EXPAND(0x1b)
	EXPAND(0x36)
	RET

// ROUND8 applies one middle round with the key at off(AX) to X0..X7.
#define ROUND8(off) \
	MOVUPS off(AX), X8; \
	AESENC X8, X0; \
	AESENC X8, X1; \
	AESENC X8, X2; \
	AESENC X8, X3; \
	AESENC X8, X4; \
	AESENC X8, X5; \
	AESENC X8, X6; \
	AESENC X8, X7

// func aesEncryptBlocks(rk *byte, dst *byte, src *byte, n int)
// dst and src hold n 16-byte blocks; dst may equal src.
TEXT ·aesEncryptBlocks(SB), NOSPLIT, $0-32
	MOVQ rk+0(FP), AX
	MOVQ dst+8(FP), DX
	MOVQ src+16(FP), BX
	MOVQ n+24(FP), CX

loop8:
	CMPQ   CX, $8
	JB     tail
	MOVUPS (AX), X8
	MOVUPS 0(BX), X0
	MOVUPS 16(BX), X1
	MOVUPS 32(BX), X2
	MOVUPS 48(BX), X3
	MOVUPS 64(BX), X4
	MOVUPS 80(BX), X5
	MOVUPS 96(BX), X6
	MOVUPS 112(BX), X7
	PXOR   X8, X0
	PXOR   X8, X1
	PXOR   X8, X2
	PXOR   X8, X3
	PXOR   X8, X4
	PXOR   X8, X5
	PXOR   X8, X6
	PXOR   X8, X7
	ROUND8(16)
	ROUND8(32)
	ROUND8(48)
	ROUND8(64)
	ROUND8(80)
	ROUND8(96)
	ROUND8(112)
	ROUND8(128)
	ROUND8(144)
	MOVUPS     160(AX), X8
	AESENCLAST X8, X0
	AESENCLAST X8, X1
	AESENCLAST X8, X2
	AESENCLAST X8, X3
	AESENCLAST X8, X4
	AESENCLAST X8, X5
	AESENCLAST X8, X6
	AESENCLAST X8, X7
	MOVUPS     X0, 0(DX)
	MOVUPS     X1, 16(DX)
	MOVUPS     X2, 32(DX)
	MOVUPS     X3, 48(DX)
	MOVUPS     X4, 64(DX)
	MOVUPS     X5, 80(DX)
	MOVUPS     X6, 96(DX)
	MOVUPS     X7, 112(DX)
	ADDQ       $128, BX
	ADDQ       $128, DX
	SUBQ       $8, CX
	JMP        loop8

tail:
	TESTQ      CX, CX
	JE         done
	MOVUPS     (BX), X0
	MOVUPS     (AX), X8
	PXOR       X8, X0
	MOVUPS     16(AX), X8
	AESENC     X8, X0
	MOVUPS     32(AX), X8
	AESENC     X8, X0
	MOVUPS     48(AX), X8
	AESENC     X8, X0
	MOVUPS     64(AX), X8
	AESENC     X8, X0
	MOVUPS     80(AX), X8
	AESENC     X8, X0
	MOVUPS     96(AX), X8
	AESENC     X8, X0
	MOVUPS     112(AX), X8
	AESENC     X8, X0
	MOVUPS     128(AX), X8
	AESENC     X8, X0
	MOVUPS     144(AX), X8
	AESENC     X8, X0
	MOVUPS     160(AX), X8
	AESENCLAST X8, X0
	MOVUPS     X0, (DX)
	ADDQ       $16, BX
	ADDQ       $16, DX
	DECQ       CX
	JMP        tail

done:
	RET
