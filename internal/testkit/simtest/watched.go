package simtest

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/internal/testkit/nodewatch"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// Watched is one job run over real nodes with its kind watched at every
// node (nodewatch): the cluster, what was captured, where the ledgers
// are, and the job's id and record once it ended.
type Watched struct {
	Cluster *sim.Cluster
	Capture *nodewatch.Capture
	Audit   string // the nodes' audit ledgers, PARTY.jsonl
	ID      string
	Rec     *node.JobRecord
}

// steadyLeaderMS is RunWatched's Raft heartbeat and election timeout
// unless opts set them: long enough that the leader it chose keeps the
// lead through a loaded moment, so that refusals name that coordinator.
const steadyLeaderMS = 2000

// RunWatched starts members with kind (its name in specs) watched as w at
// every node, leader campaigning at start and made to lead, submits spec
// through leader and waits, on events and for three minutes at most, for
// the job's end, then closes the cluster: what the leakage and
// hostile-coordinator tests over real nodes share. opts gives the rest
// (timing, policy, tables, keys); its KindsFor, AuditDir, Logger and
// Campaign are set here, and Raft's timeouts to steadyLeaderMS unless
// given.
func RunWatched(tb testing.TB, members []string, leader, kind string, w nodewatch.Watch, spec []byte, opts sim.ClusterOptions) *Watched {
	tb.Helper()
	return RunWatchedJobs(tb, members, leader, kind, w, [][]byte{spec}, opts)[0]
}

// RunWatchedJobs is RunWatched for several jobs on one cluster, each
// spec submitted once the job before it ended, all within the three
// minutes: what a test of a bound over jobs (an allowance) needs. The
// jobs share the cluster, the capture and the ledgers; each Watched has
// its own job's ID and Rec, and its checks look at its own job only.
func RunWatchedJobs(tb testing.TB, members []string, leader, kind string, w nodewatch.Watch, specs [][]byte, opts sim.ClusterOptions) []*Watched {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	shared := Watched{Capture: &nodewatch.Capture{}, Audit: filepath.Join(tb.TempDir(), "audit")}
	opts.KindsFor, opts.AuditDir, opts.Logger, opts.Campaign = shared.Capture.Registry(kind, w), shared.Audit, shared.Capture.Logger(), leader
	if opts.Timing.HeartbeatMS == 0 && opts.Timing.ElectionMS == 0 {
		opts.Timing.HeartbeatMS, opts.Timing.ElectionMS = steadyLeaderMS, steadyLeaderMS
	}
	shared.Cluster = StartCluster(tb, ctx, members, opts)
	if err := shared.Cluster.MakeLeader(ctx, leader); err != nil {
		tb.Fatal(err)
	}
	var runs []*Watched
	for _, spec := range specs {
		r := shared
		r.ID, r.Rec = SubmitWait(tb, ctx, r.Cluster.Node(leader), spec)
		runs = append(runs, &r)
	}
	// Closed before the test looks: every capture, ledger and Raft store
	// is final, and a test that holds the capture's lock while it looks
	// cannot block a node that logs as it stops (Close waits for it).
	if err := shared.Cluster.Close(); err != nil {
		tb.Fatal(err)
	}
	return runs
}

// SubmitWait submits spec at n and waits for the job's end, failing tb
// on an error of either.
func SubmitWait(tb testing.TB, ctx context.Context, n *node.Node, spec []byte) (string, *node.JobRecord) {
	tb.Helper()
	id, err := n.Submit(ctx, spec)
	if err != nil {
		tb.Fatal(err)
	}
	rec, err := n.Wait(ctx, id)
	if err != nil {
		tb.Fatal(err)
	}
	return id, rec
}

// Refused checks that the job failed in step phase/round, each of
// parties among the step's failed and its failure text holding each of
// want, with PARTY in want read as the party's name: a lying coordinator
// refused by every party it lied to.
func (w *Watched) Refused(tb testing.TB, phase string, round int, parties []string, want ...string) {
	tb.Helper()
	if w.Rec.Status != node.StatusFailed {
		tb.Fatalf("the job is %s, not refused: %s", w.Rec.Status, w.Rec.Error)
	}
	i := slices.IndexFunc(w.Rec.Steps, func(s *runner.StepRecord) bool { return s.Phase == phase && s.Round == round })
	if i < 0 || !w.Rec.Steps[i].Done {
		tb.Fatalf("%s round %d did not end: %q", phase, round, w.Rec.Error)
	}
	for _, p := range parties {
		if !slices.Contains(w.Rec.Steps[i].Failed, p) {
			tb.Errorf("%s round %d failed at %v, not at %s", phase, round, w.Rec.Steps[i].Failed, p)
		}
		for _, s := range want {
			s = strings.ReplaceAll(s, "PARTY", p)
			if why := w.Rec.Failures[p]; !strings.Contains(why, s) {
				tb.Errorf("%s's failure %q does not say %q", p, why, s)
			}
		}
	}
}

// Undisclosed checks that none of parties output anything in step
// phase/round or in any step of the phases also names, and that each
// one's ledger holds, in those steps, control alone, with its report of
// the refused step to coordinator among it (so the ledger does record the
// step: a check that checks something; the coordinator's report to
// itself is no message), and the policy's decision on the job.
func (w *Watched) Undisclosed(tb testing.TB, phase string, round int, parties []string, coordinator string, also ...string) {
	tb.Helper()
	w.undisclosed(tb, phase, round, parties, coordinator, false, also)
}

// NoOutput is Undisclosed for a step in which parties exchanged messages
// before they refused (a test decryption whose share does not verify):
// it checks their outputs alone, none captured and, in each one's
// ledger, its report to coordinator control alone; messages between the
// parties in the step may disclose what the step's protocol has them
// disclose.
func (w *Watched) NoOutput(tb testing.TB, phase string, round int, parties []string, coordinator string, also ...string) {
	tb.Helper()
	w.undisclosed(tb, phase, round, parties, coordinator, true, also)
}

func (w *Watched) undisclosed(tb testing.TB, phase string, round int, parties []string, coordinator string, outputsOnly bool, also []string) {
	tb.Helper()
	in := func(ph string, r int) bool { return ph == phase && r == round || slices.Contains(also, ph) }
	w.Capture.Mu.Lock()
	for _, o := range w.Capture.Outputs {
		if o.Job == w.ID && slices.Contains(parties, o.Party) && in(o.Phase, o.Round) && o.Body != nil {
			tb.Errorf("%s output %d bytes in %s/%d (the refused step %s/%d)", o.Party, len(o.Body), o.Phase, o.Round, phase, round)
		}
	}
	w.Capture.Mu.Unlock()
	for _, p := range parties {
		entries, err := audit.ReadFile(filepath.Join(w.Audit, p+".jsonl"))
		if err != nil {
			tb.Fatal(err)
		}
		reported, decided := p == coordinator, false
		for _, e := range entries {
			decided = decided || e.Job == w.ID && e.Type == audit.DecisionType
			if e.Job != w.ID || !in(e.Phase, e.Round) || outputsOnly && e.Type != runner.OutputType {
				continue
			}
			if e.Disclosure != string(wire.DiscloseControl) {
				tb.Errorf("%s's ledger: %s to %s disclosing %q in %s/%d (the refused step %s/%d)", p, e.Type, e.Peer, e.Disclosure, e.Phase, e.Round, phase, round)
			}
			reported = reported || e.Phase == phase && e.Round == round && e.Type == runner.OutputType && e.Peer == coordinator
		}
		if !reported {
			tb.Errorf("%s's ledger holds no report of the refused step %s/%d to %s: the check checks nothing", p, phase, round, coordinator)
		}
		if !decided {
			tb.Errorf("%s's ledger holds no policy decision on the job", p)
		}
	}
}
