package paillier

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math/big"
	"runtime"
	"sync"
)

// Errors returned by this package. Callers test them with errors.Is.
var (
	// ErrInvalidShare is wrapped by every error that rejects a decryption
	// share; the wrapping error names the party index.
	ErrInvalidShare = errors.New("paillier: invalid decryption share")
	// ErrOverflow reports a value that does not fit: a plaintext outside
	// [0, n^s), a fixed-point or packed value outside its declared range,
	// or a packed sum that overflowed its slot.
	ErrOverflow = errors.New("paillier: value out of range")
	// ErrInvalidCiphertext reports a ciphertext that is not an element of
	// Z*_{n^(s+1)}.
	ErrInvalidCiphertext = errors.New("paillier: invalid ciphertext")
	// ErrInvalidKey reports a malformed or inconsistent key.
	ErrInvalidKey = errors.New("paillier: invalid key")
	// ErrDecode reports malformed serialised data.
	ErrDecode = errors.New("paillier: malformed encoding")
)

const (
	// DefaultBits is the default modulus size.
	DefaultBits = 2048
	// MinBits is the smallest production modulus. Key generation, dealing
	// and decoding accept exactly 2048, 3072 or 4096 bits; smaller moduli
	// (down to MinTestBits) only in test binaries after AllowTestKeySizes.
	MinBits = 2048
	// MaxBits is the largest modulus accepted.
	MaxBits = 4096
	// MaxS is the largest Damgård–Jurik degree s accepted.
	MaxS = 8
	// MaxCiphertextBits bounds |n^(s+1)|, so that decoding a hostile key
	// cannot demand arbitrarily expensive arithmetic (s ≤ 7 at 2048 bits,
	// s ≤ 4 at 3072 bits, s ≤ 3 at 4096 bits).
	MaxCiphertextBits = 16384
	// statBits is the statistical security parameter: randomisers and
	// proof blinders are this many bits longer than the value they hide.
	statBits = 128
)

// PublicKey is a Paillier / Damgård–Jurik public key: plaintexts live in
// Z_{n^s}, ciphertexts in Z*_{n^(s+1)}, and g = 1+n.
//
// Build it with GenerateKey, GenerateKeyDJ, DealThreshold, NewPublicKey or an
// Unmarshal function, which fill the derived fields. A literal
// PublicKey{N: n} also works (s = 1, no fixed base): encryption then uses
// the slow textbook r^n.
type PublicKey struct {
	// N is the RSA modulus n.
	N *big.Int
	// S is the Damgård–Jurik degree (1 = plain Paillier).
	S int
	// NS is n^s, the plaintext modulus.
	NS *big.Int
	// NS1 is n^(s+1), the ciphertext modulus.
	NS1 *big.Int
	// H is the fixed encryption base h^(n^s) mod n^(s+1) with h = -x² mod n
	// for a random x (Damgård–Jurik–Nielsen). Encryption computes
	// (1+n)^m · H^r. Nil means textbook encryption with r^(n^s).
	H *big.Int
	// ShortExponent selects the short-exponent DJN variant for Encrypt,
	// EncryptMany and Rerandomize: r has ⌈|n|/2⌉ bits instead of being
	// uniform in [0, n).
	// It is about twice as fast and rests on an extra assumption (see the
	// package documentation). It is a local encryption choice and is not
	// serialised.
	ShortExponent bool
}

// Precompute builds the fixed-base encryption table now (it is otherwise
// built on first use). Tables are shared by all copies of a key and cached
// process-wide within the budget of SetFixedBaseBudget; see encWindow for
// their sizes.
func (pk *PublicKey) Precompute() {
	if pk.checkShape() != nil || pk.H == nil {
		return
	}
	tableFor(pk.H, pk.ns1(), pk.randBits(), encMaxWindow)
}

// encMaxWindow is the widest window of the encryption table.
const encMaxWindow = 9

// encWindow is the encryption table's window: the widest of 1..9 bits whose
// table stays within maxTableBytes (80 MiB). Sizes measured with
// BenchmarkFixedBaseMemory: 2048-bit n, 9 bits, full r 57.0 MiB, short r
// 28.5 MiB; 3072-bit n, 8 bits, full r 72.0 MiB. Computed by tableBytes:
// 3072-bit n short r 9 bits, 64.0 MiB; 4096-bit n full r 7 bits, 72.7 MiB,
// short r 8 bits, 63.8 MiB. 0 would mean that no table fits, which
// MaxCiphertextBits rules out.
func (pk *PublicKey) encWindow() int {
	return windowFor(pk.randBits(), len(pk.ns1().Bits()), encMaxWindow)
}

// NewPublicKey returns the public key for modulus n and degree s. If h is
// nil, a fresh fixed encryption base H = (−x²)^(n^s) mod n^(s+1) is drawn
// from random; otherwise h is used as H itself (as serialised) and must pass
// the checks the decoders apply (see checkElement). n must satisfy the
// key-size policy and must not be even, prime, a perfect power or have a
// prime factor below 2^18 (see checkModulus).
func NewPublicKey(random io.Reader, n *big.Int, s int, h *big.Int) (*PublicKey, error) {
	pk, err := newPublicKeyNoBase(n, s)
	if err != nil {
		return nil, err
	}
	if h == nil {
		if random == nil {
			random = rand.Reader
		}
		x, err := randomUnit(random, n)
		if err != nil {
			return nil, err
		}
		x.Mul(x, x)
		x.Neg(x)
		x.Mod(x, n)
		pk.H = x.Exp(x, pk.NS, pk.NS1)
	} else {
		if err := checkElement(h, pk.N, pk.NS1, false, "fixed base H"); err != nil {
			return nil, err
		}
		pk.H = new(big.Int).Set(h)
	}
	return pk, nil
}

// newPublicKeyNoBase checks n and s and fills N, S, NS and NS1.
func newPublicKeyNoBase(n *big.Int, s int) (*PublicKey, error) {
	if err := checkModulus(n); err != nil {
		return nil, err
	}
	if s < 1 || s > MaxS {
		return nil, fmt.Errorf("%w: s must be in 1..%d", ErrInvalidKey, MaxS)
	}
	if n.BitLen()*(s+1) > MaxCiphertextBits {
		return nil, fmt.Errorf("%w: n^(s+1) would exceed %d bits", ErrInvalidKey, MaxCiphertextBits)
	}
	pk := &PublicKey{N: new(big.Int).Set(n), S: s}
	pk.NS = new(big.Int).Exp(n, big.NewInt(int64(s)), nil)
	pk.NS1 = new(big.Int).Mul(pk.NS, n)
	return pk, nil
}

// checkShape is a cheap check that pk can be used without a panic: a
// positive odd modulus of at most MaxBits bits, 0 ≤ S ≤ MaxS (0 means 1),
// |n^(s+1)| ≤ MaxCiphertextBits, and NS, NS1 either nil or equal to n^s
// and n^(s+1). It does not apply the key-size policy or the structural
// checks of NewPublicKey (literal keys are allowed).
func (pk *PublicKey) checkShape() error {
	if pk == nil || pk.N == nil || pk.N.Sign() <= 0 || pk.N.Bit(0) == 0 || pk.N.BitLen() > MaxBits {
		return fmt.Errorf("%w: missing or malformed modulus", ErrInvalidKey)
	}
	if pk.S < 0 || pk.S > MaxS || pk.N.BitLen()*(pk.s()+1) > MaxCiphertextBits {
		return fmt.Errorf("%w: bad degree s", ErrInvalidKey)
	}
	if pk.NS != nil || pk.NS1 != nil {
		ns := new(big.Int).Exp(pk.N, big.NewInt(int64(pk.s())), nil)
		if pk.NS == nil || pk.NS1 == nil || pk.NS.Cmp(ns) != 0 || pk.NS1.Cmp(ns.Mul(ns, pk.N)) != 0 {
			return fmt.Errorf("%w: n^s or n^(s+1) inconsistent with n", ErrInvalidKey)
		}
	}
	return nil
}

// usable is the cheapest guard, for the operations without an error
// result (Add, AddPlain, MulPlain, Neg): a key whose moduli cannot make
// them panic, and non-nil operands.
func (pk *PublicKey) usable(cs ...*Ciphertext) bool {
	if pk == nil || pk.N == nil || pk.N.Sign() <= 0 || (pk.NS1 != nil && pk.NS1.Sign() <= 0) ||
		(pk.NS != nil && pk.NS.Sign() <= 0) || pk.S < 0 || pk.S > MaxS {
		return false
	}
	for _, c := range cs {
		if c == nil || c.C == nil {
			return false
		}
	}
	return true
}

// invalidCiphertext is what the operations without an error result return
// for unusable input: 0, which fails ValidateCiphertext and every decoder
// and encoder check.
func invalidCiphertext() *Ciphertext { return &Ciphertext{C: new(big.Int)} }

// params fills missing derived values for literal keys.
func (pk *PublicKey) s() int {
	if pk.S == 0 {
		return 1
	}
	return pk.S
}

func (pk *PublicKey) ns() *big.Int {
	if pk.NS != nil {
		return pk.NS
	}
	return new(big.Int).Exp(pk.N, big.NewInt(int64(pk.s())), nil)
}

func (pk *PublicKey) ns1() *big.Int {
	if pk.NS1 != nil {
		return pk.NS1
	}
	return new(big.Int).Mul(pk.ns(), pk.N)
}

// PlaintextModulus returns n^s. Plaintexts are residues modulo n^s.
func (pk *PublicKey) PlaintextModulus() *big.Int { return new(big.Int).Set(pk.ns()) }

// CiphertextSize is the number of bytes of one serialised ciphertext
// element (the byte length of n^(s+1); ciphertexts are fixed-length).
func (pk *PublicKey) CiphertextSize() int { return (pk.ns1().BitLen() + 7) / 8 }

// Ciphertext is an element of Z*_{n^(s+1)}.
type Ciphertext struct{ C *big.Int }

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

func (pk *PublicKey) hPow(r *big.Int) *big.Int {
	ns1 := pk.ns1()
	if fb := tableFor(pk.H, ns1, pk.randBits(), encMaxWindow); fb != nil {
		return fb.exp(r)
	}
	return new(big.Int).Exp(pk.H, r, ns1) // no table within the budget
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
	if pk.H != nil && len(ms) > 1 {
		pk.hPow(big.NewInt(1)) // build the table once, before the workers
	}
	out := make([]*Ciphertext, len(ms))
	parallel(len(ms), func(i int) {
		var r *big.Int
		if pk.H == nil {
			r = rs[i].Exp(rs[i], pk.ns(), pk.ns1())
		} else {
			r = pk.hPow(rs[i])
		}
		out[i] = &Ciphertext{C: mulMod(r, pk.gPow(ms[i]), pk.ns1())}
	})
	return out, nil
}

// scratch holds reusable product and quotient buffers for mulMod.
var scratch = sync.Pool{New: func() any { return new(big.Int) }}

// mulMod returns a·b mod m in a fresh, exactly sized big.Int; the double
// length product and the quotient live in pooled buffers.
func mulMod(a, b, m *big.Int) *big.Int {
	p := scratch.Get().(*big.Int)
	q := scratch.Get().(*big.Int)
	p.Mul(a, b)
	r := new(big.Int)
	q.QuoRem(p, m, r)
	scratch.Put(q)
	scratch.Put(p)
	return r
}

// Add returns an encryption of the sum of the plaintexts of a and b.
// Inputs are not validated (use UnmarshalCiphertexts for untrusted data);
// a nil operand gives the invalid ciphertext 0 rather than a panic, as for
// AddPlain, MulPlain, Neg and Sub.
func (pk *PublicKey) Add(a, b *Ciphertext) *Ciphertext {
	if !pk.usable(a, b) {
		return invalidCiphertext()
	}
	return &Ciphertext{C: mulMod(a.C, b.C, pk.ns1())}
}

// AddPlain returns an encryption of Dec(c) + m mod n^s. m may be negative.
func (pk *PublicKey) AddPlain(c *Ciphertext, m *big.Int) *Ciphertext {
	if !pk.usable(c) || m == nil {
		return invalidCiphertext()
	}
	return &Ciphertext{C: mulMod(pk.gPow(m), c.C, pk.ns1())} // gPow reduces m mod n^s
}

// MulPlain returns an encryption of k·Dec(c) mod n^s. k may be negative.
func (pk *PublicKey) MulPlain(c *Ciphertext, k *big.Int) *Ciphertext {
	if !pk.usable(c) || k == nil {
		return invalidCiphertext()
	}
	kk := new(big.Int).Mod(k, pk.ns())
	return &Ciphertext{C: new(big.Int).Exp(c.C, kk, pk.ns1())}
}

// Neg returns an encryption of -Dec(c) mod n^s.
func (pk *PublicKey) Neg(c *Ciphertext) *Ciphertext {
	if !pk.usable(c) {
		return invalidCiphertext()
	}
	inv := new(big.Int).ModInverse(c.C, pk.ns1())
	if inv == nil { // not a unit: return a value that fails validation
		inv = new(big.Int)
	}
	return &Ciphertext{C: inv}
}

// Sub returns an encryption of Dec(a) - Dec(b) mod n^s.
func (pk *PublicKey) Sub(a, b *Ciphertext) *Ciphertext { return pk.Add(a, pk.Neg(b)) }

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

// ValidateCiphertext checks that c is an element of Z*_{n^(s+1)}.
func (pk *PublicKey) ValidateCiphertext(c *Ciphertext) error {
	if !pk.usable() {
		return ErrInvalidKey
	}
	if c == nil || !inUnits(c.C, pk.ns1()) {
		return ErrInvalidCiphertext
	}
	return nil
}

// EncodeSigned maps a signed integer v with |v| < n^s/2 to the plaintext
// v mod n^s.
func (pk *PublicKey) EncodeSigned(v *big.Int) (*big.Int, error) {
	if err := pk.checkShape(); err != nil {
		return nil, err
	}
	if v == nil {
		return nil, fmt.Errorf("%w: nil value", ErrOverflow)
	}
	half := new(big.Int).Rsh(pk.ns(), 1)
	if new(big.Int).Abs(v).Cmp(half) >= 0 {
		return nil, fmt.Errorf("%w: |v| must be below n^s/2", ErrOverflow)
	}
	return new(big.Int).Mod(v, pk.ns()), nil
}

// DecodeSigned maps a plaintext in [0, n^s) to the signed integer in
// (-n^s/2, n^s/2) congruent to it. A nil m or an unusable key gives nil.
func (pk *PublicKey) DecodeSigned(m *big.Int) *big.Int {
	if m == nil || !pk.usable() {
		return nil
	}
	ns := pk.ns()
	r := new(big.Int).Mod(m, ns)
	if r.Cmp(new(big.Int).Rsh(ns, 1)) > 0 {
		r.Sub(r, ns)
	}
	return r
}

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

var one = big.NewInt(1)

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

// parallel runs f(0..n-1) on GOMAXPROCS goroutines. A panic in a worker
// is re-raised in the calling goroutine after all workers stop, so that a
// caller can recover from it as from a panic in its own code (inputs are
// validated before they reach parallel, so such a panic is an internal
// error).
func parallel(n int, f func(i int)) {
	workers := runtime.GOMAXPROCS(0)
	if workers > n {
		workers = n
	}
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var (
		wg        sync.WaitGroup
		panicOnce sync.Once
		panicVal  any
		panicked  bool
	)
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					panicOnce.Do(func() { panicVal, panicked = r, true })
				}
			}()
			for i := range next {
				f(i)
			}
		}()
	}
	wg.Wait()
	if panicked {
		panic(panicVal)
	}
}
