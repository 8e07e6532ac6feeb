package paillier

import (
	"fmt"
	"math"
	"math/big"
	"sync"
	"sync/atomic"
	"testing"
)

// Key-size policy.
//
// Production keys have a modulus n of exactly 2048, 3072 or 4096 bits
// (NIST SP 800-57 Part 1 Rev. 5, Table 2: 2048-bit factoring-based keys
// give 112-bit security, 3072 bits 128-bit security). Key generation,
// dealing, NewPublicKey and every decoder refuse other sizes. Smaller moduli
// (MinTestBits up to 2047 bits) exist only to keep test suites fast: a test
// binary opts in with AllowTestKeySizes, which refuses to work in any other
// binary. Sizes above 4096 bits are refused because nothing needs them and
// they multiply the cost a hostile key can impose (tables, proofs).
const (
	// MinTestBits is the smallest modulus accepted after AllowTestKeySizes.
	MinTestBits = 512
)

// testKeySizes is set by AllowTestKeySizes.
var testKeySizes atomic.Bool

// AllowTestKeySizes lets this process generate, deal and decode keys with
// moduli of MinTestBits..2047 bits, which are insecure and for tests only.
// It works only in test binaries (testing.Testing reports true); elsewhere
// it changes nothing and returns an error wrapping ErrInvalidKey. Call it
// from a test's init or TestMain.
func AllowTestKeySizes() error {
	if !testing.Testing() {
		return fmt.Errorf("%w: test key sizes are refused outside test binaries", ErrInvalidKey)
	}
	testKeySizes.Store(true)
	return nil
}

// acceptedBits reports whether a modulus of bits bits is allowed under the
// key-size policy above.
func acceptedBits(bits int) bool {
	switch bits {
	case 2048, 3072, 4096:
		return true
	}
	return testKeySizes.Load() && bits >= MinTestBits && bits < MinBits
}

func sizePolicyError(bits int) error {
	if testKeySizes.Load() {
		return fmt.Errorf("%w: modulus of %d bits; want 2048, 3072 or 4096 (or %d..%d in tests)", ErrInvalidKey, bits, MinTestBits, MinBits-1)
	}
	return fmt.Errorf("%w: modulus of %d bits; want 2048, 3072 or 4096", ErrInvalidKey, bits)
}

// Small-factor sieve for moduli. An honest n = p·q has two prime factors of
// |n|/2 bits; a factor below sieveBound (2^18, the bound the safe-prime
// sieve uses) means the modulus is degenerate (3·q, 65537·q): anyone who
// finds the factor can decrypt. The check computes gcd(n, P mod n) with P
// the product of all odd primes below the bound (about 2^378000), which is
// one long division and one gcd instead of 23 000 trial divisions.
var (
	sieveProductOnce sync.Once
	sieveProduct     *big.Int
)

func smallPrimeProduct() *big.Int {
	sieveProductOnce.Do(func() {
		ps := smallPrimes()
		leaves := make([]*big.Int, len(ps))
		for i, p := range ps {
			leaves[i] = new(big.Int).SetUint64(uint64(p))
		}
		// Product tree: pairwise products until one value is left, which
		// keeps the multiplications balanced.
		for len(leaves) > 1 {
			next := leaves[:0:0]
			for i := 0; i < len(leaves); i += 2 {
				if i+1 == len(leaves) {
					next = append(next, leaves[i])
					break
				}
				next = append(next, new(big.Int).Mul(leaves[i], leaves[i+1]))
			}
			leaves = next
		}
		sieveProduct = leaves[0]
	})
	return sieveProduct
}

// checkModulus enforces the key-size policy and refuses moduli that no
// honest key has: even, prime, with a prime factor below 2^18, or a perfect
// power (p², p³, …; n = p² would be factored by a square root). It cannot
// show that n has exactly two large prime factors: that takes the
// factorisation, which the dealer alone knows, so a dealer is still trusted
// to pick n honestly (as Damgård–Jurik §4 assume).
func checkModulus(n *big.Int) error {
	if n == nil || n.Sign() <= 0 {
		return fmt.Errorf("%w: missing modulus", ErrInvalidKey)
	}
	if !acceptedBits(n.BitLen()) {
		return sizePolicyError(n.BitLen())
	}
	if n.Bit(0) == 0 {
		return fmt.Errorf("%w: even modulus", ErrInvalidKey)
	}
	// gcd(n, P) = gcd(n, P mod n); P is much longer than n.
	r := new(big.Int).Mod(smallPrimeProduct(), n)
	if g := r.GCD(nil, nil, r, n); g.Cmp(one) != 0 {
		return fmt.Errorf("%w: modulus has a prime factor below 2^18", ErrInvalidKey)
	}
	// Every prime factor exceeds 2^18, so n = a^k needs k ≤ |n|/18; it is
	// enough to test prime k.
	for k := 2; k <= n.BitLen()/18; k++ {
		if !big.NewInt(int64(k)).ProbablyPrime(0) {
			continue
		}
		if r := iroot(n, k); new(big.Int).Exp(r, big.NewInt(int64(k)), nil).Cmp(n) == 0 {
			return fmt.Errorf("%w: modulus is a perfect power (k = %d)", ErrInvalidKey, k)
		}
	}
	// Baillie–PSW (FIPS 186-5 B.3.1 style probable-prime test): a prime n
	// has no Paillier structure at all.
	if n.ProbablyPrime(0) {
		return fmt.Errorf("%w: modulus is prime", ErrInvalidKey)
	}
	return nil
}

// iroot returns ⌊n^(1/k)⌋ for n > 0 and k ≥ 2 by integer Newton iteration
// x ← ((k−1)·x + ⌊n / x^(k−1)⌋) / k, started from a float estimate. One
// step from any x > 0 lands at or above the root (AM–GM), after which the
// iterates decrease strictly until they reach it.
func iroot(n *big.Int, k int) *big.Int {
	if k == 2 {
		return new(big.Int).Sqrt(n)
	}
	// log2 n from the top 53 bits, then 2^(log2(n)/k).
	bl := n.BitLen()
	shift := max(bl-53, 0)
	top, _ := new(big.Float).SetInt(new(big.Int).Rsh(n, uint(shift))).Float64()
	l := (math.Log2(top) + float64(shift)) / float64(k)
	e := int(math.Floor(l))
	est, _ := new(big.Float).SetMantExp(big.NewFloat(math.Exp2(l-float64(e))), e).Int(nil)
	x := est.Add(est, one)
	km1 := big.NewInt(int64(k - 1))
	kk := big.NewInt(int64(k))
	step := func(x *big.Int) *big.Int {
		t := new(big.Int).Exp(x, km1, nil)
		t.Quo(n, t)
		y := new(big.Int).Mul(x, km1)
		y.Add(y, t)
		return y.Quo(y, kk)
	}
	x = step(x)
	for {
		y := step(x)
		if y.Cmp(x) >= 0 {
			return x
		}
		x = y
	}
}

// smallOrderBound: group elements of order at most this are refused.
// x has order ≤ B exactly when x^L = 1 for some L dividing lcm(1..B), so
// one exponentiation by lcm(1..B) (369 bits for B = 256) rules out every
// such order. Honest keys' elements have orders with a prime factor of
// about |n|/2 bits. Larger smooth orders cannot be ruled out without the
// factorisation.
const smallOrderBound = 256

var (
	smallOrderOnce sync.Once
	smallOrderExp  *big.Int // lcm(1..smallOrderBound)
)

func smallOrderExponent() *big.Int {
	smallOrderOnce.Do(func() {
		l := big.NewInt(1)
		g := new(big.Int)
		for i := int64(2); i <= smallOrderBound; i++ {
			b := big.NewInt(i)
			g.GCD(nil, nil, l, b)
			l.Mul(l, b.Quo(b, g))
		}
		smallOrderExp = l
	})
	return smallOrderExp
}

// checkElement refuses a public group element (the encryption base H, v or
// a verification key v_i) that no honest dealer produces: anything outside
// Z*_{n^(s+1)} (0, non-units), 1, −1, and every element of order at most
// smallOrderBound. With H = 1 every ciphertext is (1+n)^m and reveals m as
// (c−1)/n; with v = 1 and v_i = 1 a share computed from any secret passes
// the proof. square additionally requires Jacobi symbol +1 modulo n, which
// every square (v and the v_i) has.
func checkElement(x, n, ns1 *big.Int, square bool, what string) error {
	if !inUnits(x, ns1) {
		return fmt.Errorf("%w: %s not in Z*_{n^(s+1)}", ErrInvalidKey, what)
	}
	if x.Cmp(one) == 0 || new(big.Int).Add(x, one).Cmp(ns1) == 0 {
		return fmt.Errorf("%w: %s is ±1", ErrInvalidKey, what)
	}
	if square && big.Jacobi(new(big.Int).Mod(x, n), n) != 1 {
		return fmt.Errorf("%w: %s is not a square", ErrInvalidKey, what)
	}
	if new(big.Int).Exp(x, smallOrderExponent(), ns1).Cmp(one) == 0 {
		return fmt.Errorf("%w: %s has order at most %d", ErrInvalidKey, what, smallOrderBound)
	}
	return nil
}
