//go:build !purego

package lattice

// radix4Asm is radix4 for 4h-coefficient blocks (nttkernels_amd64.s):
// m blocks, block i turned by the (w, wp) pair at r1[2i:] in the first
// stage and by those at r2[4i:] in the second, on n8/8 quadruples from c
// (at the first's lo in block 0) and from skip8/8 words after the
// previous block's last in the next. m, h, n8 ≥ 1.
//
//go:noescape
func radix4Asm(c *uint64, h, m int, q uint64, r1, r2 *uint64, n8, skip8 int)

// radix4Fast is radix4 in assembly; its bounds are checked here.
func radix4Fast(c []uint64, t, m int, q uint64, r *shoupRoots, lo, hi int) {
	h := t / 2
	if lo < 0 || hi > h || lo >= hi {
		panic("lattice: radix4 on an empty or out-of-block range")
	}
	_, _ = c[2*t*m-1], r.wi[8*m-1]
	radix4Asm(&c[lo], h, m, q, &r.wi[2*m], &r.wi[4*m], 8*(hi-lo), 8*(4*h-(hi-lo)))
}

// last1Asm is last1 (nttkernels_amd64.s) on the pairs of c, pair j
// turned by the (w, wp) pair at r[2j:]. pairs ≥ 1.
//
//go:noescape
func last1Asm(c *uint64, pairs int, q uint64, r *uint64)

// last1Fast is last1 in assembly; its bounds are checked here.
func last1Fast(c []uint64, q uint64, r *shoupRoots) {
	n := len(c)
	_ = r.wi[2*n-1]
	last1Asm(&c[0], n/2, q, &r.wi[n])
}

// last3Asm is last3 (nttkernels_amd64.s) on blocks eight-coefficient
// blocks from c, block b turned by the seven (w, wp) pairs at r[14b:]
// (shoupRoots.w8). blocks ≥ 1.
//
//go:noescape
func last3Asm(c *uint64, blocks int, q uint64, r *uint64)

// last3Fast is last3 in assembly; its bounds are checked here.
func last3Fast(c []uint64, q uint64, r *shoupRoots) {
	n := len(c)
	_ = r.w8[14*(n/8)-1]
	last3Asm(&c[0], n/8, q, &r.w8[0])
}

// dense is denseAsm on amd64: two stages a pass in assembly, about a
// third faster than denseGo (docs/boost.md).
func dense(c []uint64, t, m int, q uint64, r *shoupRoots) { denseAsm(c, t, m, q, r) }
