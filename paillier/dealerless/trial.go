package dealerless

import (
	"math/big"
	"math/bits"
	"runtime"
)

// trialBound is the trial-division bound for N (Boneh–Franklin §3, step
// "trial division"): paillier refuses a modulus with a prime factor below
// 2^18, so every candidate N is divided by every odd prime below it. Each
// modulus that survives costs a biprimality test, and a higher bound lets
// fewer survive ((18/20)² ≈ 0.81 as many at 2^20, by Mertens), but with
// sieved candidates the division costs as much as it saves: for a batch of
// 1024 sieved moduli, filter took 73 ms to 2^18 (260 survived) and 160 ms
// to 2^20 (205 survived), against about 1.4 ms per exponentiation of a
// test, of which each party does one and party 1 two.
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

func newTrialDivider() *trialDivider { return newTrialDividerTo(trialBound) }

// newTrialDividerTo divides by the odd primes below bound (> quickBound).
func newTrialDividerTo(bound int) *trialDivider {
	sieve := make([]bool, bound)
	td := &trialDivider{}
	var leaves []*big.Int
	var group []uint64
	prod := uint64(1)
	for p := 3; p < bound; p += 2 {
		if sieve[p] {
			continue
		}
		for m := p * p; m < bound; m += 2 * p {
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

// passes reports whether N has no odd prime factor below the bound.
func (td *trialDivider) passes(n *big.Int) bool {
	if !td.quick(n) {
		return false
	}
	x := new(big.Int).Mod(td.rest, n)
	return x.GCD(nil, nil, x, n).Cmp(big.NewInt(1)) == 0
}

// quick reports whether n has no prime factor below quickBound.
func (td *trialDivider) quick(n *big.Int) bool {
	for g, m := range td.prods {
		r := modWord(n, m)
		for _, p := range td.groups[g] {
			if r%p == 0 {
				return false
			}
		}
	}
	return true
}

// filter reports for each of ns whether it has no odd prime factor below
// the bound: passes for a whole batch at once. The remainders of the
// product of the large primes modulo every n come from a remainder tree
// (the product of the moduli, then of each half, down to each modulus)
// instead of one long division per modulus: 78 ms against 205 ms for
// 1024 sieved 2048-bit moduli on two cores. The moduli are split into one
// tree per core.
func (td *trialDivider) filter(ns []*big.Int) []bool {
	ok := make([]bool, len(ns))
	quick := make([]bool, len(ns))
	parallel(len(ns), func(i int) { quick[i] = td.quick(ns[i]) })
	var idx []int
	for i, q := range quick {
		if q {
			idx = append(idx, i)
		}
	}
	parts := min(runtime.GOMAXPROCS(0), len(idx))
	parallel(parts, func(w int) {
		part := idx[w*len(idx)/parts : (w+1)*len(idx)/parts]
		tree := [][]*big.Int{make([]*big.Int, len(part))}
		for j, i := range part {
			tree[0][j] = ns[i]
		}
		for top := tree[0]; len(top) > 1; top = tree[len(tree)-1] {
			next := make([]*big.Int, (len(top)+1)/2)
			for j := range next {
				if 2*j+1 < len(top) {
					next[j] = new(big.Int).Mul(top[2*j], top[2*j+1])
				} else {
					next[j] = top[2*j]
				}
			}
			tree = append(tree, next)
		}
		rems := []*big.Int{new(big.Int).Mod(td.rest, tree[len(tree)-1][0])}
		for l := len(tree) - 2; l >= 0; l-- {
			next := make([]*big.Int, len(tree[l]))
			for j := range next {
				next[j] = new(big.Int).Mod(rems[j/2], tree[l][j])
			}
			rems = next
		}
		for j, i := range part {
			ok[i] = rems[j].GCD(nil, nil, rems[j], ns[i]).Cmp(big.NewInt(1)) == 0
		}
	})
	return ok
}
