// Package gmpexp computes modular exponentiations with secret exponents.
//
// With the build tag gmp (and cgo enabled) Exp calls GMP's mpz_powm_sec,
// which is designed to take time and memory access patterns independent of
// the exponent's bits and of the base (it still depends on the exponent's
// bit length and the modulus size). Without the tag, Exp is
// new(big.Int).Exp from math/big, which is not constant-time. Backend
// reports which one was compiled in.
//
// Building with -tags gmp needs a C compiler and libgmp (Debian:
// apt-get install libgmp-dev). The default build needs neither.
package gmpexp
