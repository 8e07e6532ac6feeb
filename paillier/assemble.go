package paillier

import (
	"fmt"
	"math/big"
)

// NewThresholdPublicKey assembles a threshold public key from parts that
// were generated without a dealer (package paillier/dealerless): the plain
// public key, the party count and threshold t, the base v and every
// party's verification key v_i = v^(x_i). It computes the key id and checks
// the key as the decoders do (Check). It cannot check what only the
// factorisation would show: that v generates a large subgroup of the
// squares and that the v_i are powers of v with the right exponents; the
// caller verifies the key by decrypting with it.
func NewThresholdPublicKey(pub *PublicKey, parties, threshold int, v *big.Int, vks []*big.Int) (*ThresholdPublicKey, error) {
	if pub == nil || v == nil || len(vks) != parties {
		return nil, fmt.Errorf("%w: incomplete threshold key parts", ErrInvalidKey)
	}
	tpk := &ThresholdPublicKey{
		PublicKey:        *pub,
		Parties:          parties,
		Threshold:        threshold,
		V:                new(big.Int).Set(v),
		VerificationKeys: make([]*big.Int, parties),
	}
	for i, vk := range vks {
		if vk == nil {
			return nil, fmt.Errorf("%w: verification key %d missing", ErrInvalidKey, i+1)
		}
		tpk.VerificationKeys[i] = new(big.Int).Set(vk)
	}
	tpk.KeyID = tpk.computeKeyID()
	if err := tpk.Check(); err != nil {
		return nil, err
	}
	return tpk, nil
}

// CheckModulusSize reports whether the key-size policy accepts a modulus of
// bits bits (2048, 3072 or 4096; smaller sizes in test binaries after
// AllowTestKeySizes), so that a key generator can refuse a size before it
// spends minutes on it.
func CheckModulusSize(bits int) error {
	if !acceptedBits(bits) || bits%2 != 0 {
		return sizePolicyError(bits)
	}
	return nil
}
