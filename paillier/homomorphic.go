package paillier

import (
	"math/big"
	"sync"
)

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
