package secureagg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/paillier"
)

// DefaultFanout is the k of the k-ary tree when Config.Fanout is zero.
const DefaultFanout = 4

// defaultHop is the per-hop wait when neither Config.Timeout nor the step's
// timeout is set.
const defaultHop = 10 * time.Second

// Config is one party's configuration of an aggregation. Every party of a
// step must pass the same FracBits, ValueBits, Fanout, Decryptors and Noise
// and a vector of the same length; a mismatch is detected and reported (the
// mismatching party is named missing), not summed.
type Config struct {
	// Backend is the cryptosystem: BackendPaillier (the default, also "")
	// or BackendLattice; a job's "auto" is resolved before (Choose). Every
	// party must pass the same.
	Backend Backend
	// Keys is this party's share of the consortium's threshold Paillier
	// key (keyring.ReadPaillier), for the Paillier backend.
	Keys *Keys
	// Lattice is this party's share of the consortium's lattice key
	// (keyring.ReadLattice), for the lattice backend.
	Lattice *lattice.Keys
	// FracBits is the fixed-point precision: x is encoded as round(x·2^FracBits).
	FracBits int
	// ValueBits bounds every party's encoded inputs: |round(x·2^FracBits)| <
	// 2^ValueBits. The packing reserves room for the sum of N such values,
	// and a decrypted slot beyond N·2^ValueBits (plus noise) is an error.
	ValueBits int
	// Fanout is the k of the k-ary tree (DefaultFanout when zero). Larger k
	// means a shallower tree but more bytes sent by inner nodes.
	Fanout int
	// Noise, when set, adds differential-privacy noise inside the sum.
	Noise *Noise
	// Decryptors is how many parties the root asks for decryption shares
	// up front: 0 means every party (the default, so every bad share is
	// found and named at once); t+1..N asks the root and the parties
	// nearest it, and asks the others only if some of those fail, which
	// saves N−Decryptors share computations and proofs per round at the
	// cost of an extra round trip after a failure.
	Decryptors int
	// Timeout is the per-hop budget: how long one tree hop (a party's
	// encryption, share computation, or message) may take before the party
	// waiting for it gives up. Waits are scaled by how many hops the awaited
	// message can be away. Zero derives it from step.Timeout() so that the
	// whole aggregation fits within the step's timeout, or uses 10 s.
	Timeout time.Duration
	// Random is the randomness for encryption, proofs and noise; nil means
	// crypto/rand. Tests may pass a deterministic reader.
	Random io.Reader
	// Randomizers, when set and Random is not, is the node's pool of
	// encryption randomisers for Keys (keyring.PaillierRandomizers, which
	// Configure asks): the Paillier backend encrypts with the randomisers
	// it has ready, so its encryptions cost a multiplication each on the
	// round's critical path, and computes the rest itself. The
	// ciphertexts are distributed as without it.
	Randomizers *paillier.RandomizerPool
	// LatticeZeros, when set, is the node's pool of encryptions of zero
	// under Lattice (keyring.LatticeZeros, which Configure asks): the
	// lattice backend encrypts its vector by adding it to the ones the
	// pool has ready, so that public-key encryption leaves the round's
	// critical path, and computes the rest itself; its decryption shares
	// take their smudging noise from the pool likewise. The ciphertexts
	// and shares are distributed as without it (lattice.ZeroPool).
	LatticeZeros *lattice.ZeroPool
}

// Result is what every party gets back.
type Result struct {
	// Sum is the sum of the Included parties' input vectors (plus noise,
	// when asked for), decoded from fixed point.
	Sum []float64 `json:"sum"`
	// Included are the parties whose inputs are in Sum: every party of the
	// step, since an attempt with a missing input fails with MissingError.
	Included []string `json:"included"`
	// Excluded names the parties excluded from decryption and why (no share
	// in time, malformed share, invalid proof). Their inputs are still in
	// Sum: they were excluded after the aggregate was formed.
	Excluded map[string]string `json:"excluded,omitempty"`
	// Noise records the privacy budget spent, when noise was added.
	Noise *NoiseReport `json:"noise,omitempty"`
}

// MissingError ends an attempt that cannot produce a result for this party:
// some parties did not deliver their subtree's ciphertexts in time, sent
// malformed ones, or could not encode their own input (named by the root and
// every party the abort reaches), or this party's parent never passed the
// total or the result down (named by the parties below it). A parent cannot
// drop a subtree silently (the sum would quietly omit live parties), so the
// attempt fails and names the parties, and the coordinator re-runs the step
// without them. If some party returned a Result, that result is valid and
// complete for its Included parties and the coordinator may use it instead.
type MissingError struct {
	Parties []string // sorted
	// Formed is set when the party saw the step's total formed before the
	// attempt failed (its parent never passed the result down): a
	// decryption may have happened, so the step must not be re-run over
	// fewer parties.
	Formed bool
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("secureagg: attempt failed for want of %s; re-run the step without them", strings.Join(e.Parties, ", "))
}

// Errors callers can test with errors.Is.
var (
	// ErrRange is a value outside the declared bound: an input at the party
	// that holds it, or a decrypted sum (which means some party's input was
	// out of range or the computation was corrupted).
	ErrRange = errors.New("secureagg: value out of declared range")
	// ErrTooFewShares means fewer than t+1 valid decryption shares arrived.
	ErrTooFewShares = errors.New("secureagg: too few valid decryption shares")
	// ErrRoot wraps a failure reported by the root to the other parties.
	ErrRoot = errors.New("secureagg: aggregation failed at the root")
	// ErrTampered means the total a party was asked to decrypt is not the
	// product of the step's contributions as their senders sent them.
	ErrTampered = errors.New("secureagg: the total was tampered with")
)

// Root is the party at the root of a step's tree, which forms the total
// and combines the decryption shares: the first of the step's parties, in
// sorted order, that is not the step's coordinator. The coordinator is
// never trusted to combine (it would learn whatever it had decrypted); it
// is placed at a leaf, where it relays nothing. A step whose only party is
// its coordinator is rooted there.
func Root(step job.Step) string {
	parties := slices.Sorted(slices.Values(step.Parties))
	for _, p := range parties {
		if p != step.Coordinator {
			return p
		}
	}
	return step.Coordinator
}

// Aggregate sums the parties' vectors. Every party in step.Parties calls it
// with the same step and an equivalent cfg; each gets the same Result.
//
// The root of the tree is Root(step): never the coordinator while another
// party takes part. Kinds aggregate their data through Contribute, which
// asks the node's policy first. The protocol (see the package doc): encrypt own packed
// input; multiply in the children's subtree products and send the product
// up; the root sends the total down; everyone sends the root a decryption
// share with its proof; the root verifies, combines t+1 valid shares,
// checks the range and sends the result down.
func Aggregate(ctx context.Context, p job.Party, step job.Step, cfg Config, input []float64) (*Result, error) {
	return aggregate(ctx, StepNetwork(p, step), step, cfg, input)
}

// aggregate is Aggregate over net: step says who takes part and what the
// digests and proofs are bound to, net carries the messages.
func aggregate(ctx context.Context, net Network, step job.Step, cfg Config, input []float64) (*Result, error) {
	switch cfg.Backend {
	case BackendLattice:
		b, s, err := newLatticeRun(net, step, cfg, len(input))
		if err != nil {
			return nil, err
		}
		return runTree(ctx, s, b, input)
	case "", BackendPaillier:
		b, s, err := newPaillierRun(net, step, cfg, len(input))
		if err != nil {
			return nil, err
		}
		if err := precompute(ctx, cfg.Keys, b.count); err != nil {
			return nil, err
		}
		s.stage.start = time.Now() // the schedule's clock starts once the table is built
		return runTree(ctx, s, b, input)
	}
	return nil, fmt.Errorf("secureagg: backend %q: resolve it with Choose", cfg.Backend)
}

// newLatticeRun lays out one party's schedule on the lattice backend
// (latticeExtra hops more than the Paillier one) and its backend of n
// values on the schedule's stage.
func newLatticeRun(net Network, step job.Step, cfg Config, n int) (*latticeAgg, *schedule, error) {
	s, err := newSchedule(net, step, cfg, latticeExtra)
	if err != nil {
		return nil, nil, err
	}
	b, err := newLatticeAgg(s.stage, cfg, n)
	return b, s, err
}

// newPaillierRun lays out one party's schedule on the Paillier backend and
// its backend of n values on the schedule's stage.
func newPaillierRun(net Network, step job.Step, cfg Config, n int) (*paillierAgg, *schedule, error) {
	s, err := newSchedule(net, step, cfg, 0)
	if err != nil {
		return nil, nil, err
	}
	b, err := newPaillierAgg(s.stage, cfg, n)
	return b, s, err
}

// Withdraw takes this party out of an aggregation it cannot contribute to
// (its input could not be read): it tells its parent and children at once,
// so they name it missing and the coordinator re-runs the step without it,
// instead of everyone waiting out the timeout. It returns cause.
func Withdraw(ctx context.Context, p job.Party, step job.Step, cfg Config, cause error) error {
	return withdraw(ctx, StepNetwork(p, step), step, cfg, cause)
}

// withdraw is Withdraw over net.
func withdraw(ctx context.Context, net Network, step job.Step, cfg Config, cause error) error {
	var s *schedule
	var f frames
	var err error
	if cfg.Backend == BackendLattice {
		if s, err = newSchedule(net, step, cfg, latticeExtra); err == nil {
			err = checkLatticeKey(s.stage, cfg.Lattice)
		}
		if err != nil {
			return fmt.Errorf("%w (and %w)", cause, err)
		}
		f, err = blobAbort([]string{s.self})
	} else {
		var p *paillierAgg
		if p, s, err = newPaillierRun(net, step, cfg, 1); err != nil {
			return errors.Join(cause, err)
		}
		f, err = p.aborted([]string{s.self})
	}
	if err != nil {
		return errors.Join(cause, err)
	}
	ctx, cancel := s.within(ctx, s.totalHops())
	defer cancel()
	s.abort(ctx, f)
	s.announce(ctx, false) // it makes no share: the others need not wait to learn so
	return cause
}
