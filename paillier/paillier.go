package paillier

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math/big"
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

// Precompute builds the key's small fixed-base encryption table now (it is
// otherwise built on first use; 25 ms at 2048 bits). The wide table (see
// encWindow) follows once the key has made enough encryptions to pay for
// it, or at once for an EncryptMany batch that large. Tables are shared by
// all copies of a key and cached process-wide within the budget of
// SetFixedBaseBudget.
func (pk *PublicKey) Precompute() {
	if pk.checkShape() != nil || pk.H == nil {
		return
	}
	pk.hTable(0)
}

// PrecomputeFor is Precompute for a caller that knows it will make about n
// encryptions (or randomisers) with the key: it counts them now, so that
// the wide table is built at once, before the caller's clock starts, when
// n alone pays for it (n ≥ 490 at 2048 bits), as EncryptMany does for its
// batch.
func (pk *PublicKey) PrecomputeFor(n int) {
	if pk.checkShape() != nil || pk.H == nil {
		return
	}
	pk.hTable(max(n, 0))
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

var one = big.NewInt(1)
