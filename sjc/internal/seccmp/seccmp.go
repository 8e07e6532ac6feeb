// Package seccmp is a two-party secure comparison of two private integers
// whose result neither party learns: the comparison of Damgård, Geisler and
// Krøigaard ("Efficient and secure comparison for on-line auctions",
// ACISP 2007, §3), over exponential ElGamal on ristretto255 instead of
// their DGK cryptosystem, with the result XOR-shared as in Veugen
// ("Improving the DGK comparison protocol", WIFS 2012, §2).
//
// Two parties hold x and y, n-bit unsigned integers (n ≤ MaxBits, public). The key holder A
// draws a fresh key and sends E(x_i) for every bit x_i of x (EncryptBits).
// The evaluator B, who knows y, draws a coin δ; with δ = 0 it tests x < y,
// with δ = 1 it tests y < x, by computing for every bit position i
//
//	c_i = x_i − y_i + 1 + 3·Σ_{j>i} (x_j ⊕ y_j)    (δ = 0)
//	c_i = y_i − x_i + 1 + 3·Σ_{j>i} (x_j ⊕ y_j)    (δ = 1)
//
// under encryption (x_j ⊕ y_j is x_j when y_j = 0 and 1 − x_j when y_j = 1,
// linear in E(x_j)). c_i = 0 exactly when the bits above i are equal and
// bit i decides the test, so some c_i is 0 iff the tested relation holds;
// every c_i lies in [0, 3n+2], far below the group order ℓ ≈ 2^252, so no
// c_i wraps to 0. B multiplies each E(c_i) by a fresh nonzero scalar r_i,
// re-randomises it and returns them in a uniformly random order
// (Evaluate). A decrypts and learns only whether one of them is the
// identity (AnyZero): β = [tested relation], where a nonzero c_i becomes a
// uniform element ≠ 0 and the order hides its position. Then
//
//	[x < y] = β ⊕ δ   whenever x ≠ y,
//
// which A and B hand to a third party (the coordinator): it learns the
// bit, A sees β alone (uniform, since δ is), B sees δ alone. With x = y
// both tests fail; callers give x and y different parities so that it
// cannot happen.
//
// Model: semi-honest A and B that do not collude with the third party
// (after Damgård et al.; Veugen §2); ElGamal's semantic security under
// DDH in ristretto255 hides x from B; the r_i and the re-randomisation
// hide from A everything but β. Not checked: that A's ciphertexts encrypt
// bits (a malicious A could learn more about y), or that B evaluated
// honestly. Nothing here is constant time.
package seccmp

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cloudflare/circl/group"
)

// grp is ristretto255 (RFC 9496), prime order ℓ ≈ 2^252.
var grp = group.Ristretto255

// MaxBits is the largest bit length n of the compared integers.
const MaxBits = 64

// ElementLen is the length of an encoded ristretto255 element; a
// ciphertext is two.
const ElementLen = 32

// ErrMalformed: bytes that do not decode to what a party expects (wrong
// length, not a group element).
var ErrMalformed = errors.New("seccmp: malformed encoding")

// PrivateKey is A's ElGamal key: x uniform nonzero, h = x·G. Drawn fresh
// for every step; it never leaves A.
type PrivateKey struct {
	x group.Scalar
	h group.Element
}

// PublicKey is h = x·G.
type PublicKey struct{ h group.Element }

// Ciphertext is exponential ElGamal: (C1, C2) = (k·G, m·G + k·h).
type Ciphertext struct{ C1, C2 group.Element }

// GenerateKey draws a key pair from crypto/rand.
func GenerateKey() *PrivateKey {
	x := grp.RandomNonZeroScalar(rand.Reader)
	return &PrivateKey{x: x, h: grp.NewElement().MulGen(x)}
}

// Public returns the public half.
func (k *PrivateKey) Public() PublicKey { return PublicKey{h: k.h} }

// bit is bit i (0 the least significant) of v.
func bit(v uint64, i int) uint64 { return (v >> uint(i)) & 1 }

// EncryptBits is A's first message: E(x_i) for i = 0 (least significant)
// to n−1 (x must be below 2^n; n ≤ MaxBits).
func (k *PrivateKey) EncryptBits(x uint64, n int) []Ciphertext {
	out := make([]Ciphertext, min(max(n, 0), MaxBits))
	for i := range out {
		out[i] = encrypt(k.h, bit(x, i))
	}
	return out
}

// encrypt is E(m) = (r·G, m·G + r·h) with r uniform.
func encrypt(h group.Element, m uint64) Ciphertext {
	r := grp.RandomScalar(rand.Reader)
	c2 := grp.NewElement().Mul(h, r)
	switch m {
	case 0:
	case 1: // a bit: no scalar multiplication for m·G
		c2.Add(c2, grp.Generator())
	default:
		c2.Add(c2, grp.NewElement().MulGen(grp.NewScalar().SetUint64(m)))
	}
	return Ciphertext{C1: grp.NewElement().MulGen(r), C2: c2}
}

// add is E(a)+E(b) = E(a+b).
func add(a, b Ciphertext) Ciphertext {
	return Ciphertext{C1: grp.NewElement().Add(a.C1, b.C1), C2: grp.NewElement().Add(a.C2, b.C2)}
}

// neg is −E(a) = E(−a).
func neg(a Ciphertext) Ciphertext {
	return Ciphertext{C1: grp.NewElement().Neg(a.C1), C2: grp.NewElement().Neg(a.C2)}
}

// addPlain is E(a) + m, m a small signed integer.
func addPlain(a Ciphertext, m int64) Ciphertext {
	s := grp.NewScalar().SetUint64(uint64(max(m, -m)))
	if m < 0 {
		s.Neg(s)
	}
	return Ciphertext{C1: a.C1.Copy(), C2: grp.NewElement().Add(a.C2, grp.NewElement().MulGen(s))}
}

// Evaluate is B's step: from A's public key and encrypted bits of x, its
// own y (below 2^n, n = len(xs)) and its coin δ (true: test y < x;
// false: test x < y), the n
// blinded, re-randomised E(r_i·c_i) in a uniformly random order.
func Evaluate(pub PublicKey, xs []Ciphertext, y uint64, delta bool) ([]Ciphertext, error) {
	L := len(xs)
	if L == 0 || L > MaxBits {
		return nil, fmt.Errorf("%w: %d encrypted bits, want 1 to %d", ErrMalformed, L, MaxBits)
	}
	zero := Ciphertext{C1: grp.Identity(), C2: grp.Identity()}
	sum := zero // Σ_{j>i} (x_j ⊕ y_j), from the top bit down
	cs := make([]Ciphertext, L)
	for i := L - 1; i >= 0; i-- {
		yi := int64(bit(y, i))
		// x_i − y_i + 1, or y_i − x_i + 1
		c := addPlain(xs[i], 1-yi)
		if delta {
			c = addPlain(neg(xs[i]), yi+1)
		}
		three := add(add(sum, sum), sum)
		cs[i] = add(c, three)
		w := xs[i] // x_i ⊕ y_i
		if yi == 1 {
			w = addPlain(neg(xs[i]), 1)
		}
		sum = add(sum, w)
	}
	perm, err := permutation(L)
	if err != nil {
		return nil, err
	}
	out := make([]Ciphertext, L)
	for i, c := range cs {
		out[perm[i]] = blind(pub.h, c)
	}
	return out, nil
}

// blind is r·E(c) + E(0; s) with r uniform nonzero and s uniform: a
// nonzero c becomes uniform over the nonzero plaintexts, and the fresh s
// unlinks the randomness from A's (without it A, who knows its own
// encryption randomness, could recover r·G and then the small c).
func blind(h group.Element, c Ciphertext) Ciphertext {
	r := grp.RandomNonZeroScalar(rand.Reader)
	s := grp.RandomScalar(rand.Reader)
	c1 := grp.NewElement().Mul(c.C1, r)
	c1.Add(c1, grp.NewElement().MulGen(s))
	c2 := grp.NewElement().Mul(c.C2, r)
	c2.Add(c2, grp.NewElement().Mul(h, s))
	return Ciphertext{C1: c1, C2: c2}
}

// permutation is a uniformly random permutation of [0, n) (Fisher–Yates
// over crypto/rand).
func permutation(n int) ([]int, error) {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	var b [8]byte
	for i := n - 1; i > 0; i-- {
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("seccmp: randomness: %w", err)
		}
		// 64 random bits reduced mod i+1 ≤ 64: bias below 2^-57.
		j := int(binary.LittleEndian.Uint64(b[:]) % uint64(i+1))
		p[i], p[j] = p[j], p[i]
	}
	return p, nil
}

// AnyZero is A's last step: whether one of B's ciphertexts decrypts to 0
// (β, the tested relation).
func (k *PrivateKey) AnyZero(cs []Ciphertext) (bool, error) {
	if len(cs) == 0 || len(cs) > MaxBits {
		return false, fmt.Errorf("%w: %d blinded values, want 1 to %d", ErrMalformed, len(cs), MaxBits)
	}
	found := false
	for _, c := range cs {
		m := grp.NewElement().Mul(c.C1, k.x)
		m.Neg(m).Add(m, c.C2)
		if m.IsIdentity() {
			found = true // no early exit: the time does not tell which
		}
	}
	return found, nil
}

// Less is the third party's combination: [x < y] from A's β and B's δ.
func Less(beta, delta bool) bool { return beta != delta }

// AppendPublic appends the key's encoding (ElementLen bytes).
func (p PublicKey) AppendPublic(b []byte) ([]byte, error) { return appendElement(b, p.h) }

// ParsePublic decodes a public key; ErrMalformed if it is not a group
// element or is the identity.
func ParsePublic(b []byte) (PublicKey, error) {
	e, err := parseElement(b)
	if err != nil {
		return PublicKey{}, err
	}
	if e.IsIdentity() {
		return PublicKey{}, fmt.Errorf("%w: the identity as a public key", ErrMalformed)
	}
	return PublicKey{h: e}, nil
}

// AppendCiphertexts appends cs, 2·ElementLen bytes each.
func AppendCiphertexts(b []byte, cs []Ciphertext) ([]byte, error) {
	var err error
	for _, c := range cs {
		if b, err = appendElement(b, c.C1); err != nil {
			return nil, err
		}
		if b, err = appendElement(b, c.C2); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// ParseCiphertexts decodes n ciphertexts; ErrMalformed unless b holds
// exactly n of them.
func ParseCiphertexts(b []byte, n int) ([]Ciphertext, error) {
	if n < 0 || len(b) != 2*ElementLen*n {
		return nil, fmt.Errorf("%w: %d bytes for %d ciphertexts", ErrMalformed, len(b), n)
	}
	out := make([]Ciphertext, n)
	for i := range out {
		c1, err := parseElement(b[2*ElementLen*i : 2*ElementLen*i+ElementLen])
		if err != nil {
			return nil, err
		}
		c2, err := parseElement(b[2*ElementLen*i+ElementLen : 2*ElementLen*(i+1)])
		if err != nil {
			return nil, err
		}
		out[i] = Ciphertext{C1: c1, C2: c2}
	}
	return out, nil
}

func appendElement(b []byte, e group.Element) ([]byte, error) {
	enc, err := e.MarshalBinaryCompress()
	if err != nil {
		return nil, fmt.Errorf("seccmp: encode an element: %w", err)
	}
	return append(b, enc...), nil
}

func parseElement(b []byte) (group.Element, error) {
	if len(b) != ElementLen {
		return nil, fmt.Errorf("%w: an element of %d bytes", ErrMalformed, len(b))
	}
	e := grp.NewElement()
	if err := e.UnmarshalBinary(b); err != nil {
		return nil, fmt.Errorf("%w: not a ristretto255 element", ErrMalformed)
	}
	return e, nil
}
