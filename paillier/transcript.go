package paillier

import (
	"crypto/sha256"
	"crypto/sha3"
	"encoding/binary"
	"math/big"
)

// transcript is a canonical, length-prefixed encoding fed to SHA-256.
type transcript struct{ buf []byte }

func newTranscript(tag string) *transcript {
	t := &transcript{}
	t.bytes([]byte(tag))
	return t
}

func (t *transcript) bytes(b []byte) {
	t.buf = binary.BigEndian.AppendUint64(t.buf, uint64(len(b)))
	t.buf = append(t.buf, b...)
}

func (t *transcript) int(v int64) { t.buf = binary.BigEndian.AppendUint64(t.buf, uint64(v)) }

func (t *transcript) big(x *big.Int) {
	if x == nil {
		t.bytes(nil)
		return
	}
	t.bytes(x.Bytes())
}

func (t *transcript) sum() []byte {
	h := sha256.Sum256(t.buf)
	return h[:]
}

// proofTranscript starts the transcript shared by the weights and the
// challenge: domain tag, key id, context and party index.
func (pk *ThresholdPublicKey) proofTranscript(tag string, index int, ctx ProofContext) *transcript {
	t := newTranscript(tag)
	t.bytes(pk.KeyID[:])
	t.bytes([]byte(ctx.Job))
	t.bytes([]byte(ctx.Phase))
	t.int(int64(ctx.Round))
	t.int(int64(ctx.Attempt))
	t.int(int64(index))
	return t
}

// statementDigest hashes everything a batch proof is about: the context,
// the party index, every ciphertext and every share value. The weights are
// derived from it and the challenge includes it.
func (pk *ThresholdPublicKey) statementDigest(index int, ctx ProofContext, cs []*Ciphertext, vals []*big.Int) []byte {
	t := pk.proofTranscript("cohort/paillier/share-batch/v1", index, ctx)
	t.int(int64(len(cs)))
	for j := range cs {
		t.big(cs[j].C)
		t.big(vals[j])
	}
	return t.sum()
}

// weights derives the random-linear-combination weights w_j (128 bits,
// top bit set so never zero) from the statement digest with SHAKE-256. A
// single ciphertext gets w = 1.
func weights(digest []byte, count int) []*big.Int {
	w := make([]*big.Int, count)
	if count == 1 {
		w[0] = big.NewInt(1)
		return w
	}
	xof := sha3.NewSHAKE256()
	xof.Write([]byte("cohort/paillier/share-batch-weights/v1"))
	xof.Write(digest)
	buf := make([]byte, weightBits/8)
	for j := range w {
		xof.Read(buf)
		w[j] = new(big.Int).SetBytes(buf)
		w[j].SetBit(w[j], weightBits, 1)
	}
	return w
}

// combineBases returns u = ∏ c_j^(4w_j) and ũ = ∏ vals_j^(2w_j), as two
// multi-exponentiations (run in parallel) followed by the squarings.
func (pk *ThresholdPublicKey) combineBases(cs []*Ciphertext, vals []*big.Int, w []*big.Int) (u, ut *big.Int) {
	ns1 := pk.ns1()
	cb := make([]*big.Int, len(cs))
	for j := range cs {
		cb[j] = cs[j].C
	}
	parallel(2, func(k int) {
		if k == 0 {
			u = multiExp(cb, w, ns1)
			u.Exp(u, big.NewInt(4), ns1)
		} else {
			ut = multiExp(vals, w, ns1)
			ut.Exp(ut, big.NewInt(2), ns1)
		}
	})
	return u, ut
}

func (pk *ThresholdPublicKey) challenge(index int, ctx ProofContext, digest []byte, u, ut, a, b *big.Int) *big.Int {
	t := pk.proofTranscript("cohort/paillier/share-proof/v1", index, ctx)
	t.bytes(digest)
	t.big(u)
	t.big(ut)
	t.big(pk.V)
	t.big(pk.VerificationKeys[index-1])
	t.big(a)
	t.big(b)
	return new(big.Int).SetBytes(t.sum()) // 256 bits
}
