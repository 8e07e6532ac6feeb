package lattice

import (
	"fmt"
	"slices"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// Aggregate is an encrypted sum of contributions of one Context: BGV
// ciphertexts (c0_k, c1_k) under the collective key, one per Layout
// ciphertext, and the list of inputs in it with each input's digest. A
// party's own contribution is an Aggregate of one input (Encryptor); the
// tree folds them with Aggregator.Aggregate.
type Aggregate struct {
	Context Context
	Shape   string
	Inputs  []Input
	c0, c1  []ring.Poly // NTT domain
	ps      polyShape
}

// Encryptor encrypts a party's contribution under the collective public
// key. It holds buffers: use one per goroutine.
type Encryptor struct {
	pk     *PublicKey
	enc    *rlwe.Encryptor
	ecd    *bgv.Encoder
	placed placedEncoder   // EncryptPairs' scratch (binencode.go)
	zeros  *ZeroPool       // nil: every encryption of zero computed here
	fresh  *freshEncrypter // EncryptPairs' own encryptions (binsums_fresh.go), made when first needed
}

// UseZeros lets the Encryptor take its encryptions of zero from p, a
// node's pool (ZeroPool, which says why the ciphertexts are distributed
// as without it), and compute them itself only when p is empty. It
// refuses a pool of another key.
func (e *Encryptor) UseZeros(p *ZeroPool) error {
	if p != nil && !p.Serves(e.pk) {
		return fmt.Errorf("%w: zero pool of another key", ErrMismatch)
	}
	e.zeros = p
	return nil
}

// NewEncryptor returns an Encryptor for pk.
func NewEncryptor(pk *PublicKey) (*Encryptor, error) {
	e := &Encryptor{pk: pk}
	err := safely(func() error {
		e.enc = rlwe.NewEncryptor(pk.Params.bgv, pk.key)
		e.ecd = bgv.NewEncoder(pk.Params.bgv)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// EncryptFloats encodes x in fixed point (Layout.EncodeFloats: out-of-range
// values are refused before anything is encrypted) and encrypts it as
// party's contribution to the aggregate of ctx.
func (e *Encryptor) EncryptFloats(ctx Context, party int, l *Layout, x []float64) (*Aggregate, error) {
	coeffs, err := l.EncodeFloats(x)
	if err != nil {
		return nil, err
	}
	return e.encrypt(ctx, party, l, coeffs)
}

// EncryptInts is EncryptFloats for values already in fixed point.
func (e *Encryptor) EncryptInts(ctx Context, party int, l *Layout, v []int64) (*Aggregate, error) {
	coeffs, err := l.EncodeInts(v)
	if err != nil {
		return nil, err
	}
	return e.encrypt(ctx, party, l, coeffs)
}

func (e *Encryptor) encrypt(ctx Context, party int, l *Layout, coeffs []uint64) (*Aggregate, error) {
	if err := ctx.check(); err != nil {
		return nil, err
	}
	if ctx.Key != e.pk.id || party < 1 || party > len(e.pk.Members) || l.slots != e.pk.Params.Slots() {
		return nil, fmt.Errorf("%w: contribution of party %d under key %x", ErrMismatch, party, ctx.Key)
	}
	a := &Aggregate{Context: ctx, Shape: l.Shape(), c0: make([]ring.Poly, l.cts), c1: make([]ring.Poly, l.cts),
		ps: e.pk.Params.polyShape()}
	params := e.pk.Params.bgv
	err := safely(func() error {
		pt := bgv.NewPlaintext(params, params.MaxLevel())
		pt.IsBatched = false // coefficient encoding: no NTT modulo T
		for k := range a.c0 {
			if err := e.ecd.Encode(coeffs[k*l.slots:(k+1)*l.slots], pt); err != nil {
				return err
			}
			c0, c1, err := e.encryptPlain(pt)
			if err != nil {
				return err
			}
			reduce(params.RingQ(), c0, c1)
			a.c0[k], a.c1[k] = c0, c1
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	a.Inputs = []Input{{Party: party, Digest: contributionDigest(ctx, party, a.Shape, a.c0, a.c1)}}
	return a, nil
}

// encryptPlain encrypts pt as rlwe.Encryptor.Encrypt does, an encryption
// of zero plus pt: with one from the pool when it has one ready.
func (e *Encryptor) encryptPlain(pt *rlwe.Plaintext) (c0, c1 ring.Poly, err error) {
	if z, ok := e.zeros.take(); ok {
		e.pk.Params.bgv.RingQ().AtLevel(pt.Level()).Add(z.c0, pt.Value, z.c0)
		return z.c0, z.c1, nil
	}
	params := e.pk.Params.bgv
	ct := bgv.NewCiphertext(params, 1, params.MaxLevel())
	if err := e.enc.Encrypt(pt, ct); err != nil {
		return ring.Poly{}, ring.Poly{}, err
	}
	return ct.Value[0], ct.Value[1], nil
}

// contributionDigest is the digest of a single contribution, over its
// context, party, shape and ciphertexts (c0 and c1 hashed apart, so that a
// Mask, which carries c1 and the hash of c0, can be checked against it).
func contributionDigest(ctx Context, party int, shape string, c0, c1 []ring.Poly) Digest {
	return contributionDigestFromHash(ctx, party, shape, polysHash(c0), c1)
}

func contributionDigestFromHash(ctx Context, party int, shape string, c0Hash Digest, c1 []ring.Poly) Digest {
	return contributionDigestFromHashes(ctx, party, shape, c0Hash, polysHash(c1))
}

// contributionDigestFromHashes is contributionDigest from the digests of
// c0 and c1 (polysHash), for a caller that needs c1's again.
func contributionDigestFromHashes(ctx Context, party int, shape string, c0Hash, c1Hash Digest) Digest {
	h := newHasher("cohort/mhe/contribution/1")
	h.context(ctx)
	h.uint(uint64(party))
	h.bytes([]byte(shape))
	h.h.Write(c0Hash[:])
	h.h.Write(c1Hash[:])
	return h.sum()
}

func polysHash(ps []ring.Poly) Digest {
	h := newHasher("cohort/mhe/polys/1")
	h.polys(ps)
	return h.sum()
}

// Aggregator folds aggregates of one key and layout. It holds no secret.
type Aggregator struct {
	pk *PublicKey
	l  *Layout
}

// NewAggregator returns an Aggregator for pk and l.
func NewAggregator(pk *PublicKey, l *Layout) *Aggregator { return &Aggregator{pk: pk, l: l} }

// Allocate returns an empty aggregate of the layout's shape, to unmarshal
// into or to fold into.
func (g *Aggregator) Allocate() *Aggregate {
	s := g.pk.Params.polyShape()
	a := &Aggregate{Shape: g.l.Shape(), c0: make([]ring.Poly, g.l.cts), c1: make([]ring.Poly, g.l.cts), ps: s}
	for k := range a.c0 {
		a.c0[k], a.c1[k] = s.newPoly(), s.newPoly()
	}
	return a
}

// Aggregate sets out to a + b: the ciphertexts added coefficient-wise and
// the inputs merged. a and b must share the context and shape and have no
// input in common, and together at most Layout.Summands inputs (more could
// wrap the plaintext). out may be a or b.
func (g *Aggregator) Aggregate(a, b, out *Aggregate) error {
	if err := g.check(a); err != nil {
		return err
	}
	if err := g.check(b); err != nil {
		return err
	}
	if a.Context != b.Context {
		return fmt.Errorf("%w: aggregates of different contexts", ErrMismatch)
	}
	in, err := mergeInputs(a.Inputs, b.Inputs)
	if err != nil {
		return err
	}
	if len(in) > g.l.Summands {
		return fmt.Errorf("%w: %d inputs exceed the layout's %d summands (the sum could wrap)", ErrRange, len(in), g.l.Summands)
	}
	if len(out.c0) != g.l.cts || len(out.c1) != g.l.cts {
		return fmt.Errorf("%w: output aggregate not allocated for this layout", ErrMismatch)
	}
	r := g.pk.Params.bgv.RingQ()
	for k := range out.c0 {
		r.Add(a.c0[k], b.c0[k], out.c0[k])
		r.Add(a.c1[k], b.c1[k], out.c1[k])
	}
	out.Context, out.Shape, out.Inputs = a.Context, a.Shape, in
	return nil
}

// AddBinary adds the aggregate that b encodes (MarshalBinary's encoding,
// from a peer) into acc: what UnmarshalBinary into an Allocate'd
// aggregate and then Aggregate(acc, it, acc) do, with the same checks,
// but the coefficients are added into acc's straight from b. A parent
// that sums its children's subtrees this way allocates, zeroes and
// fills no aggregate per child, and passes over the bytes once to check
// them and once to add them instead of decoding, then adding (at the
// root of a million values at N = 5, 25 MB per child). accept, when not
// nil, is given the encoded aggregate's context and inputs before any
// coefficient is read, and may refuse them (the caller's check of whose
// inputs these are). Nothing in acc changes unless all of b is accepted:
// on an error acc is as it was.
func (g *Aggregator) AddBinary(acc *Aggregate, b []byte, accept func(Context, []Input) error) error {
	if err := g.check(acc); err != nil {
		return err
	}
	h, raw, err := decodeHalvesHeader(b, g.l.Shape(), false)
	if err != nil {
		return err
	}
	if h.ctx != acc.Context {
		return fmt.Errorf("%w: aggregates of different contexts", ErrMismatch)
	}
	if err := checkParties(parties(h.inputs), len(g.pk.Members)); err != nil {
		return fmt.Errorf("%w: aggregate inputs", ErrMismatch)
	}
	if accept != nil {
		if err := accept(h.ctx, h.inputs); err != nil {
			return err
		}
	}
	in, err := mergeInputs(acc.Inputs, h.inputs)
	if err != nil {
		return err
	}
	if len(in) > g.l.Summands {
		return fmt.Errorf("%w: %d inputs exceed the layout's %d summands (the sum could wrap)", ErrRange, len(in), g.l.Summands)
	}
	s := g.pk.Params.polyShape()
	polys := append(slices.Clip(acc.c0), acc.c1...)
	if err := s.checkEncoded(raw, len(polys)); err != nil {
		return err
	}
	s.addEncoded(raw, polys)
	acc.Inputs = in
	return nil
}

// check checks that a belongs to this key and layout.
func (g *Aggregator) check(a *Aggregate) error {
	if a.Context.Key != g.pk.id || a.Shape != g.l.Shape() || len(a.c0) != g.l.cts || len(a.c1) != g.l.cts {
		return fmt.Errorf("%w: aggregate of another key or layout", ErrMismatch)
	}
	if err := checkParties(parties(a.Inputs), len(g.pk.Members)); err != nil || len(a.Inputs) == 0 {
		return fmt.Errorf("%w: aggregate inputs", ErrMismatch)
	}
	s := g.pk.Params.polyShape()
	if err := s.checkPolys(a.c0); err != nil {
		return err
	}
	return s.checkPolys(a.c1)
}

// Mask returns the part of the aggregate a decryptor needs: c1 (half the
// bytes), the inputs and the hash of c0.
func (a *Aggregate) Mask() *Mask {
	return &Mask{Context: a.Context, Shape: a.Shape, Inputs: a.Inputs, C0Hash: polysHash(a.c0), c1: a.c1, ps: a.ps}
}

// Mask is the c1 half of an aggregate with the hash of its c0 half: all a
// decryptor needs (a decryption share is s_i·c1 plus noise). For a single
// contribution the input's digest can be recomputed from it.
type Mask struct {
	Context Context
	Shape   string
	Inputs  []Input
	C0Hash  Digest
	c1      []ring.Poly
	ps      polyShape
}

type aggregateWire struct {
	Context contextWire `msgpack:"ctx"`
	Shape   string      `msgpack:"shape"`
	Inputs  []inputWire `msgpack:"inputs"`
	C0Hash  []byte      `msgpack:"c0hash"`
}

// MarshalBinary encodes the aggregate.
func (a *Aggregate) MarshalBinary() ([]byte, error) { return a.AppendBinary(nil) }

// AppendBinary appends MarshalBinary's encoding to b (encoding.BinaryAppender).
func (a *Aggregate) AppendBinary(b []byte) ([]byte, error) {
	return appendFrame(b, aggregateWire{Context: a.Context.wire(), Shape: a.Shape, Inputs: inputsWire(a.Inputs)}, a.c0, a.c1)
}

// UnmarshalBinary decodes into an aggregate from Aggregator.Allocate,
// which fixes the shape and the number of ciphertexts expected.
// The polynomials are decoded into a's own (on an error a holds part of
// b: drop it).
func (a *Aggregate) UnmarshalBinary(b []byte) error {
	w, err := decodeHalves(b, a.Shape, a.ps, append(slices.Clip(a.c0), a.c1...), false)
	if err != nil {
		return err
	}
	a.Context, a.Inputs = w.ctx, w.inputs
	return nil
}

// MarshalBinary encodes the mask.
func (m *Mask) MarshalBinary() ([]byte, error) { return m.AppendBinary(nil) }

// AppendBinary appends MarshalBinary's encoding to b (encoding.BinaryAppender).
func (m *Mask) AppendBinary(b []byte) ([]byte, error) {
	return appendFrame(b, aggregateWire{Context: m.Context.wire(), Shape: m.Shape, Inputs: inputsWire(m.Inputs),
		C0Hash: m.C0Hash[:]}, m.c1)
}

// UnmarshalBinary decodes into a mask from Aggregator.AllocateMask.
// The polynomials are decoded into m's own (on an error m holds part of
// b: drop it).
func (m *Mask) UnmarshalBinary(b []byte) error {
	w, err := decodeHalves(b, m.Shape, m.ps, m.c1, true)
	if err != nil {
		return err
	}
	m.Context, m.Inputs = w.ctx, w.inputs
	copy(m.C0Hash[:], w.C0Hash)
	return nil
}

// AllocateMask returns an empty mask of the layout's shape to unmarshal into.
func (g *Aggregator) AllocateMask() *Mask {
	s := g.pk.Params.polyShape()
	m := &Mask{Shape: g.l.Shape(), c1: make([]ring.Poly, g.l.cts), ps: s}
	for k := range m.c1 {
		m.c1[k] = s.newPoly()
	}
	return m
}

type decodedHeader struct {
	ctx    Context
	inputs []Input
	C0Hash []byte
}

// decodeHalves decodes an aggregate (withHash false) or a mask (withHash
// true: its c0 hash) of shape wantShape into dst, the value's polynomials
// (c0 then c1 for an aggregate, c1 for a mask), after its header checks.
func decodeHalves(b []byte, wantShape string, s polyShape, dst []ring.Poly, withHash bool) (*decodedHeader, error) {
	if len(dst) == 0 || s.n == 0 {
		return nil, fmt.Errorf("%w: unmarshal into an allocated value", ErrMismatch)
	}
	h, raw, err := decodeHalvesHeader(b, wantShape, withHash)
	if err != nil {
		return nil, err
	}
	if err := s.decodeInto(raw, dst); err != nil {
		return nil, err
	}
	return h, nil
}

// decodeHalvesHeader decodes and checks the header of an aggregate or a
// mask (decodeHalves) and returns it with the coefficient bytes after it.
func decodeHalvesHeader(b []byte, wantShape string, withHash bool) (*decodedHeader, []byte, error) {
	var w aggregateWire
	raw, err := unframe(b, &w)
	if err != nil {
		return nil, nil, fmt.Errorf("aggregate: %w", err)
	}
	if w.Shape != wantShape {
		return nil, nil, fmt.Errorf("%w: aggregate of shape %.100q, expected %s", ErrMismatch, w.Shape, wantShape)
	}
	ctx, err := w.Context.context()
	if err != nil {
		return nil, nil, err
	}
	inputs, err := inputsFromWire(w.Inputs, MaxMembers)
	if err != nil || len(inputs) == 0 {
		return nil, nil, fmt.Errorf("%w: aggregate inputs", ErrMalformed)
	}
	switch {
	case withHash && len(w.C0Hash) != len(Digest{}):
		return nil, nil, fmt.Errorf("%w: mask without its c0 hash", ErrMalformed)
	case !withHash && len(w.C0Hash) != 0:
		return nil, nil, fmt.Errorf("%w: an aggregate carries no c0 hash", ErrMalformed)
	}
	return &decodedHeader{ctx: ctx, inputs: inputs, C0Hash: w.C0Hash}, raw, nil
}
