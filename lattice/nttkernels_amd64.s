//go:build !purego

#include "textflag.h"

// The dense kernels of sparseNTT.forward (radix4, last3 and last1 in
// nttkernels.go: the same operations on the same values, so the same
// results, which TestDenseKernels checks). The compiled Go keeps the
// values, the roots and the bounds in the 14 registers only by spilling,
// about a third of its instructions; here the roots are memory operands
// and q, 2q, the values and the pointers stay in registers.

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

// func last3Asm(c *uint64, blocks int, q uint64, r *uint64)
TEXT ·last3Asm(SB), NOSPLIT, $0-32
	MOVQ c+0(FP), SI
	MOVQ blocks+8(FP), AX
	MOVQ q+16(FP), R10
	MOVQ r+24(FP), R12
	LEAQ (R10)(R10*1), R11
	SHLQ $6, AX
	ADDQ SI, AX
	MOVQ AX, blocks+8(FP) // the end of c

eight:
	MOVQ (SI), BX
	MOVQ 8(SI), CX
	MOVQ 16(SI), DI
	MOVQ 24(SI), R8
	MOVQ 32(SI), R9
	MOVQ 40(SI), R13
	MOVQ 48(SI), R14
	MOVQ 56(SI), R15
	BFLY(BX, R9, 0(R12), 8(R12))
	BFLY(CX, R13, 0(R12), 8(R12))
	BFLY(DI, R14, 0(R12), 8(R12))
	BFLY(R8, R15, 0(R12), 8(R12))
	BFLY(BX, DI, 16(R12), 24(R12))
	BFLY(CX, R8, 16(R12), 24(R12))
	BFLY(R9, R14, 32(R12), 40(R12))
	BFLY(R13, R15, 32(R12), 40(R12))
	BFLY(BX, CX, 48(R12), 56(R12))
	BFLY(DI, R8, 64(R12), 72(R12))
	BFLY(R9, R13, 80(R12), 88(R12))
	BFLY(R14, R15, 96(R12), 104(R12))
	REDUCE4(BX)
	REDUCE4(CX)
	REDUCE4(DI)
	REDUCE4(R8)
	REDUCE4(R9)
	REDUCE4(R13)
	REDUCE4(R14)
	REDUCE4(R15)
	MOVQ BX, (SI)
	MOVQ CX, 8(SI)
	MOVQ DI, 16(SI)
	MOVQ R8, 24(SI)
	MOVQ R9, 32(SI)
	MOVQ R13, 40(SI)
	MOVQ R14, 48(SI)
	MOVQ R15, 56(SI)
	ADDQ $64, SI
	ADDQ $112, R12
	CMPQ SI, blocks+8(FP)
	JB   eight
	RET
