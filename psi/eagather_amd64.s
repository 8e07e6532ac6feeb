//go:build !purego

#include "textflag.h"

// eaGatherAsm is gather (svole.go) for eaWeight = 11, with software
// prefetch: while it sums the 11 positions of output k it prefetches
// those of output k+eaPrefetch, so that the reads of the next outputs
// are in flight while this one's are summed. The positions are
// pseudorandom in a vector far larger than the caches; without the
// prefetch, the misses in flight are bounded by the out-of-order window.
// Same outputs as gather, checked by TestEAGather.

#define W 11
#define DIST 8

// func eaGatherAsm(out *gf, x *gf, idx *uint32, n int)
TEXT ·eaGatherAsm(SB), NOSPLIT, $0-32
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ idx+16(FP), BX
	MOVQ n+24(FP), CX
	MOVQ CX, R9
	SUBQ $DIST, R9 // outputs with a prefetch
	JLE  tail

#define PF(j) MOVL (W*4*DIST+4*j)(BX), AX; SHLQ $4, AX; PREFETCHT0 (SI)(AX*1)
#define ADD(j) MOVL (4*j)(BX), AX; SHLQ $4, AX; MOVOU (SI)(AX*1), X1; PXOR X1, X0

pfloop:
	PF(0); PF(1); PF(2); PF(3); PF(4); PF(5); PF(6); PF(7); PF(8); PF(9); PF(10)
	PXOR X0, X0
	ADD(0); ADD(1); ADD(2); ADD(3); ADD(4); ADD(5); ADD(6); ADD(7); ADD(8); ADD(9); ADD(10)
	MOVOU X0, (DI)
	ADDQ  $16, DI
	ADDQ  $(W*4), BX
	DECQ  CX
	DECQ  R9
	JNZ   pfloop

tail:
	TESTQ CX, CX
	JLE   done

tloop:
	PXOR X0, X0
	ADD(0); ADD(1); ADD(2); ADD(3); ADD(4); ADD(5); ADD(6); ADD(7); ADD(8); ADD(9); ADD(10)
	MOVOU X0, (DI)
	ADDQ  $16, DI
	ADDQ  $(W*4), BX
	DECQ  CX
	JNZ   tloop

done:
	RET

// func gather16Asm(dst, src unsafe.Pointer, idx *int32, n int)
// dst[k] = src[idx[k]] for 16-byte elements, prefetching the element
// 16 positions ahead (gather16, okvs.go).
TEXT ·gather16Asm(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ idx+16(FP), BX
	MOVQ n+24(FP), CX
	MOVQ CX, R9
	SUBQ $16, R9
	JLE  g16tail

g16pf:
	MOVLQSX 64(BX), AX
	SHLQ    $4, AX
	PREFETCHT0 (SI)(AX*1)
	MOVLQSX (BX), AX
	SHLQ    $4, AX
	MOVOU   (SI)(AX*1), X0
	MOVOU   X0, (DI)
	ADDQ    $16, DI
	ADDQ    $4, BX
	DECQ    CX
	DECQ    R9
	JNZ     g16pf

g16tail:
	TESTQ CX, CX
	JLE   g16done

g16loop:
	MOVLQSX (BX), AX
	SHLQ    $4, AX
	MOVOU   (SI)(AX*1), X0
	MOVOU   X0, (DI)
	ADDQ    $16, DI
	ADDQ    $4, BX
	DECQ    CX
	JNZ     g16loop

g16done:
	RET
