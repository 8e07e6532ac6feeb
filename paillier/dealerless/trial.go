package dealerless

import (
	"math/big"
	"math/bits"
)

// trialBound is the trial-division bound for N: paillier refuses a modulus
// with a prime factor below 2^18, so every candidate N is divided by every
// odd prime below it (Boneh–Franklin §3, step "trial division").
const trialBound = 1 << 18

// quickBound splits trial division in two: primes below it are tested with
// word-sized remainders (cheap, and they reject most candidates), the rest
// with one gcd against their product.
const quickBound = 1 << 12

// trialDivider tests candidate moduli for small prime factors.
type trialDivider struct {
	groups [][]uint64 // primes below quickBound, grouped so that each group's product fits 64 bits
	prods  []uint64
	rest   *big.Int // product of the primes in [quickBound, trialBound)
}

func newTrialDivider() *trialDivider {
	sieve := make([]bool, trialBound)
	td := &trialDivider{}
	var leaves []*big.Int
	var group []uint64
	prod := uint64(1)
	for p := 3; p < trialBound; p += 2 {
		if sieve[p] {
			continue
		}
		for m := p * p; m < trialBound; m += 2 * p {
			sieve[m] = true
		}
		if p >= quickBound {
			leaves = append(leaves, big.NewInt(int64(p)))
			continue
		}
		if hi, _ := bits.Mul64(prod, uint64(p)); hi != 0 {
			td.groups, td.prods = append(td.groups, group), append(td.prods, prod)
			group, prod = nil, 1
		}
		group = append(group, uint64(p))
		prod *= uint64(p)
	}
	td.groups, td.prods = append(td.groups, group), append(td.prods, prod)
	for len(leaves) > 1 { // product tree
		next := make([]*big.Int, 0, (len(leaves)+1)/2)
		for i := 0; i+1 < len(leaves); i += 2 {
			next = append(next, new(big.Int).Mul(leaves[i], leaves[i+1]))
		}
		if len(leaves)%2 == 1 {
			next = append(next, leaves[len(leaves)-1])
		}
		leaves = next
	}
	td.rest = leaves[0]
	return td
}

// modWord returns x mod m for a 64-bit m.
func modWord(x *big.Int, m uint64) uint64 {
	if bits.UintSize != 64 {
		return new(big.Int).Mod(x, new(big.Int).SetUint64(m)).Uint64()
	}
	ws := x.Bits()
	var r uint64
	for i := len(ws) - 1; i >= 0; i-- {
		_, r = bits.Div64(r, uint64(ws[i]), m)
	}
	return r
}

// passes reports whether N has no odd prime factor below trialBound.
func (td *trialDivider) passes(n *big.Int) bool {
	for g, m := range td.prods {
		r := modWord(n, m)
		for _, p := range td.groups[g] {
			if r%p == 0 {
				return false
			}
		}
	}
	x := new(big.Int).Mod(td.rest, n)
	return x.GCD(nil, nil, x, n).Cmp(big.NewInt(1)) == 0
}
