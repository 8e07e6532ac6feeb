//go:build amd64 && !purego

#include "textflag.h"

// func step(t, a, m []big.Word, bi, minv big.Word)
//
// stepGeneric in mont.go, word for word: one CIOS step over k = len(a)
// words (t has k+1), t = (t + a·bi + u·m)/2^64 with u = (t[0] +
// a[0]·bi)·minv mod 2^64. R10 and R11 carry the high words of the two
// products (c1, c2); each DX:AX = x·y + s + c fits 128 bits.
TEXT ·step(SB), NOSPLIT, $0-88
	MOVQ t_base+0(FP), BX
	MOVQ a_base+24(FP), SI
	MOVQ a_len+32(FP), CX
	MOVQ m_base+48(FP), DI
	MOVQ bi+72(FP), R8

	// word 0: S = t[0] + a[0]·bi, u = S·minv, S + u·m[0] ≡ 0.
	MOVQ 0(SI), AX
	MULQ R8
	ADDQ 0(BX), AX
	ADCQ $0, DX
	MOVQ DX, R10 // c1
	MOVQ AX, R12 // S
	MOVQ minv+80(FP), R9
	IMULQ AX, R9 // u
	MOVQ 0(DI), AX
	MULQ R9
	ADDQ R12, AX
	ADCQ $0, DX
	MOVQ DX, R11 // c2
	ADDQ $8, SI
	ADDQ $8, DI
	ADDQ $8, BX
	DECQ CX

loop:
	TESTQ CX, CX
	JZ    top
	MOVQ  0(SI), AX
	MULQ  R8
	ADDQ  0(BX), AX
	ADCQ  $0, DX
	ADDQ  R10, AX
	ADCQ  $0, DX
	MOVQ  DX, R10
	MOVQ  AX, R12
	MOVQ  0(DI), AX
	MULQ  R9
	ADDQ  R12, AX
	ADCQ  $0, DX
	ADDQ  R11, AX
	ADCQ  $0, DX
	MOVQ  DX, R11
	MOVQ  AX, -8(BX)
	ADDQ  $8, SI
	ADDQ  $8, DI
	ADDQ  $8, BX
	DECQ  CX
	JMP   loop

top:
	// BX points at t[k]: t[k−1], t[k] = t[k] + c1 + c2.
	MOVQ 0(BX), AX
	XORQ DX, DX
	ADDQ R10, AX
	ADCQ $0, DX
	ADDQ R11, AX
	ADCQ $0, DX
	MOVQ AX, -8(BX)
	MOVQ DX, 0(BX)
	RET
