package secureagg

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/big"

	"github.com/cohortdm/cohort/paillier"
)

// paillierScheme is the Paillier backend's arithmetic for one aggregation,
// in the manner of Lattigo's encoders and evaluators: typed values in,
// typed values out, no messages and no clock. The stages that carry its
// values between parties (paillierAgg, run by runTree) call it; the joint
// decryption's shares and their proofs are package paillier's, driven by
// Decryption.
type paillierScheme struct {
	pk *paillier.ThresholdPublicKey
	*encoding
	packing *paillier.Packing
	n       int // vector length
	count   int // ciphertexts per vector
	members int // the step's parties: the packing's room and the range checks
	// pool, when set, gives encrypt its randomisers (Config.Randomizers).
	pool *paillier.RandomizerPool
}

// newPaillierScheme lays out the arithmetic of an aggregation of vectors
// of n values over members parties under pk: a packing with room for
// members summands of enc's bits in each slot.
func newPaillierScheme(pk *paillier.ThresholdPublicKey, enc *encoding, n, members int) (*paillierScheme, error) {
	c := &paillierScheme{pk: pk, encoding: enc, n: n, members: members}
	var err error
	if c.packing, err = paillier.NewPacking(&pk.PublicKey, enc.bits(), members); err != nil {
		return nil, fmt.Errorf("secureagg: packing: %w", err)
	}
	c.count = c.packing.Plaintexts(n)
	return c, nil
}

// encrypt checks, noises, packs and encrypts one party's input, drawing
// the noise and the encryptions' randomness from random, or the
// encryptions' from c.pool when it is set. It stops between
// chunks of ciphertexts when ctx ends: a superseded attempt must not keep
// the cores busy for seconds (10,000 values are about 140 ciphertexts)
// while the next attempt and Raft need them.
func (c *paillierScheme) encrypt(ctx context.Context, random io.Reader, input []float64) ([]*paillier.Ciphertext, error) {
	var sampler *noiseSampler
	if c.noise != nil {
		var err error
		if sampler, err = newNoiseSampler(c.noise, random); err != nil {
			return nil, err
		}
	}
	enc := make([]*big.Int, len(input))
	for i, x := range input {
		v, err := c.fp.Encode(x)
		if err != nil {
			return nil, fmt.Errorf("%w: input[%d] is not a finite number within the fixed point's range", ErrRange, i)
		}
		if new(big.Int).Abs(v).Cmp(c.inBound) >= 0 {
			// The value itself stays here: the error reaches the coordinator.
			return nil, fmt.Errorf("%w: input[%d] exceeds 2^%d at 2^-%d precision", ErrRange, i, c.inBound.BitLen()-1, c.fp.FracBits)
		}
		if sampler != nil {
			if v, err = c.fp.Encode(x + sampler.sample()); err != nil {
				return nil, fmt.Errorf("%w: noisy input[%d] is outside the fixed point's range", ErrRange, i)
			}
			if new(big.Int).Abs(v).Cmp(c.bound) >= 0 {
				return nil, fmt.Errorf("%w: noisy input[%d] beyond its bound", ErrRange, i)
			}
		}
		enc[i] = v
	}
	plain, err := c.packing.Pack(enc)
	if err != nil {
		return nil, fmt.Errorf("secureagg: pack: %w", err)
	}
	if len(plain) != c.count {
		return nil, fmt.Errorf("secureagg: packing gave %d plaintexts, expected %d", len(plain), c.count)
	}
	cts := make([]*paillier.Ciphertext, 0, len(plain))
	for len(plain) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("secureagg: encrypt: %w", err)
		}
		chunk := plain[:min(encryptChunk, len(plain))]
		plain = plain[len(chunk):]
		var more []*paillier.Ciphertext
		var err error
		if c.pool != nil {
			more, err = c.pool.EncryptMany(chunk)
		} else {
			more, err = c.pk.EncryptMany(random, chunk)
		}
		if err != nil {
			return nil, fmt.Errorf("secureagg: encrypt: %w", err)
		}
		cts = append(cts, more...)
	}
	return cts, nil
}

// encryptChunk is how many plaintexts are encrypted between two checks of
// the context: about 25 ms of CPU at 2048 bits, enough to keep all cores busy.
const encryptChunk = 16

// add returns the homomorphic sum of two vectors of ciphertexts (a new
// vector: a and b are left as they are).
func (c *paillierScheme) add(a, b []*paillier.Ciphertext) []*paillier.Ciphertext {
	out := make([]*paillier.Ciphertext, len(a))
	for j := range a {
		out[j] = c.pk.Add(a[j], b[j])
	}
	return out
}

// marshal encodes a vector of ciphertexts as it travels.
func (c *paillierScheme) marshal(cts []*paillier.Ciphertext) ([]byte, error) {
	b, err := c.pk.MarshalCiphertexts(cts)
	if err != nil {
		return nil, fmt.Errorf("secureagg: marshal ciphertexts: %w", err)
	}
	return b, nil
}

// form forms the total from its components, once they are vetted: their
// homomorphic sum. A malformed component is ErrTampered, naming from, the
// party that sent them.
func (c *paillierScheme) form(comps [][]byte, from string) ([]*paillier.Ciphertext, error) {
	var total []*paillier.Ciphertext
	for _, b := range comps {
		cts, err := c.pk.UnmarshalCiphertexts(b)
		if err != nil || len(cts) != c.count {
			return nil, fmt.Errorf("%w: a component of the total from %s is malformed", ErrTampered, from)
		}
		if total == nil {
			total = cts
			continue
		}
		for i := range total {
			total[i] = c.pk.Add(total[i], cts[i])
		}
	}
	return total, nil
}

// decodeSum unpacks the decrypted plaintexts, checks every slot against
// what the members' in-range inputs can produce, and decodes the fixed
// point.
func (c *paillierScheme) decodeSum(plain []*big.Int) ([]float64, error) {
	sums, err := c.packing.Unpack(plain, c.n, c.members)
	if err != nil {
		return nil, fmt.Errorf("%w: unpack the sum: %w", ErrRange, err)
	}
	limit := new(big.Int).Mul(c.bound, big.NewInt(int64(c.members)))
	out := make([]float64, c.n)
	for i, v := range sums {
		if new(big.Int).Abs(v).Cmp(limit) >= 0 {
			return nil, fmt.Errorf("%w: decrypted sum[%d] exceeds %d parties × 2^%d", ErrRange, i, c.members, c.bound.BitLen()-1)
		}
		out[i] = c.fp.Decode(v)
		if math.IsInf(out[i], 0) || math.IsNaN(out[i]) {
			return nil, fmt.Errorf("%w: decrypted sum[%d] is not a finite float", ErrRange, i)
		}
	}
	return out, nil
}
