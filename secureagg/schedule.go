package secureagg

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/cohortdm/cohort/job"
)

// schedule is what both backends share of one party's aggregation, and
// neither owns: the step and this party's place in its tree, the clock
// every wait is measured on, the sends that give up when the recipient
// would stop waiting, and the root's commitment to its own input
// (commit.go). A backend adds its key and what its messages carry.
type schedule struct {
	net     Network
	step    job.Step
	self    string
	tree    *tree
	parties []string // sorted
	random  io.Reader
	start   time.Time
	hop     time.Duration // per-hop budget
	h       int           // height of the tree
	// extra is how many hops the backend's decryption adds after the
	// Paillier schedule's late shares (the lattice backend's blame plan:
	// 3), which delay the result and the end.
	extra int
	// rootCommit is the root's digest of its own input: its own, at the
	// root; as received before sending up, at a child of the root.
	rootCommit []byte
	// shape names what every party must agree on of the aggregation; a
	// blob's parts carry it (lattice_wire.go), and so do the Paillier
	// backend's ciphertext messages.
	shape string
	// partSize is how many bytes of a blob one message carries.
	partSize int
}

// newSchedule sorts the step's parties, checks that this party is one of
// them, and lays out the tree and the per-hop budget: cfg.Timeout, or else
// the step's timeout spread over the schedule's total hops.
func newSchedule(net Network, step job.Step, cfg Config, extra int) (*schedule, error) {
	s := &schedule{net: net, step: step, self: net.Self(), random: cfg.Random, start: time.Now(), extra: extra, partSize: defaultPartSize}
	if s.random == nil {
		s.random = rand.Reader
	}
	s.parties = slices.Sorted(slices.Values(step.Parties))
	if !slices.Contains(s.parties, s.self) {
		return nil, fmt.Errorf("secureagg: %s is not a party of step %s/%s/%d", s.self, step.Job, step.Phase, step.Round)
	}
	fanout := cfg.Fanout
	if fanout == 0 {
		fanout = DefaultFanout
	}
	root := Root(step)
	var err error
	if s.tree, err = newTree(s.parties, root, step.Coordinator, fanout); err != nil {
		return nil, err
	}
	s.h = s.tree.height(root)
	s.hop = cfg.Timeout
	if s.hop <= 0 {
		s.hop = defaultHop
		if st := step.Timeout(); st > 0 {
			s.hop = st / time.Duration(s.totalHops())
		}
	}
	return s, nil
}

// The schedule, in hops from start. A subtree of height h delivers its
// product within h+1 hops (each level adds one hop of encryption or
// transfer); the total needs H+1 hops to form at the root (H the tree's
// height) and one more per level to reach a party; shares reach the root
// within 2H+3, or 2H+6 when the root has to ask more parties for shares;
// the result leaves the root within 2H+7 and reaches depth d within
// 2H+8+d; nothing takes longer than 3H+9 (the last two later by the
// backend's extra hops). A party waiting on a child thus
// gives up one hop after the child gave up on its own children, so it
// names the right party.
func (s *schedule) upHops(p string) int   { return s.tree.height(p) + 1 }
func (s *schedule) downHops(p string) int { return s.h + 1 + s.tree.depth(p) }
func (s *schedule) shareHops() int        { return 2*s.h + 3 }
func (s *schedule) lateShareHops() int    { return 2*s.h + 6 }
func (s *schedule) resultHops(p string) int {
	return 2*s.h + 8 + s.extra + s.tree.depth(p)
}
func (s *schedule) totalHops() int { return 3*s.h + 9 + s.extra }

// within returns ctx bounded by start + hops·hop: the latest time a message
// that is at most that many hops away can arrive.
func (s *schedule) within(ctx context.Context, hops int) (context.Context, context.CancelFunc) {
	return context.WithDeadline(ctx, s.start.Add(time.Duration(hops)*s.hop))
}

// backend is one cryptosystem's side of an aggregation: what runTree, the
// one tree schedule, asks of it at each stage, so that both backends run
// the same stages, waits and fault handling. C is what the backend sums
// (a party's or a subtree's ciphertexts), T what a party decrypts (the
// total, vetted).
type backend[C, T any] interface {
	// contribute checks, noises and encrypts this party's input.
	contribute(ctx context.Context, input []float64) (C, error)
	// component encodes the root's own contribution as it commits to it.
	component(own C) ([]byte, error)
	// gatherUp receives every child's subtree sum, each within the hops
	// its subtree may take, and adds it to own; it returns the sum, the
	// children's sums in order (where the down message carries them) and
	// the parties missing.
	gatherUp(ctx context.Context, own C, children []string) (acc C, parts []C, missing []string, err error)
	// upAndDown is a non-root party's middle: send the subtree's sum up,
	// receive the total's components from the parent, pass them down, and
	// vet them.
	upAndDown(ctx context.Context, acc C, missing []string) (T, error)
	// sendTotal is the root's middle: send the total's components down
	// (its own as committed, own), and return what it decrypts.
	sendTotal(ctx context.Context, own []byte, acc C, parts []C) (T, error)
	// finish decrypts (at the root) or shares and waits (elsewhere),
	// passes the result down and decodes it.
	finish(ctx context.Context, total T) (*Result, error)
	// abort tells the parent and the children (and, at the root, the
	// children waiting for its commitment) that the attempt failed for
	// want of missing; abortDown tells only the children.
	abort(ctx context.Context, missing []string)
	abortDown(ctx context.Context, missing []string)
	// wait returns once the backend's background sends have ended.
	wait()
}

// runTree is one party's aggregation on backend b: encrypt its input,
// gather its subtree's sum and send it up (the root, having committed to
// its own input first, forms the total), receive the total's components
// from above and check them, then share and decrypt.
func runTree[C, T any](ctx context.Context, s *schedule, b backend[C, T], input []float64) (*Result, error) {
	parent, children := s.tree.parent(s.self), s.tree.children(s.self)
	ctx, cancel := s.within(ctx, s.totalHops())
	defer func() { cancel(); b.wait() }()
	heard := s.listen(ctx)
	defer heard.stop()
	own, err := b.contribute(ctx, input)
	if err != nil {
		b.abort(ctx, []string{s.self})
		s.announce(ctx, false)
		return nil, err
	}
	var ownComp []byte // at the root: its own component, committed to now
	if parent == "" {
		if ownComp, err = b.component(own); err != nil {
			return nil, err
		}
		s.commitOwn(ctx, ownComp)
	}
	acc, parts, missing, err := b.gatherUp(ctx, own, children)
	if err != nil {
		return nil, s.unheld(ctx, heard, err)
	}
	var total T
	switch {
	case parent != "":
		total, err = b.upAndDown(ctx, acc, missing)
	case len(missing) > 0:
		b.abortDown(ctx, missing)
		err = &MissingError{Parties: missing}
	default:
		total, err = b.sendTotal(ctx, ownComp, acc, parts)
	}
	if err != nil {
		// This party never held the total: a decryptor's notice is how
		// it learns whether one was decrypted (formed.go).
		return nil, s.unheld(ctx, heard, err)
	}
	return b.finish(ctx, total)
}
