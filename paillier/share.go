package paillier

import (
	"crypto/rand"
	"fmt"
	"io"
	"math/big"

	"github.com/cohortdm/cohort/paillier/internal/gmpexp"
)

// DecryptShare computes this party's decryption shares of cs and one
// batched proof of their correctness, bound to ctx, the key id and the
// party index. The exponentiations run on all cores.
func (ks *KeyShare) DecryptShare(random io.Reader, cs []*Ciphertext, ctx ProofContext) (*DecryptionShare, error) {
	return ks.decryptShare(random, cs, ctx, 0)
}

// decryptShare takes the blinder length as a parameter so that tests can
// show what a short blinder would leak; 0 selects the secure length.
func (ks *KeyShare) decryptShare(random io.Reader, cs []*Ciphertext, ctx ProofContext, rhoBits int) (*DecryptionShare, error) {
	if random == nil {
		random = rand.Reader
	}
	if err := ks.check(); err != nil {
		return nil, err
	}
	pk := ks.Public
	if len(cs) == 0 {
		return nil, fmt.Errorf("%w: no ciphertexts", ErrInvalidCiphertext)
	}
	if err := pk.validateAll(cs); err != nil {
		return nil, err
	}
	if rhoBits == 0 {
		rhoBits = pk.rhoBits()
	}
	rho, err := randomBits(random, rhoBits)
	if err != nil {
		return nil, err
	}
	vals := ks.shareValues(cs)
	proof := ks.prove(rho, cs, vals, ctx)
	return &DecryptionShare{Index: ks.Index, Values: vals, Proof: proof, elemSize: pk.CiphertextSize()}, nil
}

// ShareValues returns the bare decryption shares c_j^(2Δs_i) of cs,
// without a proof, on all cores. Protocols should use DecryptShare; this is
// DecryptShare's first half, exposed so that callers (and benchmarks) can
// separate computing shares from proving them (see ProveShare).
func (ks *KeyShare) ShareValues(cs []*Ciphertext) ([]*big.Int, error) {
	if err := ks.check(); err != nil {
		return nil, err
	}
	if err := ks.Public.validateAll(cs); err != nil {
		return nil, err
	}
	return ks.shareValues(cs), nil
}

// ProveShare returns the batched proof for share values computed by
// ShareValues; DecryptShare = ShareValues + ProveShare. Every ciphertext and
// value must be in Z*_{n^(s+1)}, with one value per ciphertext.
func (ks *KeyShare) ProveShare(random io.Reader, cs []*Ciphertext, values []*big.Int, ctx ProofContext) (*Proof, error) {
	if random == nil {
		random = rand.Reader
	}
	if err := ks.check(); err != nil {
		return nil, err
	}
	pk := ks.Public
	if len(cs) == 0 || len(values) != len(cs) {
		return nil, fmt.Errorf("%w: need one value per ciphertext, have %d ciphertexts and %d values", ErrInvalidShare, len(cs), len(values))
	}
	if err := pk.validateAll(cs); err != nil {
		return nil, err
	}
	for j, v := range values {
		if !inUnits(v, pk.NS1) {
			return nil, fmt.Errorf("%w: value %d not in Z*_{n^(s+1)}", ErrInvalidShare, j)
		}
	}
	rho, err := randomBits(random, pk.rhoBits())
	if err != nil {
		return nil, err
	}
	return ks.prove(rho, cs, values, ctx), nil
}

// check makes sure the key share can be used by the prover without a
// panic and within the proof's hiding bound: a well-formed public key, an
// index in 1..Parties and a secret 0 < x < n^(s+1)/4.
//
// The bound is the one the blinder length assumes. ρ has |n^(s+1)| + 256 +
// 128 bits, so z = ρ + e·x is within statistical distance 2^-128 of a value
// independent of x only while e·x < 2^(|ρ|−128), i.e. x < 2^|n^(s+1)|; the
// dealer's x = Δ·s_i mod n^s·n' is below n^s·n' < n^(s+1)/4 (n' = p'q' <
// n/4). A larger secret congruent to x modulo the group order gives the
// same share values and a proof that verifies, but z/e then estimates the
// secret to within ρ/e, which leaks it (the tcpaillier flaw in another
// guise; see TestProofHidesShare). UnmarshalKeyShare applies the same
// bound.
func (ks *KeyShare) check() error {
	if ks == nil || ks.Public == nil {
		return fmt.Errorf("%w: key share without public key", ErrInvalidKey)
	}
	pk := ks.Public
	if err := pk.checkShape(); err != nil {
		return err
	}
	if ks.Index < 1 || ks.Index > pk.Parties {
		return fmt.Errorf("%w: key share index %d outside 1..%d", ErrInvalidKey, ks.Index, pk.Parties)
	}
	if ks.Secret == nil || ks.Secret.Sign() <= 0 {
		return fmt.Errorf("%w: key share %d has no positive secret", ErrInvalidKey, ks.Index)
	}
	if ks.Secret.Cmp(new(big.Int).Rsh(pk.NS1, 2)) >= 0 {
		return fmt.Errorf("%w: key share %d's secret is not below n^(s+1)/4, the bound the proof's blinder hides", ErrInvalidKey, ks.Index)
	}
	return nil
}

// validateAll checks that every ciphertext is an element of Z*_{n^(s+1)}.
func (pk *PublicKey) validateAll(cs []*Ciphertext) error {
	for j, c := range cs {
		if err := pk.ValidateCiphertext(c); err != nil {
			return fmt.Errorf("%w (ciphertext %d)", err, j)
		}
	}
	return nil
}

// shareValues returns c_j^(2x) for every ciphertext, on all cores. The
// exponent is secret: gmpexp.Exp is constant-time with the gmp build tag.
func (ks *KeyShare) shareValues(cs []*Ciphertext) []*big.Int {
	ns1 := ks.Public.ns1()
	x2 := new(big.Int).Lsh(ks.Secret, 1)
	vals := make([]*big.Int, len(cs))
	parallel(len(cs), func(j int) {
		vals[j] = gmpexp.Exp(cs[j].C, x2, ns1)
	})
	return vals
}

func (ks *KeyShare) prove(rho *big.Int, cs []*Ciphertext, vals []*big.Int, ctx ProofContext) *Proof {
	pk := ks.Public
	digest := pk.statementDigest(ks.Index, ctx, cs, vals)
	u, ut := pk.combineBases(cs, vals, weights(digest, len(cs)))
	var a, b *big.Int
	// a = u^ρ and b = v^ρ (table) in parallel. ρ is secret: u^ρ goes
	// through gmpexp.Exp (constant-time with the gmp build tag); the v
	// table lookup is not constant-time with either backend.
	parallel(2, func(k int) {
		if k == 0 {
			a = gmpexp.Exp(u, rho, pk.ns1())
		} else {
			b = pk.vPow(rho)
		}
	})
	e := pk.challenge(ks.Index, ctx, digest, u, ut, a, b)
	z := new(big.Int).Mul(e, ks.Secret)
	z.Add(z, rho)
	return &Proof{E: e, Z: z}
}
