//go:build !gmp || !cgo

package gmpexp

import "math/big"

// Backend is the implementation compiled in: "math/big" without the gmp
// build tag (or without cgo), "gmp" with it.
func Backend() string { return "math/big" }

// Exp returns base^exp mod mod as new(big.Int).Exp does. This backend is
// not constant-time.
func Exp(base, exp, mod *big.Int) *big.Int {
	return new(big.Int).Exp(base, exp, mod)
}

// ExpPublic is Exp for public exponents (with the gmp tag it uses the
// faster, non-constant-time mpz_powm). Here it is new(big.Int).Exp.
func ExpPublic(base, exp, mod *big.Int) *big.Int {
	return new(big.Int).Exp(base, exp, mod)
}
