package paillier

import (
	"crypto/rand"
	"fmt"
	"io"
	"math/big"

	"github.com/cohortdm/cohort/paillier/internal/gmpexp"
)

// DealThreshold deals a plain-Paillier (s = 1) threshold key with an n of
// bits bits to parties parties, any threshold+1 of whom can decrypt. It
// requires parties >= threshold+1; use parties >= 2·threshold+1 (honest
// majority) so that t corrupt parties can neither decrypt alone nor block
// decryption.
func DealThreshold(random io.Reader, bits, parties, threshold int) (*ThresholdPublicKey, []*KeyShare, error) {
	return DealThresholdDJ(random, bits, 1, parties, threshold)
}

// DealThresholdDJ is DealThreshold for Damgård–Jurik degree s.
func DealThresholdDJ(random io.Reader, bits, s, parties, threshold int) (*ThresholdPublicKey, []*KeyShare, error) {
	if random == nil {
		random = rand.Reader
	}
	if !acceptedBits(bits) || bits%2 != 0 {
		return nil, nil, sizePolicyError(bits)
	}
	if err := checkPartiesThreshold(parties, threshold); err != nil {
		return nil, nil, err
	}
	p, q, err := generateSafePrimePair(random, bits/2)
	if err != nil {
		return nil, nil, err
	}
	return DealThresholdFromPrimes(random, p, q, s, parties, threshold)
}

func checkPartiesThreshold(parties, threshold int) error {
	if parties < 1 || parties > MaxParties {
		return fmt.Errorf("%w: parties must be in 1..%d", ErrInvalidKey, MaxParties)
	}
	if threshold < 0 || parties < threshold+1 {
		return fmt.Errorf("%w: need 0 <= threshold and parties >= threshold+1", ErrInvalidKey)
	}
	return nil
}

// DealThresholdFromPrimes deals a threshold key from given safe primes
// (for tests and benchmarks that cache primes).
func DealThresholdFromPrimes(random io.Reader, p, q *big.Int, s, parties, threshold int) (*ThresholdPublicKey, []*KeyShare, error) {
	if random == nil {
		random = rand.Reader
	}
	if err := checkPartiesThreshold(parties, threshold); err != nil {
		return nil, nil, err
	}
	if p == nil || q == nil || p.Sign() <= 0 || q.Sign() <= 0 || p.Cmp(q) == 0 || p.BitLen() != q.BitLen() {
		return nil, nil, fmt.Errorf("%w: p and q must be distinct and of equal size", ErrInvalidKey)
	}
	pp := new(big.Int).Rsh(p, 1) // p'
	qq := new(big.Int).Rsh(q, 1) // q'
	for _, x := range []*big.Int{p, q, pp, qq} {
		if !x.ProbablyPrime(20) {
			return nil, nil, fmt.Errorf("%w: p and q must be safe primes", ErrInvalidKey)
		}
	}
	if pp.Cmp(big.NewInt(int64(parties))) <= 0 || qq.Cmp(big.NewInt(int64(parties))) <= 0 {
		return nil, nil, fmt.Errorf("%w: primes too small for %d parties", ErrInvalidKey, parties)
	}
	n := new(big.Int).Mul(p, q)
	pub, err := NewPublicKey(random, n, s, nil)
	if err != nil {
		return nil, nil, err
	}
	nn := new(big.Int).Mul(pp, qq) // n'
	ns := pub.NS
	ns1 := pub.NS1
	mod := new(big.Int).Mul(ns, nn) // n^s·n', the order of the squares
	// d ≡ 0 mod n', d ≡ 1 mod n^s.
	d := new(big.Int).ModInverse(nn, ns)
	if d == nil {
		return nil, nil, fmt.Errorf("%w: gcd(n', n) ≠ 1", ErrInvalidKey)
	}
	d.Mul(d, nn)
	coeffs := make([]*big.Int, threshold+1)
	coeffs[0] = d
	for k := 1; k <= threshold; k++ {
		if coeffs[k], err = rand.Int(random, mod); err != nil {
			return nil, nil, err
		}
	}
	v, err := squaresGenerator(random, ns1, mod, []*big.Int{p, q, pp, qq})
	if err != nil {
		return nil, nil, err
	}
	tpk := &ThresholdPublicKey{
		PublicKey:        *pub,
		Parties:          parties,
		Threshold:        threshold,
		V:                v,
		VerificationKeys: make([]*big.Int, parties),
	}
	shares := evalShares(tpk, coeffs, mod)
	parallel(parties, func(i int) {
		tpk.VerificationKeys[i] = gmpexp.Exp(v, shares[i].Secret, ns1) // secret exponent
	})
	tpk.KeyID = tpk.computeKeyID()
	// Self-check: never deal a key the decoders would refuse.
	if err := tpk.checkThreshold(); err != nil {
		return nil, nil, err
	}
	return tpk, shares, nil
}

// squaresGenerator returns a random square of Z*_{n^(s+1)} (modulus ns1)
// that generates the squares, a cyclic group of order mod = n^s·n': with
// the factorisation the dealer can check that v^(mod/f) ≠ 1 for every
// prime factor f of the order (p, q, p', q').
func squaresGenerator(random io.Reader, ns1, mod *big.Int, factors []*big.Int) (*big.Int, error) {
	for {
		x, err := randomUnit(random, ns1)
		if err != nil {
			return nil, err
		}
		v := x.Mul(x, x)
		v.Mod(v, ns1)
		ok := true
		for _, f := range factors {
			e := new(big.Int).Quo(mod, f)
			if new(big.Int).Exp(v, e, ns1).Cmp(one) == 0 {
				ok = false
				break
			}
		}
		if ok {
			return v, nil
		}
	}
}

// evalShares returns every party's key share: x_i = Δ·f(i) mod n^s·n'
// for the polynomial f with coefficients coeffs (Horner's rule).
func evalShares(tpk *ThresholdPublicKey, coeffs []*big.Int, mod *big.Int) []*KeyShare {
	delta := tpk.Delta()
	t := len(coeffs) - 1
	shares := make([]*KeyShare, tpk.Parties)
	for i := 1; i <= tpk.Parties; i++ {
		fi := new(big.Int).Set(coeffs[t])
		bi := big.NewInt(int64(i))
		for k := t - 1; k >= 0; k-- {
			fi.Mul(fi, bi)
			fi.Add(fi, coeffs[k])
			fi.Mod(fi, mod)
		}
		x := fi.Mul(fi, delta)
		x.Mod(x, mod)
		shares[i-1] = &KeyShare{Index: i, Secret: x, Public: tpk}
	}
	return shares
}
