package lattice

import (
	"fmt"
	"slices"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/multiparty"
	"github.com/tuneinsight/lattigo/v6/ring"
)

// Expect is what a member has committed to decrypt for one aggregate: the
// contributions that must be in it (from the log or the step, never from
// the party asking) and a floor on their number.
type Expect struct {
	Context Context
	Shape   string
	// Committed are the contributions of the aggregate, sorted by party:
	// exactly these, with these digests, must be in what is decrypted.
	Committed []Input
	// MinInputs is the policy's floor on distinct inputs; anything below 2
	// counts as 2, so no single contribution is ever decrypted.
	MinInputs int
	// Own, when not zero, is the digest of this member's own contribution,
	// which must be in the aggregate: a member that contributed checks by
	// itself that its input is part of what it helps decrypt, whoever
	// assembled the committed list.
	Own Digest
}

// Target is what a decryption share opens: the c1 of an aggregate whose
// inputs were checked against an Expect, and the digest that binds shares
// to it (over the context, shape, inputs and c1). A share made for a target
// decrypts only ciphertexts with this c1, and the committed contributions'
// c1 sum to it, so no share ever opens one party's contribution.
type Target struct {
	Context Context
	Shape   string
	Inputs  []Input
	Digest  Digest
	c1      []ring.Poly
	c1Hash  Digest // polysHash(c1), where its maker kept it (bin targets)
}

// targetDigest binds a target's identity.
func targetDigest(ctx Context, shape string, inputs []Input, c1 []ring.Poly) Digest {
	return targetDigestFromHash(ctx, shape, inputs, polysHash(c1))
}

// targetDigestFromHash is targetDigest from c1's digest (polysHash).
func targetDigestFromHash(ctx Context, shape string, inputs []Input, c1Hash Digest) Digest {
	h := newHasher("cohort/mhe/target/1")
	h.context(ctx)
	h.bytes([]byte(shape))
	h.inputs(inputs)
	h.h.Write(c1Hash[:])
	return h.sum()
}

// TargetDigest is the digest of the target this aggregate's decryption
// shares must name (what the combiner checks them against).
func (a *Aggregate) TargetDigest() Digest { return targetDigest(a.Context, a.Shape, a.Inputs, a.c1) }

// checkInputs checks inputs against what was committed, for member self.
func (e Expect) checkInputs(self int, ctx Context, shape string, inputs []Input) error {
	if ctx != e.Context || shape != e.Shape {
		return fmt.Errorf("%w: asked to decrypt another context or shape than the committed one", ErrPolicy)
	}
	if !slices.Equal(inputs, e.Committed) {
		return fmt.Errorf("%w: the aggregate's inputs are not exactly the committed contributions", ErrPolicy)
	}
	if floor := max(e.MinInputs, 2); len(inputs) < floor {
		return fmt.Errorf("%w: %d inputs, the floor is %d", ErrPolicy, len(inputs), floor)
	}
	if e.Own != (Digest{}) && !slices.Contains(inputs, Input{Party: self, Digest: e.Own}) {
		return fmt.Errorf("%w: this member's own contribution is not in the aggregate", ErrPolicy)
	}
	return nil
}

// Decryptor makes one member's decryption shares. It holds the member's
// secret share and buffers: use one per goroutine.
type Decryptor struct {
	keys    *Keys
	cmb     multiparty.Combiner
	smudge  *smudger
	buf     ring.Poly
	scratch ring.Poly // AppendShare's, allocated at its first use
	noise   *ZeroPool // nil: all smudging noise drawn here
	ntt     sparseNTT // the smudging noise's transforms, by the faster kernels
	// additive is the member's additive share for the quorum last asked
	// (its points): a level's targets share their quorums.
	additive struct {
		quorum []int
		sk     *rlwe.SecretKey
	}
}

// UseNoise lets the Decryptor take the smudging noise of its shares from
// p, a node's pool (ZeroPool, which says why noise drawn ahead is as good
// as fresh), and draw it itself only when p has none ready. It refuses a
// pool of another key.
func (d *Decryptor) UseNoise(p *ZeroPool) error {
	if p != nil && !p.Serves(d.keys.PublicKey) {
		return fmt.Errorf("%w: noise pool of another key", ErrMismatch)
	}
	d.noise = p
	return nil
}

// NewDecryptor returns a Decryptor for keys.
func NewDecryptor(keys *Keys) (*Decryptor, error) {
	d := &Decryptor{keys: keys}
	d.ntt.useRoots(keys.Params)
	params := keys.Params.bgv
	err := safely(func() error {
		var err error
		points := make([]multiparty.ShamirPublicPoint, len(keys.Members))
		for i := range points {
			points[i] = multiparty.ShamirPublicPoint(i + 1)
		}
		d.cmb = multiparty.NewCombiner(params.Parameters, multiparty.ShamirPublicPoint(keys.Self), points, keys.Quorum)
		d.buf = params.RingQ().NewPoly()
		d.smudge, err = newSmudger(params.RingQ().ModuliChain())
		return err
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// Target checks a mask against what this member committed to decrypt and
// returns its target. It trusts that the mask's c1 is the sum of its
// inputs' c1 (the tree summed them); TargetFromParts checks that too.
func (d *Decryptor) Target(m *Mask, e Expect) (*Target, error) {
	if err := d.checkMask(m); err != nil {
		return nil, err
	}
	if err := e.checkInputs(d.keys.Self, m.Context, m.Shape, m.Inputs); err != nil {
		return nil, err
	}
	return &Target{Context: m.Context, Shape: m.Shape, Inputs: m.Inputs, c1: m.c1,
		Digest: targetDigest(m.Context, m.Shape, m.Inputs, m.c1)}, nil
}

// TargetFromParts is Target from the single contributions themselves: it
// recomputes each one's digest from its mask, checks them against the
// committed ones and sums their c1 itself, so nothing but the sum of the
// committed contributions can be decrypted, whoever assembled the parts.
// It costs the c1 of every contribution in bytes.
func (d *Decryptor) TargetFromParts(parts []*Mask, e Expect) (*Target, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: no contributions", ErrPolicy)
	}
	var inputs []Input
	var sum []ring.Poly
	r := d.keys.Params.bgv.RingQ()
	for _, m := range parts {
		if err := d.checkPart(m, e); err != nil {
			return nil, err
		}
		if len(m.Inputs) != 1 {
			return nil, fmt.Errorf("%w: a part is not a single contribution to this aggregate", ErrPolicy)
		}
		in := m.Inputs[0]
		if contributionDigestFromHash(m.Context, in.Party, m.Shape, m.C0Hash, m.c1) != in.Digest {
			return nil, fmt.Errorf("%w: the contribution of party %d does not match its digest", ErrPolicy, in.Party)
		}
		inputs = append(inputs, m.Inputs...)
		if sum == nil {
			sum = make([]ring.Poly, len(m.c1))
			for k := range sum {
				sum[k] = *m.c1[k].CopyNew()
			}
			continue
		}
		if len(m.c1) != len(sum) {
			return nil, fmt.Errorf("%w: parts of different lengths", ErrMismatch)
		}
		for k := range sum {
			r.Add(sum[k], m.c1[k], sum[k])
		}
	}
	inputs, err := mergeInputs(inputs, nil)
	if err != nil {
		return nil, err
	}
	if err := e.checkInputs(d.keys.Self, e.Context, e.Shape, inputs); err != nil {
		return nil, err
	}
	return &Target{Context: e.Context, Shape: e.Shape, Inputs: inputs, c1: sum,
		Digest: targetDigest(e.Context, e.Shape, inputs, sum)}, nil
}

// checkPart checks that m is a mask under this key and of e's aggregate.
func (d *Decryptor) checkPart(m *Mask, e Expect) error {
	if err := d.checkMask(m); err != nil {
		return err
	}
	if m.Context != e.Context || m.Shape != e.Shape {
		return fmt.Errorf("%w: a part of another aggregate", ErrPolicy)
	}
	return nil
}

func (d *Decryptor) checkMask(m *Mask) error {
	if m.Context.Key != d.keys.id {
		return fmt.Errorf("%w: mask under another key", ErrMismatch)
	}
	if err := checkParties(parties(m.Inputs), len(d.keys.Members)); err != nil {
		return err
	}
	return d.keys.Params.polyShape().checkPolys(m.c1)
}

// GenShare makes this member's share for quorum q of plan:
// h = λ·sk·c1 + u for every ciphertext of the target, where λ·sk is the
// member's Lagrange-weighted Shamir share for the quorum (Lattigo's
// Combiner: the quorum's λ·sk add up to the collective secret s) and u the
// uniform smudging noise of the package doc. The shares of the quorum add
// up to s·c1 + Σu: with c0 they give the plaintext and nothing else. This
// is Lattigo's collective key switching to the zero key (KeySwitchProtocol,
// the CKS protocol of Mouchet et al., PETS 2021) without its Gaussian
// term, which the much wider uniform noise subsumes; leaving it out saves a
// Gaussian sample and an NTT per ciphertext.
func (d *Decryptor) GenShare(t *Target, plan *Plan, q int) (*DecryptionShare, error) {
	share, err := d.shareHeader(t, plan, q)
	if err != nil {
		return nil, err
	}
	share.value = make([]ring.Poly, len(t.c1))
	r := d.keys.Params.bgv.RingQ()
	err = d.makeShare(t, plan, q, func(int) ring.Poly { return r.NewPoly() }, func(k int, h ring.Poly) { share.value[k] = h })
	if err != nil {
		return nil, err
	}
	return share, nil
}

// AppendShare appends the encoding of a share GenShare(t, plan, q) would
// make (MarshalBinary's bytes, with fresh smudging) to b, computing it
// ciphertext by ciphertext into one polynomial of the Decryptor's that it
// encodes at once: a decryptor that sends its share holds no share of its
// own, so it neither allocates nor zeroes one (12 MB for a million
// values) only to copy it into the message.
func (d *Decryptor) AppendShare(b []byte, t *Target, plan *Plan, q int) ([]byte, error) {
	share, err := d.shareHeader(t, plan, q)
	if err != nil {
		return nil, err
	}
	s := d.keys.Params.polyShape()
	if b, err = appendFrameHead(b, share.wire(), len(t.c1)*s.polyBytes()); err != nil {
		return nil, err
	}
	if d.scratch.N() == 0 {
		d.scratch = s.newPoly()
	}
	err = d.makeShare(t, plan, q, func(int) ring.Poly { return d.scratch }, func(_ int, h ring.Poly) { b = appendPolys(b, []ring.Poly{h}) })
	if err != nil {
		return nil, err
	}
	return b, nil
}

// shareHeader checks that this member may make a share of t for quorum q
// of plan and returns the share without its value.
func (d *Decryptor) shareHeader(t *Target, plan *Plan, q int) (*DecryptionShare, error) {
	if q < 0 || q >= len(plan.Quorums) || !slices.Contains(plan.Quorums[q], d.keys.Self) {
		return nil, fmt.Errorf("%w: member %d is not in quorum %d of the plan", ErrMismatch, d.keys.Self, q)
	}
	if t.Context.Key != d.keys.id || len(plan.Quorums[q]) != d.keys.Quorum {
		return nil, fmt.Errorf("%w: target or plan of another key", ErrMismatch)
	}
	return &DecryptionShare{Context: t.Context, Target: t.Digest, Plan: plan.digest, Quorum: q,
		Parties: []int{d.keys.Self}, ps: d.keys.Params.polyShape()}, nil
}

// makeShare computes GenShare's h for every ciphertext k of t, in order,
// into the polynomial into(k) returns, and hands it to done(k, h).
func (d *Decryptor) makeShare(t *Target, plan *Plan, q int, into func(k int) ring.Poly, done func(k int, h ring.Poly)) error {
	params := d.keys.Params.bgv
	return safely(func() error {
		sk, err := d.additiveShare(plan.Quorums[q])
		if err != nil {
			return err
		}
		r := params.RingQ()
		moduli := r.ModuliChain()
		for k, c1 := range t.c1 {
			h := into(k)
			// c1 is in the NTT domain, sk in NTT and Montgomery form.
			r.MulCoeffsMontgomery(c1, sk.Value.Q, h)
			u, ok := d.noise.takeNoise()
			if !ok {
				d.smudge.read(d.buf, moduli)
				d.ntt.full(r, d.buf) // rq.NTT's output (TestFullNTT)
				u = d.buf
			}
			r.Add(h, u, h)
			reduce(r, h)
			done(k, h)
		}
		return nil
	})
}

// additiveShare is the member's additive share of the secret for the
// quorum of the given points (the Lagrange-weighted Shamir share), made
// once for consecutive targets of one quorum.
func (d *Decryptor) additiveShare(quorum []int) (*rlwe.SecretKey, error) {
	if d.additive.sk != nil && slices.Equal(d.additive.quorum, quorum) {
		return d.additive.sk, nil
	}
	points := make([]multiparty.ShamirPublicPoint, len(quorum))
	for i, p := range quorum {
		points[i] = multiparty.ShamirPublicPoint(p)
	}
	sk := rlwe.NewSecretKey(d.keys.Params.bgv)
	if err := d.cmb.GenAdditiveShare(points, multiparty.ShamirPublicPoint(d.keys.Self), d.keys.share, sk); err != nil {
		return nil, err
	}
	d.additive.quorum, d.additive.sk = slices.Clone(quorum), sk
	return sk, nil
}

// DecryptionShare is one member's share of a target for one quorum of a
// plan, or the fold of several members' shares of the same quorum. It
// carries the context, the target's digest, the plan's digest and the
// quorum, so it is refused for anything else.
type DecryptionShare struct {
	Context Context
	Target  Digest
	Plan    Digest
	Quorum  int
	Parties []int
	value   []ring.Poly // NTT domain, one per ciphertext
	ps      polyShape
}

type shareWire struct {
	Context contextWire `msgpack:"ctx"`
	Target  []byte      `msgpack:"target"`
	Plan    []byte      `msgpack:"plan"`
	Quorum  int         `msgpack:"quorum"`
	Parties []int       `msgpack:"parties"`
}

// MarshalBinary encodes the share.
func (s *DecryptionShare) MarshalBinary() ([]byte, error) { return s.AppendBinary(nil) }

// AppendBinary appends MarshalBinary's encoding to b (encoding.BinaryAppender).
func (s *DecryptionShare) AppendBinary(b []byte) ([]byte, error) {
	return appendFrame(b, s.wire(), s.value)
}

// wire is the share's header as it is encoded.
func (s *DecryptionShare) wire() shareWire {
	return shareWire{Context: s.Context.wire(), Target: s.Target[:], Plan: s.Plan[:], Quorum: s.Quorum, Parties: s.Parties}
}

// UnmarshalBinary decodes into a share from Opening.AllocateShare, which
// fixes the number of ciphertexts.
func (s *DecryptionShare) UnmarshalBinary(b []byte) error {
	if len(s.value) == 0 || s.ps.n == 0 {
		return fmt.Errorf("%w: unmarshal into an allocated share", ErrMismatch)
	}
	h, raw, err := decodeShareHeader(b)
	if err != nil {
		return err
	}
	if err := s.ps.decodeInto(raw, s.value); err != nil { // on an error s holds part of b: drop it
		return err
	}
	s.Context, s.Target, s.Plan, s.Quorum, s.Parties = h.Context, h.Target, h.Plan, h.Quorum, h.Parties
	return nil
}

// decodeShareHeader decodes and checks a share's header: a share without
// its value, and the coefficient bytes after the header.
func decodeShareHeader(b []byte) (*DecryptionShare, []byte, error) {
	var w shareWire
	raw, err := unframe(b, &w)
	if err != nil {
		return nil, nil, fmt.Errorf("decryption share: %w", err)
	}
	ctx, err := w.Context.context()
	if err != nil {
		return nil, nil, err
	}
	if len(w.Target) != len(Digest{}) || len(w.Plan) != len(Digest{}) || w.Quorum < 0 || len(w.Parties) == 0 {
		return nil, nil, fmt.Errorf("%w: decryption share header", ErrMalformed)
	}
	if err := checkParties(w.Parties, MaxMembers); err != nil {
		return nil, nil, err
	}
	h := &DecryptionShare{Context: ctx, Quorum: w.Quorum, Parties: w.Parties}
	copy(h.Target[:], w.Target)
	copy(h.Plan[:], w.Plan)
	return h, raw, nil
}
