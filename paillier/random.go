package paillier

import (
	"crypto/rand"
	"io"
	"math/big"
)

// randomBits returns a uniform integer in [0, 2^bits).
func randomBits(random io.Reader, bits int) (*big.Int, error) {
	b := make([]byte, (bits+7)/8)
	if _, err := io.ReadFull(random, b); err != nil {
		return nil, err
	}
	if extra := len(b)*8 - bits; extra > 0 {
		b[0] &= byte(0xff >> extra)
	}
	return new(big.Int).SetBytes(b), nil
}

// randomUnit returns a uniform element of Z*_m.
func randomUnit(random io.Reader, m *big.Int) (*big.Int, error) {
	g := new(big.Int)
	for {
		r, err := rand.Int(random, m)
		if err != nil {
			return nil, err
		}
		if r.Sign() > 0 && g.GCD(nil, nil, r, m).Cmp(one) == 0 {
			return r, nil
		}
	}
}

// inUnits reports whether 0 < x < m and gcd(x, m) = 1.
func inUnits(x, m *big.Int) bool {
	if x == nil || x.Sign() <= 0 || x.Cmp(m) >= 0 {
		return false
	}
	return new(big.Int).GCD(nil, nil, x, m).Cmp(one) == 0
}
