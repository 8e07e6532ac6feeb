package probe

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// forgedCommitRound is the joint seed's first round as a coordinator that
// forges its decision runs it (the round's types are package job's).
var forgedCommitRound = job.Round[struct{}, job.SeedCommitment, job.SeedCommitments]{Phase: job.PhaseSeedCommit}

// grinding tries to choose the probe's public vectors: it skips the draw,
// so that the vectors would come from the job seed its node chose at
// submission, or replaces org2's commitment with one to a contribution of
// its own choice.
type grinding struct {
	Kind
	forge bool
}

func (k grinding) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	parties := c.Spec().PartyNames()
	call := job.Call[struct{}]{Parties: parties}
	if !k.forge {
		_, err := aggregate.Run(ctx, c, call, func(o *job.Outcome[output]) (decision, error) { return decide(c.Spec(), o) })
		return nil, err
	}
	js := jointSeed(c.JobID(), c.Spec())
	if _, err := forgedCommitRound.Run(ctx, c, call, func(o *job.Outcome[job.SeedCommitment]) (job.SeedCommitments, error) {
		var d job.SeedCommitments
		for _, p := range parties {
			cm := o.Results[p]
			if p == "org2" {
				cm = js.Commit(p, job.Contribution{1, 2, 3})
			}
			d.Commitments = append(d.Commitments, cm)
		}
		return d, o.Err()
	}); err != nil {
		return nil, err
	}
	_, err := js.Draw(ctx, c, 0) // the commit step is answered from the log: the reveal runs
	return nil, err
}

// TestCoordinatorCannotChooseSeed: over real nodes, a probe's public
// vectors come from a joint seed no party chose (issue 30, finding 12). A
// coordinator that skips the draw is refused by every party at the
// aggregation; one that replaces a party's commitment with its own is
// refused by that party at the reveal. Either way the refusal names the
// coordinator, and no party sent a ciphertext or a decryption share.
func TestCoordinatorCannotChooseSeed(t *testing.T) {
	t.Parallel()
	parties := []string{"org1", "org2", "org3"}
	const liar = "org9"
	for _, c := range []struct {
		name     string
		forge    bool
		phase    string
		refusers []string
	}{
		{"no draw", false, "aggregate", parties},
		{"forged commitment", true, job.PhaseSeedReveal, []string{"org2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cl := simtest.StartCluster(t, ctx, append(slices.Clone(parties), liar), sim.ClusterOptions{
				KindsFor: func(name string) job.Registry {
					if name == liar {
						return job.Registry{"probe": grinding{forge: c.forge}}
					}
					return job.Registry{"probe": Kind{}}
				},
				Setup: simtest.ThresholdKeys(keyBits), Timing: node.Timing{SendMS: 3000, StepMS: 60000},
			})
			if err := cl.MakeLeader(ctx, liar); err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(writeSpec(t, 3, "values: 40, backend: paillier"))
			if err != nil {
				t.Fatal(err)
			}
			id, err := cl.Node("org1").Submit(ctx, raw)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := cl.Node("org1").Wait(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Status == node.StatusDone {
				t.Fatalf("the job succeeded under a seed the coordinator chose: %s", rec.Result)
			}
			for _, p := range c.refusers {
				want := fmt.Sprintf("party %s refuses %s round 0", p, c.phase)
				if !strings.Contains(rec.Error, want) || !strings.Contains(rec.Error, "coordinator "+liar) {
					t.Errorf("the job's error %q does not say %q naming coordinator %s", rec.Error, want, liar)
				}
			}
			for _, p := range parties {
				entries, err := audit.ReadFile(cl.LedgerPath(p))
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range entries {
					if e.Job == id && (e.Type == secureagg.TypeShare || wire.Disclosure(e.Disclosure) == wire.DiscloseCiphertext) {
						t.Errorf("%s sent %s (%s) to %s under a seed the coordinator chose", p, e.Type, e.Disclosure, e.Peer)
					}
				}
			}
		})
	}
}
