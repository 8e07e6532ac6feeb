package paillier

import (
	"crypto/rand"
	"fmt"
	"io"
	"math/big"
	"sync"
)

// PrivateKey is a Paillier / Damgård–Jurik private key.
type PrivateKey struct {
	PublicKey
	// P and Q are the prime factors of N.
	P, Q *big.Int

	// CRT precomputation.
	ps1, qs1       *big.Int // p^(s+1), q^(s+1)
	expP, expQ     *big.Int // λ reduced modulo φ(p^(s+1)) and φ(q^(s+1))
	qs1InvP        *big.Int // (q^(s+1))^-1 mod p^(s+1)
	lambdaInv      *big.Int // λ^-1 mod n^s
	hp, hq         *big.Int // s = 1 Paillier CRT constants
	lambda         *big.Int
	precomputeOnce sync.Once
}

// GenerateKey returns a plain Paillier key (s = 1) with an n of the given
// size (use DefaultBits = 2048; 3072 and 4096 are supported). The primes are
// Blum primes (≡ 3 mod 4) of equal size, so that h = -x² generates the
// Jacobi-symbol-1 subgroup as the DJN fixed-base encryption assumes.
func GenerateKey(random io.Reader, bits int) (*PrivateKey, error) {
	return GenerateKeyDJ(random, bits, 1)
}

// GenerateKeyDJ returns a Damgård–Jurik key of degree s: plaintexts in
// Z_{n^s}, ciphertexts in Z*_{n^(s+1)}.
func GenerateKeyDJ(random io.Reader, bits, s int) (*PrivateKey, error) {
	if random == nil {
		random = rand.Reader
	}
	if !acceptedBits(bits) || bits%2 != 0 {
		return nil, sizePolicyError(bits)
	}
	for {
		p, err := blumPrime(random, bits/2)
		if err != nil {
			return nil, err
		}
		q, err := blumPrime(random, bits/2)
		if err != nil {
			return nil, err
		}
		if p.Cmp(q) == 0 {
			continue
		}
		n := new(big.Int).Mul(p, q)
		if n.BitLen() != bits {
			continue
		}
		return NewPrivateKey(random, p, q, s)
	}
}

func blumPrime(random io.Reader, bits int) (*big.Int, error) {
	for {
		p, err := rand.Prime(random, bits)
		if err != nil {
			return nil, err
		}
		if p.Bit(1) == 1 && p.Bit(bits-2) == 1 {
			return p, nil
		}
	}
}

// NewPrivateKey builds a key from its primes.
func NewPrivateKey(random io.Reader, p, q *big.Int, s int) (*PrivateKey, error) {
	if p == nil || q == nil || p.Sign() <= 0 || q.Sign() <= 0 || p.Cmp(q) == 0 {
		return nil, fmt.Errorf("%w: p and q must be distinct primes", ErrInvalidKey)
	}
	if p.Cmp(q) == 0 || !p.ProbablyPrime(20) || !q.ProbablyPrime(20) {
		return nil, fmt.Errorf("%w: p and q must be distinct primes", ErrInvalidKey)
	}
	n := new(big.Int).Mul(p, q)
	phi := new(big.Int).Mul(new(big.Int).Sub(p, one), new(big.Int).Sub(q, one))
	if new(big.Int).GCD(nil, nil, n, phi).Cmp(one) != 0 {
		return nil, fmt.Errorf("%w: gcd(n, φ(n)) ≠ 1", ErrInvalidKey)
	}
	pk, err := NewPublicKey(random, n, s, nil)
	if err != nil {
		return nil, err
	}
	sk := &PrivateKey{PublicKey: *pk, P: new(big.Int).Set(p), Q: new(big.Int).Set(q)}
	sk.precompute()
	return sk, nil
}

func (sk *PrivateKey) precompute() {
	sk.precomputeOnce.Do(func() {
		s := sk.s()
		p, q := sk.P, sk.Q
		pm1 := new(big.Int).Sub(p, one)
		qm1 := new(big.Int).Sub(q, one)
		sk.lambda = new(big.Int).Mul(pm1, qm1)
		sk.lambda.Quo(sk.lambda, new(big.Int).GCD(nil, nil, pm1, qm1))
		es := big.NewInt(int64(s))
		ps := new(big.Int).Exp(p, es, nil)
		qs := new(big.Int).Exp(q, es, nil)
		sk.ps1 = new(big.Int).Mul(ps, p)
		sk.qs1 = new(big.Int).Mul(qs, q)
		sk.qs1InvP = new(big.Int).ModInverse(sk.qs1, sk.ps1)
		sk.expP = new(big.Int).Mod(sk.lambda, new(big.Int).Mul(ps, pm1))
		sk.expQ = new(big.Int).Mod(sk.lambda, new(big.Int).Mul(qs, qm1))
		sk.lambdaInv = new(big.Int).ModInverse(sk.lambda, sk.ns())
		if s == 1 {
			// Paillier §7: m_p = L_p(c^(p-1) mod p²)·h_p mod p with
			// h_p = L_p(g^(p-1) mod p²)^-1 mod p.
			sk.hp = hConst(p, q, sk.ps1)
			sk.hq = hConst(q, p, sk.qs1)
		}
	})
}

func hConst(p, q, p2 *big.Int) *big.Int {
	n := new(big.Int).Mul(p, q)
	g := new(big.Int).Add(n, one)
	t := new(big.Int).Exp(g, new(big.Int).Sub(p, one), p2)
	t.Sub(t, one)
	t.Quo(t, p)
	return t.ModInverse(t, p)
}

// Decrypt returns the plaintext of c in [0, n^s), using the CRT.
func (sk *PrivateKey) Decrypt(c *Ciphertext) (*big.Int, error) {
	if sk == nil || sk.P == nil || sk.Q == nil || sk.P.Sign() <= 0 || sk.Q.Sign() <= 0 {
		return nil, fmt.Errorf("%w: private key without factors", ErrInvalidKey)
	}
	if err := sk.checkShape(); err != nil {
		return nil, err
	}
	if new(big.Int).Mul(sk.P, sk.Q).Cmp(sk.N) != 0 {
		return nil, fmt.Errorf("%w: p·q ≠ n", ErrInvalidKey)
	}
	if err := sk.ValidateCiphertext(c); err != nil {
		return nil, err
	}
	sk.precompute()
	if sk.s() == 1 {
		mp := crtHalf(c.C, sk.P, sk.ps1, sk.hp)
		mq := crtHalf(c.C, sk.Q, sk.qs1, sk.hq)
		// m = mq + q·((mp - mq)·q^-1 mod p)
		qInv := new(big.Int).ModInverse(sk.Q, sk.P)
		t := mp.Sub(mp, mq)
		t.Mul(t, qInv)
		t.Mod(t, sk.P)
		t.Mul(t, sk.Q)
		return t.Add(t, mq), nil
	}
	// a = c^λ mod n^(s+1) by CRT, then the Damgård–Jurik discrete log.
	ap := new(big.Int).Exp(new(big.Int).Mod(c.C, sk.ps1), sk.expP, sk.ps1)
	aq := new(big.Int).Exp(new(big.Int).Mod(c.C, sk.qs1), sk.expQ, sk.qs1)
	a := crt(ap, aq, sk.ps1, sk.qs1, sk.qs1InvP)
	i := dlogDJ(a, sk.N, sk.s())
	i.Mul(i, sk.lambdaInv)
	return i.Mod(i, sk.ns()), nil
}

func crtHalf(c, p, p2, h *big.Int) *big.Int {
	t := new(big.Int).Mod(c, p2)
	t.Exp(t, new(big.Int).Sub(p, one), p2)
	t.Sub(t, one)
	t.Quo(t, p)
	t.Mul(t, h)
	return t.Mod(t, p)
}

// crt returns x with x ≡ a mod m1, x ≡ b mod m2, given m2^-1 mod m1.
func crt(a, b, m1, m2, m2InvM1 *big.Int) *big.Int {
	t := new(big.Int).Sub(a, b)
	t.Mul(t, m2InvM1)
	t.Mod(t, m1)
	t.Mul(t, m2)
	return t.Add(t, b)
}

// dlogDJ returns i ∈ Z_{n^s} with (1+n)^i = a mod n^(s+1) (Damgård–Jurik
// 2001, Theorem 1's algorithm). a must be of that form.
func dlogDJ(a, n *big.Int, s int) *big.Int {
	if s == 1 {
		n2 := new(big.Int).Mul(n, n)
		t := new(big.Int).Mod(a, n2)
		t.Sub(t, one)
		t.Quo(t, n)
		return t
	}
	i := new(big.Int)
	nj := new(big.Int).Set(n) // n^j
	for j := 1; j <= s; j++ {
		nj1 := new(big.Int).Mul(nj, n) // n^(j+1)
		t1 := new(big.Int).Mod(a, nj1)
		t1.Sub(t1, one)
		t1.Quo(t1, n)
		t2 := new(big.Int).Set(i)
		kfact := big.NewInt(1)
		nk1 := big.NewInt(1) // n^(k-1)
		for k := 2; k <= j; k++ {
			i.Sub(i, one)
			t2.Mul(t2, i)
			t2.Mod(t2, nj)
			kfact.Mul(kfact, big.NewInt(int64(k)))
			nk1.Mul(nk1, n)
			u := new(big.Int).Mul(t2, nk1)
			u.Mul(u, new(big.Int).ModInverse(kfact, nj))
			t1.Sub(t1, u)
			t1.Mod(t1, nj)
		}
		i.Set(t1)
		nj = nj1
	}
	return i
}
