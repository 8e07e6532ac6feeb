package lattice

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// Opening is the combiner's side of decrypting one aggregate under a plan:
// it takes decryption shares in any order (Add, or AggregateShares to fold
// them first anywhere), and once every quorum is complete, Open decrypts
// with each quorum, compares the plaintexts and decodes the agreed one. It
// needs no secret: whoever holds the aggregate can run it (the root of the
// tree), and learns the total, as every party does.
type Opening struct {
	shareFold
	l   *Layout
	agg *Aggregate
}

// NewOpening starts opening agg, which must have at least two inputs.
func NewOpening(pk *PublicKey, l *Layout, plan *Plan, agg *Aggregate) (*Opening, error) {
	if err := NewAggregator(pk, l).check(agg); err != nil {
		return nil, err
	}
	if len(agg.Inputs) < 2 {
		return nil, fmt.Errorf("%w: a single contribution is never decrypted", ErrPolicy)
	}
	f, err := newShareFold(pk, plan, agg.Context, agg.TargetDigest(), agg.c0)
	if err != nil {
		return nil, err
	}
	return &Opening{shareFold: f, l: l, agg: agg}, nil
}

// shareFold is what decrypting one target under a plan needs, whatever
// the target is (an aggregate's Opening, a bin sum's BinOpening): the
// shares folded per quorum, and c0, which with a quorum's folded shares
// gives the plaintext.
type shareFold struct {
	pk     *PublicKey
	plan   *Plan
	ctx    Context
	target Digest
	c0     []ring.Poly
	acc    []*DecryptionShare // per quorum
}

func newShareFold(pk *PublicKey, plan *Plan, ctx Context, target Digest, c0 []ring.Poly) (shareFold, error) {
	for _, q := range plan.Quorums {
		if len(q) != pk.Quorum || checkParties(q, len(pk.Members)) != nil {
			return shareFold{}, fmt.Errorf("%w: plan of another key", ErrMismatch)
		}
	}
	return shareFold{pk: pk, plan: plan, ctx: ctx, target: target, c0: c0,
		acc: make([]*DecryptionShare, len(plan.Quorums))}, nil
}

// AllocateShare returns an empty share of this target's size, to
// unmarshal into.
func (o *shareFold) AllocateShare() *DecryptionShare {
	s := o.pk.Params.polyShape()
	sh := &DecryptionShare{value: make([]ring.Poly, len(o.c0)), ps: s}
	for k := range sh.value {
		sh.value[k] = s.newPoly()
	}
	return sh
}

// check checks that a share belongs to this opening.
func (o *shareFold) check(s *DecryptionShare) error {
	if err := o.checkHeader(s); err != nil {
		return err
	}
	if len(s.value) != len(o.c0) {
		return fmt.Errorf("%w: decryption share of %d ciphertexts", ErrMismatch, len(s.value))
	}
	return o.pk.Params.polyShape().checkPolys(s.value)
}

// checkHeader checks that a share's header names this opening's target
// and plan, and a quorum of the plan with the share's parties in it.
func (o *shareFold) checkHeader(s *DecryptionShare) error {
	if s.Context != o.ctx || s.Target != o.target || s.Plan != o.plan.digest {
		return fmt.Errorf("%w: decryption share of another aggregate or plan", ErrMismatch)
	}
	if s.Quorum < 0 || s.Quorum >= len(o.plan.Quorums) {
		return fmt.Errorf("%w: decryption share of quorum %d", ErrMismatch, s.Quorum)
	}
	for _, p := range s.Parties {
		if !slices.Contains(o.plan.Quorums[s.Quorum], p) {
			return fmt.Errorf("%w: party %d is not in quorum %d", ErrMismatch, p, s.Quorum)
		}
	}
	return nil
}

// AggregateShares sets out to the fold of two shares of the same quorum
// from disjoint members, in any order; out may be a or b.
func (o *shareFold) AggregateShares(a, b, out *DecryptionShare) error {
	if err := o.check(a); err != nil {
		return err
	}
	if err := o.check(b); err != nil {
		return err
	}
	if a.Quorum != b.Quorum {
		return fmt.Errorf("%w: shares of quorums %d and %d", ErrMismatch, a.Quorum, b.Quorum)
	}
	ps := append(slices.Clone(a.Parties), b.Parties...)
	slices.Sort(ps)
	if checkParties(ps, len(o.pk.Members)) != nil {
		return fmt.Errorf("%w: overlapping shares", ErrMismatch)
	}
	if len(out.value) != len(a.value) {
		return fmt.Errorf("%w: output share not allocated for this aggregate", ErrMismatch)
	}
	r := o.pk.Params.bgv.RingQ()
	for k := range out.value {
		r.Add(a.value[k], b.value[k], out.value[k])
	}
	out.Context, out.Target, out.Plan, out.Quorum, out.Parties, out.ps = a.Context, a.Target, a.Plan, a.Quorum, ps, a.ps
	return nil
}

// Add folds a share into its quorum's accumulator.
func (o *shareFold) Add(s *DecryptionShare) error {
	if err := o.check(s); err != nil {
		return err
	}
	if acc := o.acc[s.Quorum]; acc != nil {
		return o.AggregateShares(acc, s, acc)
	}
	acc := o.AllocateShare()
	for k := range acc.value {
		acc.value[k].Copy(s.value[k])
	}
	acc.Context, acc.Target, acc.Plan, acc.Quorum, acc.Parties = s.Context, s.Target, s.Plan, s.Quorum, slices.Clone(s.Parties)
	o.acc[s.Quorum] = acc
	return nil
}

// AddBinary folds the share that b encodes (MarshalBinary's encoding,
// from a peer) into its quorum's accumulator: what UnmarshalBinary into
// an AllocateShare'd share and then Add do, with the same checks, but
// the coefficients go from b into the accumulator, so no share is
// allocated per share received (at the root of a million values, 12 MB
// for each of seven shares a round at N = 5). accept, when not nil, is
// given the share's quorum and parties before any coefficient is read,
// and may refuse them (the caller's check of who sent it). Nothing
// changes unless all of b is accepted: on an error the opening is as it
// was.
func (o *shareFold) AddBinary(b []byte, accept func(quorum int, parties []int) error) error {
	h, raw, err := decodeShareHeader(b)
	if err != nil {
		return err
	}
	if accept != nil {
		if err := accept(h.Quorum, h.Parties); err != nil {
			return err
		}
	}
	if err := o.checkHeader(h); err != nil {
		return err
	}
	s := o.pk.Params.polyShape()
	if err := s.checkEncoded(raw, len(o.c0)); err != nil {
		return err
	}
	acc := o.acc[h.Quorum]
	if acc == nil {
		acc = o.AllocateShare()
		if err := s.decodeInto(raw, acc.value); err != nil {
			return err
		}
		acc.Context, acc.Target, acc.Plan, acc.Quorum, acc.Parties = h.Context, h.Target, h.Plan, h.Quorum, h.Parties
		o.acc[h.Quorum] = acc
		return nil
	}
	ps := append(slices.Clone(acc.Parties), h.Parties...)
	slices.Sort(ps)
	if checkParties(ps, len(o.pk.Members)) != nil {
		return fmt.Errorf("%w: overlapping shares", ErrMismatch)
	}
	s.addEncoded(raw, acc.value)
	acc.Parties = ps
	return nil
}

// Pending returns, per quorum, the members whose shares are still missing.
func (o *shareFold) Pending() map[int][]int {
	out := map[int][]int{}
	for q, members := range o.plan.Quorums {
		for _, p := range members {
			if o.acc[q] == nil || !slices.Contains(o.acc[q].Parties, p) {
				out[q] = append(out[q], p)
			}
		}
	}
	return out
}

// Result is an opened aggregate.
type Result struct {
	// Totals are the decoded sums; nil if the agreed plaintext was out of
	// range (then the error is ErrRange).
	Totals *Totals
	// Plain is the agreed plaintext (coefficients modulo T), what the root
	// sends down the tree for every party to decode and check itself
	// (Layout.Decode).
	Plain   []uint64
	Verdict Verdict
}

// Open decrypts with every quorum of the plan and judges the results (see
// Verdict). It returns ErrDisagree when no plaintext can be trusted, and
// ErrRange when the agreed plaintext is not a sum of in-range inputs (an
// input was out of range: every quorum agrees on it).
func (o *Opening) Open() (*Result, error) {
	plain, v, err := o.open()
	if errors.Is(err, ErrDisagree) {
		return &Result{Verdict: v}, err
	}
	if err != nil {
		return nil, err
	}
	res := &Result{Plain: plain, Verdict: v}
	t, err := o.l.Decode(res.Plain, len(o.agg.Inputs))
	if err != nil {
		return res, err
	}
	res.Totals = t
	return res, nil
}

// open decrypts with every quorum and returns the plaintext the judge
// trusts (ErrDisagree when none).
func (o *shareFold) open() ([]uint64, Verdict, error) {
	if p := o.Pending(); len(p) > 0 {
		return nil, Verdict{}, fmt.Errorf("%w: shares missing from %d quorums", ErrMismatch, len(p))
	}
	// The quorums decrypt independently, each on its own core; open waits
	// for all of them.
	plains := make([][]uint64, len(o.plan.Quorums))
	digests := make([]Digest, len(plains))
	errs := make([]error, len(plains))
	var wg sync.WaitGroup
	for q := range plains {
		wg.Go(func() {
			plains[q], errs[q] = o.decrypt(o.acc[q])
			digests[q] = plainDigest(plains[q])
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, Verdict{}, err
	}
	v, winner := judge(o.plan, digests)
	if winner < 0 {
		return nil, v, fmt.Errorf("%w: suspects %v (see Verdict)", ErrDisagree, v.Suspects)
	}
	return plains[winner], v, nil
}

// decrypt opens the target with one quorum's combined share: c0 + Σh is
// the plaintext in NTT form; Lattigo's BGV encoder maps it back to
// coefficients modulo T.
func (o *shareFold) decrypt(share *DecryptionShare) ([]uint64, error) {
	params := o.pk.Params.bgv
	n := params.N()
	out := make([]uint64, len(o.c0)*n)
	err := safely(func() error {
		ecd := bgv.NewEncoder(params)
		pt := bgv.NewPlaintext(params, params.MaxLevel())
		pt.IsBatched = false
		pt.IsNTT = true
		for k, c0 := range o.c0 {
			params.RingQ().Add(c0, share.value[k], pt.Value)
			if err := ecd.Decode(pt, out[k*n:(k+1)*n]); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

func plainDigest(p []uint64) Digest {
	h := sha256.New()
	buf := make([]byte, 0, 8*1024)
	for _, c := range p {
		buf = binary.LittleEndian.AppendUint64(buf, c)
		if len(buf) == cap(buf) {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	var d Digest
	h.Sum(d[:0])
	return d
}

// Decode decodes a plaintext of `inputs` inputs (the root's Result.Plain)
// with every range check, as Open does: each party can check the sum it is
// sent.
func (l *Layout) Decode(plain []uint64, inputs int) (*Totals, error) { return l.decode(plain, inputs) }
