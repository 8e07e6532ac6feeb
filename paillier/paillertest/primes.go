// Package paillertest provides test and benchmark fixtures for code built on
// package paillier. Nothing here is for production keys.
package paillertest

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"

	"github.com/cohortdm/cohort/paillier"
)

// SafePrimes returns two distinct safe primes of bits bits each, cached in
// os.TempDir() because generating them takes longer than most benchmarks.
// The cache file is shared with paillier's own benchmarks; keys built from
// it are fixtures, never committed.
func SafePrimes(bits int) (*big.Int, *big.Int, error) {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("cohort-paillier-safeprimes-%d.txt", bits))
	if b, err := os.ReadFile(path); err == nil {
		f := strings.Fields(string(b))
		if len(f) == 2 {
			p, ok1 := new(big.Int).SetString(f[0], 16)
			q, ok2 := new(big.Int).SetString(f[1], 16)
			if ok1 && ok2 && isSafe(p, bits) && isSafe(q, bits) && p.Cmp(q) != 0 {
				return p, q, nil
			}
		}
	}
	p, err := paillier.GenerateSafePrime(context.Background(), rand.Reader, bits)
	if err != nil {
		return nil, nil, err
	}
	var q *big.Int
	for q == nil || q.Cmp(p) == 0 {
		if q, err = paillier.GenerateSafePrime(context.Background(), rand.Reader, bits); err != nil {
			return nil, nil, err
		}
	}
	_ = os.WriteFile(path, []byte(p.Text(16)+"\n"+q.Text(16)+"\n"), 0o600)
	return p, q, nil
}

func isSafe(p *big.Int, bits int) bool {
	return p.BitLen() == bits && p.ProbablyPrime(10) && new(big.Int).Rsh(p, 1).ProbablyPrime(10)
}
