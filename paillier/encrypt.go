package paillier

import (
	"crypto/rand"
	"fmt"
	"io"
	"math"
	"math/big"
)

// randBits is the bit length of the encryption exponent r.
func (pk *PublicKey) randBits() int {
	if pk.ShortExponent {
		return (pk.N.BitLen() + 1) / 2
	}
	return pk.N.BitLen()
}

// randExponent draws the encryption exponent r: uniform in [0, n) by
// default, uniform in [0, 2^⌈|n|/2⌉) in short-exponent mode.
//
// Why [0, n) is enough: the order d of h divides λ(n), and n = φ(n) + p+q-1,
// so n mod d ≤ p+q-1 and r mod d is within statistical distance
// (p+q)/n ≈ 2^(1-|n|/2) of uniform in Z_d. Hence H^r is that close to a
// uniform element of ⟨H⟩.
func (pk *PublicKey) randExponent(random io.Reader) (*big.Int, error) {
	if pk.ShortExponent {
		return randomBits(random, pk.randBits())
	}
	return rand.Int(random, pk.N)
}

// gPow returns (1+n)^m mod n^(s+1) by the binomial expansion
// Σ_{k=0..s} C(m,k) n^k, which costs a few multiplications.
func (pk *PublicKey) gPow(m *big.Int) *big.Int {
	ns1 := pk.ns1()
	s := pk.s()
	mm := new(big.Int).Mod(m, pk.ns())
	if s == 1 {
		r := new(big.Int).Mul(mm, pk.N)
		r.Add(r, one)
		return r.Mod(r, ns1)
	}
	res := big.NewInt(1)
	binom := big.NewInt(1) // C(m, k)
	nk := big.NewInt(1)
	t := new(big.Int)
	for k := 1; k <= s; k++ {
		// C(m,k) = C(m,k-1)·(m-k+1)/k, exact over the integers.
		t.Sub(mm, big.NewInt(int64(k-1)))
		if t.Sign() <= 0 {
			break
		}
		binom.Mul(binom, t)
		binom.Quo(binom, big.NewInt(int64(k)))
		nk.Mul(nk, pk.N)
		t.Mul(binom, nk)
		res.Add(res, t)
	}
	return res.Mod(res, ns1)
}

// randomizer returns a fresh element H^r (or r^(n^s) without a fixed base)
// from the given random bytes source.
func (pk *PublicKey) randomizer(random io.Reader) (*big.Int, error) {
	if pk.H == nil {
		r, err := randomUnit(random, pk.N)
		if err != nil {
			return nil, err
		}
		return r.Exp(r, pk.ns(), pk.ns1()), nil
	}
	r, err := pk.randExponent(random)
	if err != nil {
		return nil, err
	}
	return pk.hPow(r), nil
}

// hTable returns the fixed-base table of H for uses encryptions to come,
// or nil if none fits the budget.
func (pk *PublicKey) hTable(uses int) expTable {
	return tableFor(pk.H, pk.ns1(), pk.randBits(), encMaxWindow, int64(uses))
}

// hPowWith returns H^r with table t (nil: without a table).
func (pk *PublicKey) hPowWith(t expTable, r *big.Int) *big.Int {
	if t != nil {
		return t.exp(r)
	}
	return new(big.Int).Exp(pk.H, r, pk.ns1()) // no table within the budget
}

func (pk *PublicKey) hPow(r *big.Int) *big.Int { return pk.hPowWith(pk.hTable(1), r) }

// precomputeH builds the wide table of H now, as a key in heavy use has
// it; it reports whether it is built.
func (pk *PublicKey) precomputeH() bool {
	_, ok := pk.hTable(math.MaxInt32).(*fixedBase)
	return ok
}

func (pk *PublicKey) checkPlain(m *big.Int) error {
	if m == nil || m.Sign() < 0 || m.Cmp(pk.ns()) >= 0 {
		return fmt.Errorf("%w: plaintext must be in [0, n^s)", ErrOverflow)
	}
	return nil
}

// Encrypt returns an encryption of m ∈ [0, n^s): (1+n)^m · H^r mod n^(s+1).
// Use EncodeSigned for negative values.
func (pk *PublicKey) Encrypt(random io.Reader, m *big.Int) (*Ciphertext, error) {
	if err := pk.checkShape(); err != nil {
		return nil, err
	}
	if err := pk.checkPlain(m); err != nil {
		return nil, err
	}
	if random == nil {
		random = rand.Reader
	}
	r, err := pk.randomizer(random)
	if err != nil {
		return nil, err
	}
	return &Ciphertext{C: mulMod(r, pk.gPow(m), pk.ns1())}, nil
}

// EncryptMany encrypts every m, in parallel across GOMAXPROCS goroutines.
// The randomness is read from random sequentially before the parallel part,
// so random need not be safe for concurrent use.
func (pk *PublicKey) EncryptMany(random io.Reader, ms []*big.Int) ([]*Ciphertext, error) {
	if err := pk.checkShape(); err != nil {
		return nil, err
	}
	if random == nil {
		random = rand.Reader
	}
	for _, m := range ms {
		if err := pk.checkPlain(m); err != nil {
			return nil, err
		}
	}
	rs := make([]*big.Int, len(ms))
	for i := range rs {
		var err error
		if pk.H == nil {
			rs[i], err = randomUnit(random, pk.N)
		} else {
			rs[i], err = pk.randExponent(random)
		}
		if err != nil {
			return nil, err
		}
	}
	var table expTable
	if pk.H != nil {
		// Counting the whole batch at once builds the wide table before
		// the workers when the batch alone pays for it.
		table = pk.hTable(len(ms))
	}
	out := make([]*Ciphertext, len(ms))
	parallel(len(ms), func(i int) {
		var r *big.Int
		if pk.H == nil {
			r = rs[i].Exp(rs[i], pk.ns(), pk.ns1())
		} else {
			r = pk.hPowWith(table, rs[i])
		}
		out[i] = &Ciphertext{C: mulMod(r, pk.gPow(ms[i]), pk.ns1())}
	})
	return out, nil
}

// Rerandomize returns a fresh-looking encryption of the same plaintext.
func (pk *PublicKey) Rerandomize(random io.Reader, c *Ciphertext) (*Ciphertext, error) {
	if err := pk.checkShape(); err != nil {
		return nil, err
	}
	if c == nil || c.C == nil {
		return nil, ErrInvalidCiphertext
	}
	if random == nil {
		random = rand.Reader
	}
	r, err := pk.randomizer(random)
	if err != nil {
		return nil, err
	}
	return &Ciphertext{C: mulMod(r, c.C, pk.ns1())}, nil
}
