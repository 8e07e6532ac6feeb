package lattice

import (
	"context"
	"fmt"

	"github.com/cohortdm/cohort/internal/prefill"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// ZeroPool moves public-key encryption off a contribution's critical path.
// Lattigo's Encrypt(pt) is EncryptZero followed by adding the encoded
// plaintext to c0 (rlwe.Encryptor.Encrypt: "the encryption procedure masks
// the plaintext by adding a fresh encryption of zero"), and the encryption
// of zero, which is nearly all of its cost (sampling u and two Gaussian
// errors, three NTTs, two products with the key), does not depend on the
// plaintext. A pool computes encryptions of zero ahead of time, in one
// goroutine of its own, while the node waits between jobs; an Encryptor
// given the pool (Encryptor.UseZeros) then encodes its plaintext and adds
// it to c0 of one of them.
//
// Such a ciphertext is a valid fresh encryption, distributed exactly as
// Encryptor's without a pool: each encryption of zero is computed by the
// same Lattigo call on a ciphertext of the same metadata (NTT domain, top
// level) under the same public key, with fresh randomness from Lattigo's
// samplers (seeded from crypto/rand), and the addition of the plaintext
// is Encrypt's own last step. What makes it safe is that each encryption
// of zero masks one plaintext only: the pool hands each out once, forgets
// it, and never reuses or derives one from another (two plaintexts under
// one mask would show their difference, c0 − c0' = Δ(m − m')). When the
// pool is empty, the Encryptor computes the encryption of zero itself.
//
// The pool also draws the smudging noise of this member's decryption
// shares ahead (Decryptor.UseNoise): each share adds, to every
// ciphertext's λ·sk·c1, a polynomial u of coefficients uniform in
// [−2^114, 2^114), sampled from a ChaCha8 stream seeded from crypto/rand
// and taken to the NTT domain (the package doc, "Smudging"); neither step
// depends on the ciphertext, the key or the plan, so the pool does both
// between jobs. Noise drawn ahead is as good as fresh: it comes from the
// same sampler (smudger, with a seed of its own), the NTT is a bijection
// applied after the draw, so NTT(u) added in the NTT domain is u added to
// the coefficients, and what a share needs of its noise is that it is
// uniform, secret and independent of everything else the share contains,
// which noise drawn before the target existed is by construction. What
// must never happen is that one u smudges two shares: their difference
// would show λ·sk·(c1 − c1'), from which the member's key share follows.
// So each polynomial is handed out once and forgotten, as the encryptions
// of zero are, never kept across rounds or derived from another; when
// none is ready the Decryptor draws its own. The noise is as secret as
// the member's key share (u and the share it smudges give λ·sk·c1), and is
// held in the same process memory as that key share.
//
// A pool lowers latency, not total work: every encryption of zero still
// costs what it did, on whichever core the filler runs. It helps where a
// party encrypts its vector when a step arrives after idle time.
//
// Lifecycle: NewZeroPool starts the filler, which runs until Close is
// called or ctx ends, and refills the pool as encryptions of zero are
// taken. Close stops it, waits for it to return and drops the encryptions
// of zero not handed out. The pool's owner must call Close; after Close,
// an Encryptor given the pool computes every encryption itself. Pause and
// Resume let an owner keep the filler off the cores while it has work of
// its own (a node running a job's step). A pool is safe for concurrent
// use.
//
// Memory: each encryption of zero is a ciphertext, two polynomials of
// Slots coefficients per prime (384 KiB under ParamsBGV13); a pool holds
// at most size of them, and at most 2·size polynomials of noise (192 KiB
// each: at the default quorum a member makes at most two shares of each
// ciphertext of an aggregate, PlanVerified), as much memory again.
type ZeroPool struct {
	pk     *PublicKey
	supply *prefill.Supply[zeroCt]
	noise  *prefill.Supply[ring.Poly] // smudging noise, NTT domain
}

// zeroCt is one encryption of zero, c0 and c1 in the NTT domain.
type zeroCt struct{ c0, c1 ring.Poly }

// ZeroPoolStats is what a pool holds and has handed out, for an owner's
// status page and metrics.
type ZeroPoolStats struct {
	Size  int // the bound: at most this many encryptions of zero wait
	Ready int // encryptions of zero waiting now
	// Bytes is the memory the waiting encryptions of zero hold.
	Bytes int
	Made  int64 // encryptions of zero the filler computed
	Taken int64 // handed out from the pool
	// Computed counts encryptions of zero an Encryptor computed itself
	// because the pool was empty.
	Computed int64
	Paused   bool
	// Noise is the same for the smudging noise of decryption shares (one
	// polynomial per ciphertext of a share; Bytes counts it).
	Noise prefill.Counts
}

// NewZeroPool starts a pool of up to size encryptions of zero under pk.
func NewZeroPool(ctx context.Context, pk *PublicKey, size int) (*ZeroPool, error) {
	if pk == nil || pk.key == nil {
		return nil, fmt.Errorf("%w: zero pool without a public key", ErrParams)
	}
	if size < 1 {
		return nil, fmt.Errorf("%w: zero pool of size %d: want at least 1", ErrParams, size)
	}
	var enc *rlwe.Encryptor // the filler's own: an rlwe.Encryptor holds buffers
	if err := safely(func() error {
		enc = rlwe.NewEncryptor(pk.Params.bgv, pk.key)
		return nil
	}); err != nil {
		return nil, err
	}
	smudge, err := newSmudger(pk.Params.bgv.RingQ().ModuliChain())
	if err != nil {
		return nil, err
	}
	p := &ZeroPool{pk: pk, supply: prefill.New[zeroCt](size), noise: prefill.New[ring.Poly](2 * size)}
	go p.fill(ctx, enc)
	go p.fillNoise(ctx, smudge)
	return p, nil
}

// fillNoise draws smudging noise until the pool is closed or ctx ends
// (the noise supply's loop, under this pool's name in a goroutine dump),
// with a smudger of its own: the filler's stream is seeded apart from
// every Decryptor's.
func (p *ZeroPool) fillNoise(ctx context.Context, s *smudger) {
	p.noise.Fill(ctx, func() (ring.Poly, error) { return drawNoise(p.pk.Params, s) })
}

// drawNoise returns one polynomial of smudging noise in the NTT domain,
// as Decryptor.makeShare draws it when no pool has one ready.
func drawNoise(params Params, s *smudger) (ring.Poly, error) {
	var u ring.Poly
	err := safely(func() error {
		r := params.bgv.RingQ()
		u = r.NewPoly()
		s.read(u, r.ModuliChain())
		r.NTT(u, u)
		return nil
	})
	return u, err
}

// fill computes encryptions of zero until the pool is closed or ctx ends
// (the supply's loop, under this pool's name in a goroutine dump). A
// failing encryption stops it; an Encryptor then reports the failure from
// its own attempt.
func (p *ZeroPool) fill(ctx context.Context, enc *rlwe.Encryptor) {
	p.supply.Fill(ctx, func() (zeroCt, error) { return encryptZero(p.pk, enc) })
}

// encryptZero is the first half of rlwe.Encryptor.Encrypt(pt, ct) for a
// plaintext of the top level in the NTT domain (bgv.NewPlaintext's), on a
// ciphertext of the same metadata (bgv.NewCiphertext's).
func encryptZero(pk *PublicKey, enc *rlwe.Encryptor) (zeroCt, error) {
	params := pk.Params.bgv
	var z zeroCt
	err := safely(func() error {
		ct := bgv.NewCiphertext(params, 1, params.MaxLevel())
		if err := enc.EncryptZero(ct); err != nil {
			return err
		}
		z = zeroCt{c0: ct.Value[0], c1: ct.Value[1]}
		return nil
	})
	return z, err
}

// take returns an encryption of zero from the pool, or false when none is
// ready (a nil pool has none).
func (p *ZeroPool) take() (zeroCt, bool) {
	if p == nil {
		return zeroCt{}, false
	}
	return p.supply.Take()
}

// takeNoise returns a polynomial of smudging noise (NTT domain) from the
// pool, or false when none is ready (a nil pool has none).
func (p *ZeroPool) takeNoise() (ring.Poly, bool) {
	if p == nil {
		return ring.Poly{}, false
	}
	return p.noise.Take()
}

// Serves reports whether the pool's encryptions of zero are under pk. A
// caller handed a pool by someone else checks it before encrypting with it.
func (p *ZeroPool) Serves(pk *PublicKey) bool { return pk != nil && pk.id == p.pk.id }

// Stats reports the pool's size, what waits in it and what it handed out.
func (p *ZeroPool) Stats() ZeroPoolStats {
	c, n := p.supply.Counts(), p.noise.Counts()
	return ZeroPoolStats{Size: c.Size, Ready: c.Ready, Bytes: (c.Ready + n.Ready/2) * p.pk.Params.CiphertextBytes(),
		Made: c.Made, Taken: c.Taken, Computed: c.Computed, Paused: c.Paused, Noise: n}
}

// Pause stops the filler once the encryption of zero it is computing is
// done, until Resume: the owner keeps the cores for its own work and lets
// the pool fill while it idles. Encryptors still take what is ready.
// Pausing a paused pool does nothing.
func (p *ZeroPool) Pause() {
	p.supply.Pause()
	p.noise.Pause()
}

// Resume lets a paused filler go on; on a running pool it does nothing.
func (p *ZeroPool) Resume() {
	p.supply.Resume()
	p.noise.Resume()
}

// Close stops the fillers, waits for them to return and drops the unused
// encryptions of zero and noise (which never masked or smudged anything).
// It is safe to call more than once.
func (p *ZeroPool) Close() {
	p.supply.Close()
	p.noise.Close()
}
