package seccmp

import (
	"fmt"

	"github.com/cloudflare/circl/group"
)

// # Joint key
//
// To reveal a function of several comparison bits and nothing else, the
// bits are carried under a key that no party holds alone: every party p
// draws a key share (GenerateKey: k_p, h_p = k_p·G), and the joint key is
// K = Σ h_p (Joint), whose secret Σ k_p nobody knows. A ciphertext under K
// is decrypted only when every party sends its partial decryption k_p·C1
// (Partial) of it; M = C2 − Σ k_p·C1 (IsZero). This is n-of-n
// distributed ElGamal (Pedersen, "A threshold cryptosystem without a
// trusted party", EUROCRYPT 1991, §3, with n = t): semi-honest parties,
// no proof that h_p is well formed or that a partial decryption is right
// (a rogue key or a wrong partial gives a wrong result, not a leak to an
// outsider, and is outside the semi-honest model).
//
// A comparison's bit goes under K by the evaluator's encryption of its
// coin, E_K(δ), which the encrypting party, knowing β, turns into
// E_K(β ⊕ δ) (XorPlain, then Rerandomize); sums of such bits and
// constants, blinded (Blind), are the only ciphertexts ever decrypted.

// Joint is the joint public key Σ h_p of the parties' key shares.
func Joint(shares []PublicKey) PublicKey {
	h := grp.Identity()
	for _, s := range shares {
		h = grp.NewElement().Add(h, s.h)
	}
	return PublicKey{h: h}
}

// Encrypt is E(m) under the key, m a small non-negative integer.
func (p PublicKey) Encrypt(m uint64) Ciphertext { return encrypt(p.h, m) }

// Add is E(a)+E(b) = E(a+b).
func Add(a, b Ciphertext) Ciphertext { return add(a, b) }

// AddPlain is E(a)+m, m a small signed integer.
func AddPlain(a Ciphertext, m int64) Ciphertext { return addPlain(a, m) }

// Neg is E(−a).
func Neg(a Ciphertext) Ciphertext { return neg(a) }

// XorPlain is E(a ⊕ b) for a bit a under encryption and a known bit b:
// E(a) when b is 0, E(1) − E(a) when b is 1. Its randomness is a's (up to
// sign): Rerandomize it before it leaves the party.
func XorPlain(a Ciphertext, b bool) Ciphertext {
	if !b {
		return Ciphertext{C1: a.C1.Copy(), C2: a.C2.Copy()}
	}
	return addPlain(neg(a), 1)
}

// Rerandomize is c + E(0) with fresh randomness.
func (p PublicKey) Rerandomize(c Ciphertext) Ciphertext { return add(c, encrypt(p.h, 0)) }

// Blind is r·c + E(0) for r uniform nonzero: E(0) stays E(0), any other
// plaintext becomes uniform over the nonzero ones.
func (p PublicKey) Blind(c Ciphertext) Ciphertext { return blind(p.h, c) }

// Partial is the key share's partial decryption k_p·C1 of c.
func (k *PrivateKey) Partial(c Ciphertext) group.Element { return grp.NewElement().Mul(c.C1, k.x) }

// IsZero reports whether C2 − Σ partials is the identity: whether the
// ciphertext with that C2 decrypts to 0 under the joint key of the shares
// that made the partials.
func IsZero(c2 group.Element, partials []group.Element) bool {
	m := c2.Copy()
	for _, d := range partials {
		m = grp.NewElement().Add(m, grp.NewElement().Neg(d))
	}
	return m.IsIdentity()
}

// AppendElements appends es, ElementLen bytes each.
func AppendElements(b []byte, es []group.Element) ([]byte, error) {
	var err error
	for _, e := range es {
		if b, err = appendElement(b, e); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// ParseElements decodes n elements; ErrMalformed unless b holds exactly n.
func ParseElements(b []byte, n int) ([]group.Element, error) {
	if n < 0 || len(b) != ElementLen*n {
		return nil, fmt.Errorf("%w: %d bytes for %d elements", ErrMalformed, len(b), n)
	}
	out := make([]group.Element, n)
	for i := range out {
		e, err := parseElement(b[ElementLen*i : ElementLen*(i+1)])
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// C1s and C2s split ciphertexts into their halves.
func C1s(cs []Ciphertext) []group.Element {
	out := make([]group.Element, len(cs))
	for i, c := range cs {
		out[i] = c.C1
	}
	return out
}

// C2s: see C1s.
func C2s(cs []Ciphertext) []group.Element {
	out := make([]group.Element, len(cs))
	for i, c := range cs {
		out[i] = c.C2
	}
	return out
}

// PartialOf is Partial for a bare C1 (a party that sees only the C1 of
// another's ciphertext).
func (k *PrivateKey) PartialOf(c1 group.Element) group.Element { return grp.NewElement().Mul(c1, k.x) }
