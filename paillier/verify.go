package paillier

import (
	"fmt"
	"math/big"

	"github.com/cohortdm/cohort/paillier/internal/gmpexp"
)

// shareError wraps ErrInvalidShare and names the party.
func shareError(index int, why string) error {
	return fmt.Errorf("%w from party %d: %s", ErrInvalidShare, index, why)
}

// VerifyShare checks a decryption share for cs under ctx. An error about
// the share wraps ErrInvalidShare and names the party index; a malformed
// key gives ErrInvalidKey and a ciphertext outside Z*_{n^(s+1)}
// ErrInvalidCiphertext.
func (pk *ThresholdPublicKey) VerifyShare(cs []*Ciphertext, sh *DecryptionShare, ctx ProofContext) error {
	if err := pk.checkShape(); err != nil {
		return err
	}
	if sh == nil {
		return fmt.Errorf("%w: nil share", ErrInvalidShare)
	}
	i := sh.Index
	if i < 1 || i > pk.Parties {
		return shareError(i, "party index out of range")
	}
	if len(cs) == 0 || len(sh.Values) != len(cs) {
		return shareError(i, "wrong number of values")
	}
	ns1 := pk.ns1()
	for j := range cs {
		if cs[j] == nil || !inUnits(cs[j].C, ns1) {
			return fmt.Errorf("%w (checking party %d's share)", ErrInvalidCiphertext, i)
		}
		if !inUnits(sh.Values[j], ns1) {
			return shareError(i, fmt.Sprintf("value %d not in Z*_{n^(s+1)}", j))
		}
	}
	pr := sh.Proof
	if pr == nil || pr.E == nil || pr.Z == nil || pr.E.Sign() < 0 || pr.Z.Sign() < 0 ||
		pr.E.BitLen() > challengeBits || pr.Z.BitLen() > pk.rhoBits()+1 {
		return shareError(i, "malformed proof")
	}
	digest := pk.statementDigest(i, ctx, cs, sh.Values)
	u, ut := pk.combineBases(cs, sh.Values, weights(digest, len(cs)))
	vi := pk.VerificationKeys[i-1]
	var a, b *big.Int
	parallel(2, func(k int) {
		if k == 0 {
			// a = u^z · ũ^-e
			a = gmpexp.ExpPublic(u, pr.Z, ns1)
			t := new(big.Int).Exp(ut, pr.E, ns1)
			t.ModInverse(t, ns1)
			a.Mul(a, t)
			a.Mod(a, ns1)
		} else {
			// b = v^z · v_i^-e
			b = pk.vPow(pr.Z)
			t := new(big.Int).Exp(vi, pr.E, ns1)
			t.ModInverse(t, ns1)
			b.Mul(b, t)
			b.Mod(b, ns1)
		}
	})
	if pk.challenge(i, ctx, digest, u, ut, a, b).Cmp(pr.E) != 0 {
		return shareError(i, "proof does not verify")
	}
	return nil
}
