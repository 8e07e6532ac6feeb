package lattice

// Fresh encryptions on boost's lattice path (EncryptPairs' chunks and
// BinSummer's masks) in one NTT fewer than rlwe.Encryptor.Encrypt.
//
// Encrypt is Lattigo's public-key encryption without P (rlwe.Encryptor's
// encryptZeroPkNoP for a ciphertext in the NTT domain, then adding the
// plaintext): u ternary, e0 and e1 discrete Gaussian (the parameters' Xs
// and Xe), c0 = NTT(u)·pk0 + NTT(e0) + NTT(m), c1 = NTT(u)·pk1 +
// NTT(e1), where m is the plaintext's coefficients (each value times the
// plaintext's scale modulo T, times T⁻¹ modulo each prime: what
// bgv.Encoder.Encode writes before its NTT). The NTT is linear, so
// NTT(e0) + NTT(m) = NTT(e0 + m): freshEncrypter adds m to e0 in the
// coefficient domain and transforms once, where Encrypt transforms the
// plaintext apart (a whole NTT per prime for a mask, a sparse one for a
// chunk: about a sixth of an encryption's CPU, docs/boost.md). The
// ciphertext is the same function of (u, e0, e1, m) as Encrypt's, and e0
// and e1 are drawn from the same distribution as Lattigo's sampler draws
// with the same parameters, by its cumulative table on an AES-256-CTR
// keystream (gaussian.go; Lattigo's sampler on ChaCha8 before 30 Nov
// 2026), and u from the same distribution (below); only their random
// streams differ from Encrypt's, which reads a keyed BLAKE2b XOF
// (sampling.NewPRNG, keyed from crypto/rand): these are keyed from
// crypto/rand too, and cost a fraction of the XOF. Each encryption
// draws its own u, e0 and e1 from the stream, never reusing one, so each
// ciphertext is a fresh encryption as Encrypt's (the package doc, and
// TestFreshEncryption: the formula above, exact decryption, fresh noise
// within the bound the noise budget assumes).
//
// u is drawn here, not by Lattigo's ternary sampler: Xs is Ternary{P:
// 2/3}, each coefficient −1, 0 or 1 with probability 1/3, which Lattigo
// draws by Knuth–Yao from a 64-bit expansion of 1/3, one byte stream read
// at a time (an eighth of an encryption's CPU). ternary draws two bits a
// coefficient from its own ChaCha8 stream and rejects 3: exactly 1/3
// each (TestFreshTernary).

import (
	crand "crypto/rand"
	"fmt"
	mrand "math/rand/v2"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// freshEncrypter makes fresh encryptions under one public key at Q's top
// level, in the NTT domain. It holds buffers: one per goroutine.
type freshEncrypter struct {
	pk    *PublicKey
	rq    *ring.Ring
	xe    *errorSampler
	u, e  ring.Poly
	tern  *mrand.ChaCha8 // u's stream (ternary)
	lut   [][3]uint64    // by prime of Q: the residues of 0, 1 and −1
	tInv  []uint64       // by prime of Q: T⁻¹ modulo it
	scale uint64         // the plaintexts' scale modulo T (bgv.NewPlaintext's)
	bredT [2]uint64
	meta  *rlwe.MetaData
	ntt   sparseNTT // its transforms: rq.NTT's output by faster kernels (sparsentt.go)
}

// newFreshEncrypter returns a freshEncrypter under pk whose samplers read
// streams keyed from crypto/rand: the errors an AES-256-CTR keystream
// (errorSampler), u a ChaCha8 stream.
func newFreshEncrypter(pk *PublicKey) (*freshEncrypter, error) {
	var seed [32]byte
	if _, err := crand.Read(seed[:]); err != nil {
		return nil, fmt.Errorf("lattice: encryption seed: %w", err)
	}
	var tern [32]byte
	if _, err := crand.Read(tern[:]); err != nil {
		return nil, fmt.Errorf("lattice: encryption seed: %w", err)
	}
	return newFreshEncrypterFrom(pk, seed, mrand.NewChaCha8(tern))
}

// newFreshEncrypterFrom is newFreshEncrypter with the errors' keystream
// key (errorSampler) and u's stream given: a test's seeds, to compare
// with Encrypt's formula.
func newFreshEncrypterFrom(pk *PublicKey, errKey [32]byte, tern *mrand.ChaCha8) (*freshEncrypter, error) {
	f := &freshEncrypter{pk: pk, tern: tern}
	f.ntt.useRoots(pk.Params)
	err := safely(func() error {
		params := pk.Params.bgv
		f.rq = params.RingQ().AtLevel(params.MaxLevel())
		xe, ok := params.Xe().(ring.DiscreteGaussian)
		if !ok {
			return fmt.Errorf("%w: errors other than discrete Gaussian", ErrParams)
		}
		var err error
		if f.xe, err = newErrorSampler(errKey, xe, f.rq.ModuliChain()); err != nil {
			return err
		}
		if x, ok := params.Xs().(ring.Ternary); !ok || x.P != 2.0/3 || x.H != 0 {
			return fmt.Errorf("%w: secrets other than uniform ternary", ErrParams)
		}
		f.u, f.e = f.rq.NewPoly(), f.rq.NewPoly()
		for _, q := range f.rq.ModuliChain() {
			f.lut = append(f.lut, [3]uint64{0, 1, q - 1})
		}
		t := params.PlaintextModulus()
		for _, q := range f.rq.ModuliChain() {
			f.tInv = append(f.tInv, ring.ModExp(t%q, q-2, q))
		}
		pt := bgv.NewPlaintext(params, params.MaxLevel())
		pt.IsBatched = false // coefficient encoding, as EncryptPairs
		f.scale, f.bredT, f.meta = pt.Scale.Uint64()%t, ring.GenBRedConstant(t), pt.MetaData.CopyNew()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// encrypt returns a fresh encryption of the plaintext whose coefficients
// add writes: add is given e0 (coefficients modulo each prime of Q, in the
// coefficient domain) and adds each plaintext value with f.put.
func (f *freshEncrypter) encrypt(add func(e0 ring.Poly)) (*rlwe.Ciphertext, error) {
	var ct *rlwe.Ciphertext
	err := safely(func() error {
		rq, pk := f.rq, f.pk.key
		c0, c1 := rq.NewPoly(), rq.NewPoly()
		f.ternary(f.u)
		f.ntt.full(rq, f.u)
		rq.MulCoeffsMontgomery(f.u, pk.Value[0].Q, c0)
		rq.MulCoeffsMontgomery(f.u, pk.Value[1].Q, c1)
		f.xe.read(f.e)
		add(f.e)
		f.ntt.full(rq, f.e)
		rq.Add(c0, f.e, c0)
		f.xe.read(f.e)
		f.ntt.full(rq, f.e)
		rq.Add(c1, f.e, c1)
		ct = &rlwe.Ciphertext{Element: rlwe.Element[ring.Poly]{MetaData: f.meta.CopyNew(), Value: []ring.Poly{c0, c1}}}
		return nil
	})
	return ct, err
}

// ternary sets u to a uniform ternary polynomial: each coefficient 0, 1
// or −1 as two bits of f.tern read 0, 1 or 2 (3 is drawn again).
func (f *freshEncrypter) ternary(u ring.Poly) {
	var word uint64
	left := 0
	for i := range f.rq.N() {
		v := uint64(3)
		for v == 3 {
			if left == 0 {
				word, left = f.tern.Uint64(), 32
			}
			v, word, left = word&3, word>>2, left-1
		}
		for j, lut := range f.lut {
			u.Coeffs[j][i] = lut[v]
		}
	}
}

// put adds the plaintext value m (a residue modulo T, before the scale) at
// coefficient at of e, as bgv.Encoder.Encode would encode it.
func (f *freshEncrypter) put(e ring.Poly, at int, m uint64) {
	t := f.pk.Params.PlaintextModulus()
	if f.scale != 1 {
		m = ring.BRed(m, f.scale, t, f.bredT)
	}
	for j, sub := range f.rq.SubRings[:f.rq.Level()+1] {
		c := &e.Coeffs[j][at]
		if *c += ring.BRed(m, f.tInv[j], sub.Modulus, sub.BRedConstant); *c >= sub.Modulus {
			*c -= sub.Modulus
		}
	}
}

// placed returns the add function of l.place(g, h, k): chunk k's values.
func (f *freshEncrypter) placed(l *BinLayout, g, h []int64, k int) func(e0 ring.Poly) {
	t := f.pk.Params.PlaintextModulus()
	return func(e0 ring.Poly) {
		s, per := l.span(), l.nodes
		for r := 0; r < l.rows && (k*l.rows+r)*per < len(g); r++ {
			i := (k*l.rows + r) * per
			for j := range per {
				f.put(e0, 2*s*r+j*l.bins, centred(g[i+j], t))
				f.put(e0, 2*s*r+s+j*l.bins, centred(h[i+j], t))
			}
		}
	}
}
