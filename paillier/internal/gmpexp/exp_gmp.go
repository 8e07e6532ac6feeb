//go:build gmp && cgo

package gmpexp

/*
#cgo LDFLAGS: -lgmp
#include <gmp.h>
#include <stdint.h>
#include <string.h>

// wipe_clear zeroes every allocated limb of z before freeing it: mpz_clear
// does not, and z may hold the secret exponent or values derived from it.
// A volatile pointer keeps the compiler from dropping the stores.
static void wipe_clear(mpz_ptr z) {
	volatile mp_limb_t *p = (volatile mp_limb_t *)z->_mp_d;
	for (int i = 0; i < z->_mp_alloc; i++) p[i] = 0;
	mpz_clear(z);
}

// powm sets out (outcap limbs, least significant first) to b^e mod m and
// returns the number of limbs written. The inputs are limb arrays, least
// significant first, with en > 0 and m odd and > 1. sec selects
// mpz_powm_sec (constant-time) over mpz_powm.
static size_t powm(int sec, uint64_t *out, size_t outcap,
                       const uint64_t *b, size_t bn,
                       const uint64_t *e, size_t en,
                       const uint64_t *m, size_t mn) {
	mpz_t zb, ze, zm, zr;
	size_t count = 0;
	mpz_init(zb); mpz_init(ze); mpz_init(zm); mpz_init(zr);
	mpz_import(zb, bn, -1, sizeof(uint64_t), 0, 0, b);
	mpz_import(ze, en, -1, sizeof(uint64_t), 0, 0, e);
	mpz_import(zm, mn, -1, sizeof(uint64_t), 0, 0, m);
	if (sec) mpz_powm_sec(zr, zb, ze, zm); else mpz_powm(zr, zb, ze, zm);
	if (mpz_size(zr) <= outcap) {
		mpz_export(out, &count, -1, sizeof(uint64_t), 0, 0, zr);
	}
	wipe_clear(zb); wipe_clear(ze); wipe_clear(zm); wipe_clear(zr);
	return count;
}
*/
import "C"

import (
	"math/big"
	"math/bits"
	"unsafe"
)

// Backend is the implementation compiled in: "gmp" with the gmp build tag
// and cgo, "math/big" otherwise.
func Backend() string { return "gmp" }

// Exp returns base^exp mod mod, with the same result as new(big.Int).Exp.
// For exp > 0 and an odd mod > 1 (the case the paillier package uses: mod
// is n^(s+1)) it runs GMP's mpz_powm_sec, which is constant-time in the
// bits of exp and of base. Other arguments (exp ≤ 0, even or nil mod) are
// handed to math/big, which is not constant-time; those exponents are not
// secret in this module.
//
// GMP's scratch space inside mpz_powm_sec is not wiped; the mpz copies of
// the inputs and the result are zeroed before they are freed.
func Exp(base, exp, mod *big.Int) *big.Int { return exp1(true, base, exp, mod) }

// ExpPublic is Exp for public exponents: with the gmp tag it runs GMP's
// mpz_powm, which is faster than mpz_powm_sec but not constant-time.
func ExpPublic(base, exp, mod *big.Int) *big.Int { return exp1(false, base, exp, mod) }

func exp1(sec bool, base, exp, mod *big.Int) *big.Int {
	if bits.UintSize != 64 || mod == nil || mod.Sign() <= 0 || mod.Bit(0) == 0 || exp.Sign() < 0 {
		return new(big.Int).Exp(base, exp, mod)
	}
	if mod.BitLen() == 1 { // mod = 1
		return new(big.Int)
	}
	if exp.Sign() == 0 {
		return big.NewInt(1)
	}
	// The base is public here; reduce it so that every input GMP sees is in
	// [0, mod) (and negative bases need no sign handling).
	b := base
	if b.Sign() < 0 || b.Cmp(mod) >= 0 {
		b = new(big.Int).Mod(base, mod)
	}
	if b.Sign() == 0 {
		return new(big.Int)
	}
	bw, ew, mw := b.Bits(), exp.Bits(), mod.Bits()
	out := make([]big.Word, len(mw))
	cs := C.int(0)
	if sec {
		cs = 1
	}
	n := C.powm(cs,
		(*C.uint64_t)(unsafe.Pointer(&out[0])), C.size_t(len(out)),
		(*C.uint64_t)(unsafe.Pointer(&bw[0])), C.size_t(len(bw)),
		(*C.uint64_t)(unsafe.Pointer(&ew[0])), C.size_t(len(ew)),
		(*C.uint64_t)(unsafe.Pointer(&mw[0])), C.size_t(len(mw)),
	)
	return new(big.Int).SetBits(out[:n])
}
