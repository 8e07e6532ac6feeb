package lattice

// Decrypting masked bin sums towards one receiver (boost's lattice path).
// A summing party's BinSummer.Sum ciphertexts are a target of their own:
// not an aggregate of several contributions (Expect's floor of two inputs
// does not apply: the mask, not a sum over parties, is what keeps the
// decryption to the bins' sums), but one party's product. The summing
// party tells each decryptor the digest of what it made (BinSumsDigest);
// the receiver, who asks for the decryption, sends the ciphertexts; a
// decryptor makes a share only for ciphertexts with that digest
// (Decryptor.BinTarget), so that the receiver cannot have anything else
// decrypted under the bin sums' name (its own gradient ciphertexts, or an
// unmasked product). The shares go to the receiver alone, who folds them
// and decrypts (BinOpening) as Opening does an aggregate's.

import (
	"fmt"
	"slices"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
)

// shape names a bin sum's layout in digests.
func (l *BinLayout) shape() string { return fmt.Sprintf("bins/%d/%d", l.bins, l.nodes) }

// halves returns the c0 and c1 of cts, checking they are ciphertexts of
// degree 1 at the top level in the NTT domain (what Sum returns).
func binHalves(pk *PublicKey, cts []*rlwe.Ciphertext) (c0, c1 []ring.Poly, err error) {
	if len(cts) == 0 {
		return nil, nil, fmt.Errorf("%w: no bin sums", ErrMismatch)
	}
	params := pk.Params.bgv
	for _, ct := range cts {
		if ct == nil || ct.Degree() != 1 || !ct.IsNTT || ct.Level() != params.MaxLevel() {
			return nil, nil, fmt.Errorf("%w: bin sums not as BinSummer.Sum makes them", ErrMismatch)
		}
		c0, c1 = append(c0, ct.Value[0]), append(c1, ct.Value[1])
	}
	ps := pk.Params.polyShape()
	if err := ps.checkPolys(c0); err != nil {
		return nil, nil, err
	}
	if err := ps.checkPolys(c1); err != nil {
		return nil, nil, err
	}
	return c0, c1, nil
}

// BinSumsDigest is the digest of party from's (a Shamir point) bin sums
// cts of layout l in ctx: what the party tells each decryptor.
func BinSumsDigest(pk *PublicKey, ctx Context, from int, l *BinLayout, cts []*rlwe.Ciphertext) (Digest, error) {
	c0, c1, err := binHalves(pk, cts)
	if err != nil {
		return Digest{}, err
	}
	return contributionDigest(ctx, from, l.shape(), c0, c1), nil
}

// NewBinTarget is the target of party from's bin sums cts in ctx, the
// receiver's (who needs no secret to name it).
func NewBinTarget(pk *PublicKey, ctx Context, from int, l *BinLayout, cts []*rlwe.Ciphertext) (*Target, error) {
	if err := ctx.check(); err != nil {
		return nil, err
	}
	if ctx.Key != pk.id || from < 1 || from > len(pk.Members) {
		return nil, fmt.Errorf("%w: bin sums of another key or of no member", ErrMismatch)
	}
	c0, c1, err := binHalves(pk, cts)
	if err != nil {
		return nil, err
	}
	c1Hash := polysHash(c1) // once, for both digests
	in := []Input{{Party: from, Digest: contributionDigestFromHashes(ctx, from, l.shape(), polysHash(c0), c1Hash)}}
	return &Target{Context: ctx, Shape: l.shape(), Inputs: in, c1: c1, c1Hash: c1Hash,
		Digest: targetDigestFromHash(ctx, l.shape(), in, c1Hash)}, nil
}

// BinTarget checks bin sums a receiver asks this member to decrypt
// against the digest party from sent it (want) and returns their target,
// for GenShare.
func (d *Decryptor) BinTarget(ctx Context, from int, l *BinLayout, cts []*rlwe.Ciphertext, want Digest) (*Target, error) {
	t, err := NewBinTarget(d.keys.PublicKey, ctx, from, l, cts)
	if err != nil {
		return nil, err
	}
	if t.Inputs[0].Digest != want {
		return nil, fmt.Errorf("%w: the bin sums are not the ones their maker named", ErrPolicy)
	}
	return t, nil
}

// BinOpening is the receiver's side of decrypting bin sums: it folds the
// decryption shares (Add) and decrypts with every quorum of the plan
// (Open).
type BinOpening struct {
	shareFold
	l *BinLayout
}

// NewBinOpening starts opening the bin sums cts of target t (from
// NewBinTarget over the same cts) under plan.
func NewBinOpening(pk *PublicKey, l *BinLayout, plan *Plan, t *Target, cts []*rlwe.Ciphertext) (*BinOpening, error) {
	c0, c1, err := binHalves(pk, cts)
	if err != nil {
		return nil, err
	}
	// The target's c1 compared as it is (cheaper than hashing it again),
	// the rest through its digest.
	same := slices.EqualFunc(t.c1, c1, func(a, b ring.Poly) bool { return a.Equal(&b) })
	if !same || targetDigestFromHash(t.Context, l.shape(), t.Inputs, t.c1Hash) != t.Digest {
		return nil, fmt.Errorf("%w: bin sums of another target", ErrMismatch)
	}
	f, err := newShareFold(pk, plan, t.Context, t.Digest, c0)
	if err != nil {
		return nil, err
	}
	return &BinOpening{shareFold: f, l: l}, nil
}

// Nodes is the number of nodes of the layout the opening reads.
func (o *BinOpening) Nodes() int { return o.l.nodes }

// Open decrypts and returns, per ciphertext, the bins' gradient and
// hessian sums (Read's), and the judge's verdict.
func (o *BinOpening) Open() (g, h [][]int64, v Verdict, err error) {
	plain, v, err := o.open()
	if err != nil {
		return nil, nil, v, err
	}
	n := o.pk.Params.Slots()
	for k := range o.c0 {
		gk, hk, err := o.l.Read(plain[k*n : (k+1)*n])
		if err != nil {
			return nil, nil, v, err
		}
		g, h = append(g, gk), append(h, hk)
	}
	return g, h, v, nil
}
