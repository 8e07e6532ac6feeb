package secureagg

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/wire"
)

// The lattice backend runs the same tree, schedule and fault handling as
// the Paillier backend, with package lattice's multiparty BGV in place of
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
//     (lattice.Decryptor.TargetFromSketches): it decrypts the step's aggregate
//     of every party's input, with its own in it, or nothing
//     (ErrTampered).
//  3. Shares: every party in a quorum of the plan sends the root one
//     decryption share per quorum it is in (lattice.PlanVerified: quorums that
//     no single member is in all of). The root re-plans without parties
//     whose shares did not come (a share request, Seq 1), and when the
//     quorums' decryptions disagree it asks the blame plan (Seq 2), which
//     names the maker of a wrong share.
//  4. Result: the root sends the agreed plaintext down the tree; every
//     party decodes and range-checks it itself.
//
// The files here compute what those messages carry and nothing else: the
// backend holds the schedule's stage, not its network, and runTree
// (rounds.go) and the share exchange (exchange.go) do every send and wait.

// latticeAgg is one party's state for one aggregation on the lattice
// backend: its stage of the schedule, the lattice key, the layout, and the
// context that every ciphertext and share of the step names.
type latticeAgg struct {
	*stage
	keys   *lattice.Keys
	zeros  *lattice.ZeroPool // the node's, or nil (Config.LatticeZeros)
	layout *lattice.Layout
	mctx   lattice.Context
	agg    *lattice.Aggregator
	dec    *lattice.Decryptor
	points map[string]int // each party's Shamir point
	inBits int            // |round(x·2^FracBits)| < 2^inBits, before noise
	noise  *NoiseReport
	// ownDigest is the digest of this party's own contribution, which
	// must be in whatever it helps decrypt.
	ownDigest lattice.Digest
	// sketchKey is this party's secret for checking the total
	// (lattice_sketch.go).
	sketchKey lattice.SketchKey
	// acc is this party's subtree sum: its own contribution, into which
	// child adds each child's subtree sum as it arrives (under accMu:
	// the children's messages arrive at once).
	acc   *lattice.Aggregate
	accMu sync.Mutex
}

// The lattice schedule adds two share rounds to the Paillier one: the
// shares of a re-planned decryption reach the root within 2H+6 hops (as a
// Paillier share request's), those of the blame plan within 2H+9, the
// result leaves the root within 2H+10 and reaches depth d within 2H+11+d,
// and nothing takes longer than 3H+12: latticeExtra hops more than on the
// Paillier schedule.
const latticeExtra = 3

func (s *latticeAgg) blameHops() int { return 2*s.h + 9 }
func (s *latticeAgg) shareDeadline(seq int) int {
	return []int{s.shareHops(), s.lateShareHops(), s.blameHops()}[seq]
}

// checkLatticeKey checks a party's lattice key against the step of st.
func checkLatticeKey(st *stage, k *lattice.Keys) error {
	if k == nil || k.PublicKey == nil {
		return fmt.Errorf("%w: no lattice key", ErrKeys)
	}
	if k.Name() != st.self {
		return fmt.Errorf("%w: %s holds the lattice share of %s", ErrKeys, st.self, k.Name())
	}
	for _, q := range st.parties {
		if k.Point(q) == 0 {
			return fmt.Errorf("secureagg: party %s holds no share of the consortium's lattice key", q)
		}
	}
	if len(st.parties) < k.Quorum {
		return fmt.Errorf("%w: %d parties cannot reach the lattice key's quorum of %d", ErrTooFewShares, len(st.parties), k.Quorum)
	}
	return nil
}

// newLatticeAgg checks cfg's lattice key and fixed point against the step
// of st, and lays out n values.
func newLatticeAgg(st *stage, cfg Config, n int) (*latticeAgg, error) {
	if err := checkLatticeKey(st, cfg.Lattice); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("secureagg: empty input vector")
	}
	enc, err := planEncoding(len(st.parties), cfg)
	if err != nil {
		return nil, err
	}
	if err := enc.latticeFits(len(st.parties)); err != nil {
		return nil, err
	}
	k := cfg.Lattice
	s := &latticeAgg{stage: st, keys: k, zeros: cfg.LatticeZeros, inBits: cfg.ValueBits, noise: enc.noise, points: map[string]int{}}
	if s.layout, err = lattice.NewLayout(k.Params, n, cfg.FracBits, enc.bits(), len(s.parties)); err != nil {
		return nil, fmt.Errorf("secureagg: lattice layout: %w", err)
	}
	step := st.step
	phase := step.Phase
	if step.Channel != "" {
		phase += "/" + step.Channel
	}
	s.mctx = lattice.Context{Key: k.ID(), Job: step.Job, Phase: phase, Round: step.Round, Attempt: step.Attempt}
	s.agg = lattice.NewAggregator(k.PublicKey, s.layout)
	if s.dec, err = lattice.NewDecryptor(k); err != nil {
		return nil, err
	}
	if err := s.dec.UseNoise(cfg.LatticeZeros); err != nil {
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
	agg    *lattice.Aggregate // the root's only
	target *lattice.Target
}

// The lattice backend's rounds (backend, run by runTree; see the comment
// at the top).

var _ backend[*lattice.Aggregate, latticeTotal] = (*latticeAgg)(nil)

// contribute encrypts this party's input.
func (s *latticeAgg) contribute(_ context.Context, input []float64) (*lattice.Aggregate, error) {
	own, err := s.encrypt(input)
	if err != nil {
		return nil, err
	}
	s.ownDigest = own.Inputs[0].Digest
	s.acc = own
	return own, nil
}

// component is the root's own mask, which it commits to.
func (s *latticeAgg) component(own *lattice.Aggregate) ([]byte, error) {
	b, err := own.Mask().MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("secureagg: marshal a mask: %w", err)
	}
	return b, nil
}

// up is a subtree's sum as it travels up: a blob.
func (s *latticeAgg) up(acc *lattice.Aggregate) (frames, error) {
	f, err := marshalBlob(s.shape, acc, s.partSize)
	if err != nil {
		return nil, fmt.Errorf("secureagg: marshal the subtree sum: %w", err)
	}
	return f, nil
}

func (s *latticeAgg) aborted(missing []string) (frames, error) { return blobAbort(missing) }

// reader assembles an up message (a subtree's sum), a down message (the
// total's mask and the root's own) or the result.
func (s *latticeAgg) reader(typ string) reader {
	size := s.maxAggregate()
	switch typ {
	case TypeDown:
		size = downItems * s.maxMask()
	case TypeResult:
		size = 8*s.coeffs() + headerRoom
	}
	return newBlobReader(s.shape, size, s.partSize, s.parties)
}

// downItems is how many masks the down message holds: the total's and the
// root's own.
const downItems = 2

// child adds child c's subtree sum into this party's own, as it arrives,
// unless its abort named parties missing: the sum must hold exactly the
// inputs of c's subtree, of this step. It returns the accumulator, which
// now holds the child's sum. The coefficients are added straight from
// the message (lattice.Aggregator.AddBinary), with no aggregate decoded
// per child; a sum that is refused leaves the accumulator as it was (and
// names c missing, which ends the attempt). Own is not needed apart from
// the sum: the root has encoded its own mask already, and the down
// message carries no subtree's sum.
func (s *latticeAgg) child(data []byte, missing []string, c string) (*lattice.Aggregate, []string, error) {
	if len(missing) > 0 {
		return nil, missing, nil
	}
	want := s.pointsOf(s.tree.subtree(c))
	accept := func(ctx lattice.Context, in []lattice.Input) error {
		if ctx != s.mctx || !slices.Equal(inputParties(in), want) {
			return fmt.Errorf("%w: a subtree sum of other inputs or another step", wire.ErrMalformed)
		}
		return nil
	}
	s.accMu.Lock()
	defer s.accMu.Unlock()
	if err := s.agg.AddBinary(s.acc, data, accept); err != nil {
		return nil, nil, err
	}
	return s.acc, nil, nil
}

// addChild has nothing left to add: child added the subtree's sum into
// the accumulator, which is acc.
func (s *latticeAgg) addChild(acc *lattice.Aggregate, parts []*lattice.Aggregate, sum *lattice.Aggregate) (*lattice.Aggregate, []*lattice.Aggregate, error) {
	if sum != acc {
		return acc, parts, fmt.Errorf("secureagg: a subtree sum outside this party's accumulator")
	}
	return acc, parts, nil
}

// total is the root's down message, the total's mask and the root's own,
// and what the root decrypts: the total it formed, with the target of its
// shares (computed once the down message left, so that it delays no one).
func (s *latticeAgg) total(own []byte, acc *lattice.Aggregate, _ []*lattice.Aggregate) (frames, func() (latticeTotal, error), error) {
	mask := acc.Mask()
	b, err := mask.MarshalBinary()
	if err != nil {
		return nil, nil, fmt.Errorf("secureagg: marshal a mask: %w", err)
	}
	down, err := marshalBlob(s.shape, list{b, own}, s.partSize)
	if err != nil {
		return nil, nil, err
	}
	return down, func() (latticeTotal, error) {
		expect := lattice.Expect{Context: s.mctx, Shape: s.layout.Shape(), Committed: acc.Inputs, MinInputs: len(s.parties), Own: s.ownDigest}
		target, err := s.dec.Target(mask, expect)
		if err != nil {
			return latticeTotal{}, err
		}
		return latticeTotal{agg: acc, target: target}, nil
	}, nil
}

// components decodes the down message, unless its abort named parties
// missing.
func (s *latticeAgg) components(data []byte, missing []string) ([][]byte, []string, error) {
	if len(missing) > 0 {
		return nil, missing, nil
	}
	comps, err := decodeList(data, downItems)
	return comps, nil, err
}

// relay passes the down message on as it came.
func (s *latticeAgg) relay(data []byte, _ [][]byte) (frames, error) { return s.relayBlob(data) }

// encrypt checks, noises, encodes and encrypts this party's input. The
// checks are the Paillier path's: |round(x·2^FracBits)| < 2^ValueBits, and
// with noise the noisy value within the layout's bound.
func (s *latticeAgg) encrypt(input []float64) (*lattice.Aggregate, error) {
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
	enc, err := lattice.NewEncryptor(s.keys.PublicKey)
	if err != nil {
		return nil, err
	}
	if err := enc.UseZeros(s.zeros); err != nil {
		return nil, err
	}
	own, err := enc.EncryptInts(s.mctx, s.keys.Self, s.layout, v)
	if err != nil {
		return nil, fmt.Errorf("secureagg: encrypt: %w", err)
	}
	return own, nil
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

func inputParties(in []lattice.Input) []int {
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
