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

// stage is what a backend may know of the schedule of one party's
// aggregation: the step and this party's place in its tree, the clock
// every deadline is measured on, the root's commitment to its own input
// as this party holds it (commit.go), and what every party must agree on
// of the messages. It has no network: a backend holds the stage, the
// schedule holds the stage and the network, and only the schedule sends.
type stage struct {
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
	// backend's ciphertext messages. The backend sets it.
	shape string
	// partSize is how many bytes of a blob one message carries.
	partSize int
}

// schedule is what both backends share of one party's aggregation, and
// neither owns: the stage, and the sends that give up when the recipient
// would stop waiting (schedule_net.go), the root's commitment (commit.go),
// the formed notices (formed.go) and the share exchange (exchange.go).
type schedule struct {
	*stage
	net Network
}

// newSchedule sorts the step's parties, checks that this party is one of
// them, and lays out the tree and the per-hop budget: cfg.Timeout, or else
// the step's timeout spread over the schedule's total hops.
func newSchedule(net Network, step job.Step, cfg Config, extra int) (*schedule, error) {
	s := &schedule{net: net, stage: &stage{step: step, self: net.Self(), random: cfg.Random, start: time.Now(), extra: extra, partSize: defaultPartSize}}
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
func (s *stage) upHops(p string) int   { return s.tree.height(p) + 1 }
func (s *stage) downHops(p string) int { return s.h + 1 + s.tree.depth(p) }
func (s *stage) shareHops() int        { return 2*s.h + 3 }
func (s *stage) lateShareHops() int    { return 2*s.h + 6 }
func (s *stage) resultHops(p string) int {
	return 2*s.h + 8 + s.extra + s.tree.depth(p)
}
func (s *stage) totalHops() int { return 3*s.h + 9 + s.extra }

// within returns ctx bounded by start + hops·hop: the latest time a message
// that is at most that many hops away can arrive.
func (s *schedule) within(ctx context.Context, hops int) (context.Context, context.CancelFunc) {
	return context.WithDeadline(ctx, s.at(hops))
}

// at is start + hops·hop.
func (s *stage) at(hops int) time.Time { return s.start.Add(time.Duration(hops) * s.hop) }
