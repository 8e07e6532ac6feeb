package publish

import (
	"context"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/internal/testkit/nodewatch"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
)

// refusedNodes runs the job on real nodes with hub coordinating as lead
// does, and checks that it fails with the party's refusal holding every
// text of want, that the party sent hub the public results of the steps
// in sent alone, and that no customer id is anywhere.
func refusedNodes(t *testing.T, lead func(context.Context, job.Coordinator) (job.Result, error), sent map[string]int, want ...string) {
	t.Helper()
	data := basketsCSV(120, 9)
	s := writeSpec(t, "baskets.csv", data, "  h: 0.6\n  k: 5\n  p: 2\n  private: [s0, s1, s2]\n  public_fraction: 0.8\n  seed: 5\n")
	r := runNodes(t, s, policy.Default(), nodewatch.Watch{Kind: Kind{}, Lead: lead})
	r.Capture.Mu.Lock()
	text := r.Rec.Error + "\n" + strings.Join(r.Capture.Failures, "\n")
	r.Capture.Mu.Unlock()
	if r.Rec.Status == node.StatusDone {
		t.Fatalf("the job is %s under a lying coordinator", r.Rec.Status)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("failure %q does not hold %q", text, w)
		}
	}
	r.ledger(t, "shop", sent)
	r.noneHolds(t, tids(data))
}

// A lying coordinator that asks for the publication without drawing the
// joint seed (so that the spec's seed, or its own choice, would decide
// which items are public) is refused over real nodes: the party names the
// step, the log's missing commitments and the coordinator, and sends
// nothing but the refusal.
func TestCoordinatorMustDrawSeedNodes(t *testing.T) {
	t.Parallel()
	refusedNodes(t, skipSeedKind{}.Coordinate, nil,
		"party shop refuses coherence round 0", "0 seed-commit records of round 0", "coordinator hub")
}

// A lying coordinator that commits a commitment in the party's name that
// is not the party's own is refused over real nodes: the party names the
// step, its commitment and the coordinator, and never opens its
// contribution (the ledger holds its commitment alone).
func TestForgedCommitmentNodes(t *testing.T) {
	t.Parallel()
	refusedNodes(t, nodewatch.ForgeSeedCommitments(jointSeed), map[string]int{job.PhaseSeedCommit: 1},
		"party shop refuses seed-reveal round 0", job.ErrSeedNotOwn.Error(), "coordinator hub")
}
