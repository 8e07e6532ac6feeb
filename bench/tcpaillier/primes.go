// Package bench compares github.com/cohortdm/cohort/paillier with
// github.com/niclabs/tcpaillier v0.0.7 on the same safe primes, in one
// benchmark run. It is a separate module so that the main module does not
// depend on tcpaillier. See docs/paillier.md for the commands and results.
package bench

import (
	"math/big"

	"github.com/cohortdm/cohort/paillier/paillertest"
)

// SafePrimes returns two distinct safe primes of bits bits each, from the
// fixture cache shared with the main module's benchmarks.
func SafePrimes(bits int) (*big.Int, *big.Int, error) { return paillertest.SafePrimes(bits) }
