//go:build !purego

#include "textflag.h"

// The dense stages of sparseNTT.forward two at a time (radix4 in
// nttkernels.go, the same operations on the same values): the compiled Go
// keeps the four values, the roots and the bounds in 14 registers only by
// spilling, about a third of its instructions.

// BFLY is bfly (nttkernels.go), Harvey's butterfly with Shoup's product, on
// registers U and V with the root W and its Shoup companion P in memory;
// R10 holds q, R11 2q; AX and DX are clobbered.
#define BFLY(U, V, W, P) \
	MOVQ V, AX; \
	MULQ P; \
	IMULQ W, V; \
	IMULQ R10, DX; \
	SUBQ DX, V; \
	MOVQ U, AX; \
	SUBQ R11, AX; \
	CMOVQCC AX, U; \
	LEAQ (U)(R11*1), DX; \
	SUBQ V, DX; \
	ADDQ V, U; \
	MOVQ DX, V

// func radix4Asm(c *uint64, h, m int, q uint64, r1, r2 *uint64, n8, skip8 int)
TEXT ·radix4Asm(SB), NOSPLIT, $0-64
	MOVQ c+0(FP), SI
	MOVQ h+8(FP), R8
	MOVQ q+24(FP), R10
	MOVQ r1+32(FP), R12
	MOVQ r2+40(FP), R13
	LEAQ (R10)(R10*1), R11
	SHLQ $3, R8          // h in bytes: the second quarter's offset
	LEAQ (R8)(R8*2), R9  // the fourth quarter's

block:
	MOVQ n8+48(FP), DI
	ADDQ SI, DI          // the end of the block's quadruples

quad:
	MOVQ (SI), BX
	MOVQ (SI)(R8*1), CX
	MOVQ (SI)(R8*2), R14
	MOVQ (SI)(R9*1), R15
	BFLY(BX, R14, 0(R12), 8(R12))
	BFLY(CX, R15, 0(R12), 8(R12))
	BFLY(BX, CX, 0(R13), 8(R13))
	BFLY(R14, R15, 16(R13), 24(R13))
	MOVQ BX, (SI)
	MOVQ CX, (SI)(R8*1)
	MOVQ R14, (SI)(R8*2)
	MOVQ R15, (SI)(R9*1)
	ADDQ $8, SI
	CMPQ SI, DI
	JB   quad

	ADDQ skip8+56(FP), SI // the next block's first quadruple
	ADDQ $16, R12        // its root pair
	ADDQ $32, R13        // its two root pairs of the second stage
	DECQ m+16(FP)
	JNZ  block
	RET

// REDUCE4 is reduce4: U from [0, 4q) to [0, q); AX is clobbered.
#define REDUCE4(U) \
	MOVQ U, AX; \
	SUBQ R11, AX; \
	CMOVQCC AX, U; \
	MOVQ U, AX; \
	SUBQ R10, AX; \
	CMOVQCC AX, U

// func last1Asm(c *uint64, pairs int, q uint64, r *uint64)
TEXT ·last1Asm(SB), NOSPLIT, $0-32
	MOVQ c+0(FP), SI
	MOVQ pairs+8(FP), DI
	MOVQ q+16(FP), R10
	MOVQ r+24(FP), R12
	LEAQ (R10)(R10*1), R11
	SHLQ $4, DI
	ADDQ SI, DI          // the end of c

pair:
	MOVQ (SI), BX
	MOVQ 8(SI), CX
	BFLY(BX, CX, 0(R12), 8(R12))
	REDUCE4(BX)
	REDUCE4(CX)
	MOVQ BX, (SI)
	MOVQ CX, 8(SI)
	ADDQ $16, SI
	ADDQ $16, R12
	CMPQ SI, DI
	JB   pair
	RET
