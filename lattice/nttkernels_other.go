//go:build !amd64 || purego

package lattice

// radix4Fast is radix4 where there is no assembly.
func radix4Fast(c []uint64, t, m int, q uint64, r *shoupRoots, lo, hi int) {
	radix4(c, t, m, q, r, lo, hi)
}

// last1Fast is last1 where there is no assembly.
func last1Fast(c []uint64, q uint64, r *shoupRoots) { last1(c, q, r) }

// last3Fast is last3 where there is no assembly.
func last3Fast(c []uint64, q uint64, r *shoupRoots) { last3(c, q, r) }

// dense is denseGo where there is no assembly.
func dense(c []uint64, t, m int, q uint64, r *shoupRoots) { denseGo(c, t, m, q, r) }
