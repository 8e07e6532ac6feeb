package secureagg

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/mhe"
	"github.com/cohortdm/cohort/protocol"
)

// The lattice backend runs the same tree, schedule and fault handling as
// the Paillier backend, with package mhe's multiparty BGV in place of
// threshold Paillier (see the package doc, Lattice backend):
//
//  1. Up: each party but the root sends the root's children its sketch
//     key (lattice_sketch.go), encrypts its vector (a few values per
//     coefficient, 8,192 coefficients per ciphertext), adds its children's
//     subtree sums and sends its subtree's sum up; a child of the root
//     first waits for the root's commitment to its own contribution
//     (commit.go), and then sends every other party but the root the
//     sketch of its subtree sum under that party's key, with the
//     commitment.
//  2. Down: the root sends the total's mask (c1 and the digest of c0) and
//     the mask of its own contribution down the tree. Every party checks
//     the root's own against its commitment and the total against the
//     root's own and the children's sketches
//     (mhe.Decryptor.TargetFromSketches): it decrypts the step's aggregate
//     of every party's input, with its own in it, or nothing
//     (ErrTampered).
//  3. Shares: every party in a quorum of the plan sends the root one
//     decryption share per quorum it is in (mhe.PlanVerified: quorums that
//     no single member is in all of). The root re-plans without parties
//     whose shares did not come (a share request, Seq 1), and when the
//     quorums' decryptions disagree it asks the blame plan (Seq 2), which
//     names the maker of a wrong share.
//  4. Result: the root sends the agreed plaintext down the tree; every
//     party decodes and range-checks it itself.

// latticeAgg is one party's state for one aggregation on the lattice
// backend: the schedule it runs on, the lattice key, the layout, and the
// context that every ciphertext and share of the step names.
type latticeAgg struct {
	*schedule
	keys   *mhe.Keys
	layout *mhe.Layout
	mctx   mhe.Context
	agg    *mhe.Aggregator
	dec    *mhe.Decryptor
	points map[string]int // each party's Shamir point
	inBits int            // |round(x·2^FracBits)| < 2^inBits, before noise
	noise  *NoiseReport
	// ownDigest is the digest of this party's own contribution, which
	// must be in whatever it helps decrypt.
	ownDigest mhe.Digest
	// sketchKey is this party's secret for checking the total
	// (lattice_sketch.go); bg runs its seeds' and sketches' sends.
	sketchKey mhe.SketchKey
	bg        sync.WaitGroup
}

// The lattice schedule adds two share rounds to the Paillier one: the
// shares of a re-planned decryption reach the root within 2H+6 hops (as a
// Paillier share request's), those of the blame plan within 2H+9, the
// result leaves the root within 2H+10 and reaches depth d within 2H+11+d,
// and nothing takes longer than 3H+12: latticeExtra hops more than on the
// Paillier schedule.
const latticeExtra = 3

func (s *latticeAgg) blameHops() int        { return 2*s.h + 9 }
func (s *latticeAgg) at(hops int) time.Time { return s.start.Add(time.Duration(hops) * s.hop) }
func (s *latticeAgg) shareDeadline(seq int) int {
	return []int{s.shareHops(), s.lateShareHops(), s.blameHops()}[seq]
}

// newLatticeBase checks a party's lattice key against the step and lays
// out the tree and the schedule.
func newLatticeBase(net Network, step job.Step, cfg Config) (*schedule, error) {
	k := cfg.Lattice
	if k == nil || k.PublicKey == nil {
		return nil, fmt.Errorf("%w: no lattice key", ErrKeys)
	}
	if self := net.Self(); k.Name() != self {
		return nil, fmt.Errorf("%w: %s holds the lattice share of %s", ErrKeys, self, k.Name())
	}
	s, err := newSchedule(net, step, cfg, latticeExtra)
	if err != nil {
		return nil, err
	}
	for _, q := range s.parties {
		if k.Point(q) == 0 {
			return nil, fmt.Errorf("secureagg: party %s holds no share of the consortium's lattice key", q)
		}
	}
	if len(s.parties) < k.Quorum {
		return nil, fmt.Errorf("%w: %d parties cannot reach the lattice key's quorum of %d", ErrTooFewShares, len(s.parties), k.Quorum)
	}
	return s, nil
}

func newLatticeAgg(net Network, step job.Step, cfg Config, n int) (*latticeAgg, error) {
	base, err := newLatticeBase(net, step, cfg)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("secureagg: empty input vector")
	}
	enc, err := planEncoding(len(base.parties), cfg)
	if err != nil {
		return nil, err
	}
	if err := enc.latticeFits(len(base.parties)); err != nil {
		return nil, err
	}
	k := cfg.Lattice
	s := &latticeAgg{schedule: base, keys: k, inBits: cfg.ValueBits, noise: enc.noise, points: map[string]int{}}
	if s.layout, err = mhe.NewLayout(k.Params, n, cfg.FracBits, enc.bits(), len(s.parties)); err != nil {
		return nil, fmt.Errorf("secureagg: lattice layout: %w", err)
	}
	phase := step.Phase
	if step.Channel != "" {
		phase += "/" + step.Channel
	}
	s.mctx = mhe.Context{Key: k.ID(), Job: step.Job, Phase: phase, Round: step.Round, Attempt: step.Attempt}
	s.agg = mhe.NewAggregator(k.PublicKey, s.layout)
	if s.dec, err = mhe.NewDecryptor(k); err != nil {
		return nil, err
	}
	for _, q := range s.parties {
		s.points[q] = k.Point(q)
	}
	s.shape = fmt.Sprintf("lattice/v1 %s fanout=%d noise=%s", s.layout.Shape(), s.tree.k, enc.noiseDesc)
	return s, nil
}

// latticeTotal is what a party decrypts on the lattice backend: the
// target its shares are made of and, at the root, the total it opens.
type latticeTotal struct {
	agg    *mhe.Aggregate // the root's only
	target *mhe.Target
}

// The lattice backend's stages (backend, run by runTree; see the comment
// at the top).

var _ backend[*mhe.Aggregate, latticeTotal] = (*latticeAgg)(nil)

// contribute sends this party's sketch key (but at the root) and encrypts
// its input.
func (s *latticeAgg) contribute(ctx context.Context, input []float64) (*mhe.Aggregate, error) {
	if s.tree.parent(s.self) != "" {
		if err := s.sendSeeds(ctx); err != nil {
			return nil, err
		}
	}
	own, err := s.encrypt(input)
	if err != nil {
		return nil, err
	}
	s.ownDigest = own.Inputs[0].Digest
	return own, nil
}

// component is the root's own mask, which it commits to.
func (s *latticeAgg) component(own *mhe.Aggregate) ([]byte, error) {
	b, err := own.Mask().MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("secureagg: marshal a mask: %w", err)
	}
	return b, nil
}

// upAndDown relays the subtree's sum up and the total's masks down, and
// checks the total by the sketches.
func (s *latticeAgg) upAndDown(ctx context.Context, acc *mhe.Aggregate, missing []string) (latticeTotal, error) {
	comps, err := s.relay(ctx, acc, missing)
	if err != nil {
		return latticeTotal{}, err
	}
	target, err := s.checkTotal(ctx, comps, acc)
	return latticeTotal{target: target}, err
}

// sendTotal sends the total's mask and the root's own down; the root
// decrypts the total it formed.
func (s *latticeAgg) sendTotal(ctx context.Context, own []byte, acc *mhe.Aggregate, _ []*mhe.Aggregate) (latticeTotal, error) {
	mask := acc.Mask()
	total, err := mask.MarshalBinary()
	if err != nil {
		return latticeTotal{}, fmt.Errorf("secureagg: marshal a mask: %w", err)
	}
	s.sendBlobAll(ctx, s.downHops, s.tree.children(s.self), TypeDown, s.net, encodeList([][]byte{total, own}), protocol.DiscloseCiphertext)
	expect := mhe.Expect{Context: s.mctx, Shape: s.layout.Shape(), Committed: acc.Inputs, MinInputs: len(s.parties), Own: s.ownDigest}
	target, err := s.dec.Target(mask, expect)
	if err != nil {
		return latticeTotal{}, err
	}
	return latticeTotal{agg: acc, target: target}, nil
}

func (s *latticeAgg) wait() { s.bg.Wait() }

// encrypt checks, noises, encodes and encrypts this party's input. The
// checks are the Paillier path's: |round(x·2^FracBits)| < 2^ValueBits, and
// with noise the noisy value within the layout's bound.
func (s *latticeAgg) encrypt(input []float64) (*mhe.Aggregate, error) {
	var sampler *noiseSampler
	if s.noise != nil {
		var err error
		if sampler, err = newNoiseSampler(s.noise, s.random); err != nil {
			return nil, err
		}
	}
	f := s.layout.FracBits
	inBound, bound := math.Ldexp(1, s.inBits), math.Ldexp(1, s.layout.ValueBits)
	v := make([]int64, len(input))
	for i, x := range input {
		// Ldexp is exact and Round rounds halves away from zero, as
		// paillier.FixedPoint.Encode does.
		r := math.Round(math.Ldexp(x, f))
		if !(math.Abs(r) < inBound) { // also NaN
			// The value itself stays here: the error reaches the coordinator.
			return nil, fmt.Errorf("%w: input[%d] is not a finite number below 2^%d at 2^-%d precision", ErrRange, i, s.inBits, f)
		}
		if sampler != nil {
			if r = math.Round(math.Ldexp(x+sampler.sample(), f)); !(math.Abs(r) < bound) {
				return nil, fmt.Errorf("%w: noisy input[%d] beyond its bound", ErrRange, i)
			}
		}
		v[i] = int64(r)
	}
	enc, err := mhe.NewEncryptor(s.keys.PublicKey)
	if err != nil {
		return nil, err
	}
	own, err := enc.EncryptInts(s.mctx, s.keys.Self, s.layout, v)
	if err != nil {
		return nil, fmt.Errorf("secureagg: encrypt: %w", err)
	}
	return own, nil
}

// gatherUp receives every child's subtree sum, each within the hops its
// subtree may take, and adds them to own (the down message carries no
// subtree's sum, so none is returned). Children that fail are returned as
// missing, with the parties they report missing.
func (s *latticeAgg) gatherUp(ctx context.Context, own *mhe.Aggregate, children []string) (*mhe.Aggregate, []*mhe.Aggregate, []string, error) {
	type got struct {
		agg     *mhe.Aggregate
		missing []string
	}
	results := make([]got, len(children))
	var wg sync.WaitGroup
	for i, c := range children {
		wg.Go(func() {
			data, miss, err := s.receiveBlob(ctx, s.upHops(c), c, TypeUp, s.net, s.maxAggregate())
			if err == nil && len(miss) == 0 {
				results[i].agg, err = s.decodeAggregate(data, s.tree.subtree(c))
			}
			switch {
			case err != nil:
				results[i].missing = []string{c}
			case len(miss) > 0:
				results[i].missing = miss
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, fmt.Errorf("secureagg: %w", err)
	}
	acc := own
	var missing []string
	for _, r := range results {
		if len(r.missing) > 0 {
			missing = append(missing, r.missing...)
			continue
		}
		// In place: own is not needed apart from the sum (the root has
		// encoded its own mask already).
		if err := s.agg.Aggregate(acc, r.agg, acc); err != nil {
			return nil, nil, nil, fmt.Errorf("secureagg: add a subtree: %w", err)
		}
	}
	slices.Sort(missing)
	return acc, nil, missing, nil
}

// decodeAggregate decodes a subtree's sum and checks that it holds exactly
// the inputs of the parties of that subtree, of this step.
func (s *latticeAgg) decodeAggregate(data []byte, subtree []string) (*mhe.Aggregate, error) {
	a := s.agg.Allocate()
	if err := a.UnmarshalBinary(data); err != nil {
		return nil, err
	}
	if a.Context != s.mctx || !slices.Equal(inputParties(a.Inputs), s.pointsOf(subtree)) {
		return nil, fmt.Errorf("%w: a subtree sum of other inputs or another step", protocol.ErrMalformed)
	}
	return a, nil
}

// relay is a non-root party's middle: send its subtree's sum up (and, as
// a child of the root, its sketches to every other party but the root),
// then receive the total's components from its parent, pass them down and
// return them. A parent that does not answer, or answers malformed, is the
// party it names missing, and its subtree learns so too.
func (s *latticeAgg) relay(ctx context.Context, acc *mhe.Aggregate, missing []string) ([][]byte, error) {
	parent, children := s.tree.parent(s.self), s.tree.children(s.self)
	var err error
	if len(missing) > 0 {
		err = s.sendAbort(ctx, s.upHops(s.self), parent, TypeUp, missing)
	} else {
		var data []byte
		if data, err = acc.MarshalBinary(); err != nil {
			return nil, fmt.Errorf("secureagg: marshal the subtree sum: %w", err)
		}
		if parent == s.tree.root() {
			if err := s.awaitCommit(ctx); err != nil {
				if ctx.Err() != nil {
					return nil, fmt.Errorf("secureagg: %w", err)
				}
				s.abortDown(ctx, []string{parent})
				return nil, &MissingError{Parties: []string{parent}}
			}
		}
		err = s.sendBlob(ctx, s.upHops(s.self), parent, TypeUp, s.net, data, protocol.DiscloseCiphertext)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		s.abortDown(ctx, []string{parent})
		return nil, &MissingError{Parties: []string{parent}}
	}
	if parent == s.tree.root() && len(missing) == 0 {
		s.sendSketches(ctx, acc)
	}
	const n = 2 // the total's mask and the root's own
	data, miss, err := s.receiveBlob(ctx, s.downHops(s.self), parent, TypeDown, s.net, n*s.maxMask())
	var comps [][]byte
	if err == nil && len(miss) == 0 {
		comps, err = decodeList(data, n)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("secureagg: waiting for the aggregate from %s: %w", parent, err)
		}
		miss = []string{parent}
	}
	if len(miss) > 0 {
		s.abortDown(ctx, miss)
		return nil, &MissingError{Parties: miss}
	}
	// Pass the components on as they came: every party checks them itself.
	s.sendBlobAll(ctx, s.downHops, children, TypeDown, s.net, data, protocol.DiscloseCiphertext)
	return comps, nil
}

// pointsOf maps parties to their Shamir points, sorted.
func (s *latticeAgg) pointsOf(parties []string) []int {
	out := make([]int, len(parties))
	for i, p := range parties {
		out[i] = s.points[p]
	}
	slices.Sort(out)
	return out
}

// nameOf maps a Shamir point back to its party's name.
func (s *latticeAgg) nameOf(point int) string { return s.keys.Members[point-1] }

func inputParties(in []mhe.Input) []int {
	out := make([]int, len(in))
	for i, x := range in {
		out[i] = x.Party
	}
	return out
}

// Bounds on what a peer may send, with room for headers (contexts, shapes
// and input lists are a few kilobytes at most).
const headerRoom = 1 << 17

func (s *latticeAgg) maxAggregate() int {
	return s.layout.Ciphertexts()*s.keys.Params.CiphertextBytes() + headerRoom
}
func (s *latticeAgg) maxMask() int {
	return s.layout.Ciphertexts()*s.keys.Params.CiphertextBytes()/2 + headerRoom
}
func (s *latticeAgg) maxShare() int { return s.maxMask() }
func (s *latticeAgg) coeffs() int   { return s.layout.Ciphertexts() * s.keys.Params.Slots() }

// partNet is the channel that carries part i of a blob sent on net.
func partNet(net Network, i int) Network {
	if i == 0 {
		return net
	}
	return net.Sub("part/" + strconv.Itoa(i))
}

// abortDown passes an abort naming missing to every child.
func (s *latticeAgg) abortDown(ctx context.Context, missing []string) {
	var wg sync.WaitGroup
	for _, c := range s.tree.children(s.self) {
		wg.Go(func() { _ = s.sendAbort(ctx, s.downHops(c), c, TypeDown, missing) })
	}
	wg.Wait()
}

// abort tells the parent and the children at once (and, at the root, the
// children waiting for its commitment) that the attempt failed for want
// of missing, so nobody waits for this party in vain.
func (s *latticeAgg) abort(ctx context.Context, missing []string) {
	s.withdrawCommit(ctx)
	if parent := s.tree.parent(s.self); parent != "" {
		_ = s.sendAbort(ctx, s.upHops(s.self), parent, TypeUp, missing)
	}
	s.abortDown(ctx, missing)
}
