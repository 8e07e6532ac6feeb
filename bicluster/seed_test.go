package bicluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/bicluster"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/wire"
)

// seedless is a coordinator that runs the schema step and then asks for
// iteration 0 under the order its own job seed gives (the leader chose
// that seed at submission), without drawing the joint seed.
type seedless struct{ bicluster.Kind }

// The rounds as a coordinator outside the package runs them: the args and
// decisions it needs, as the log encodes them.
type (
	schemaColumns struct {
		Columns []string `msgpack:"columns"`
	}
	orderArgs struct {
		Order []int `msgpack:"order"`
	}
)

var (
	seedlessSchema  = job.Round[struct{}, schemaColumns, schemaColumns]{Phase: "schema"}
	seedlessIterate = job.Round[orderArgs, struct{}, struct{}]{Phase: "iterate"}
)

func (seedless) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	call := job.Call[struct{}]{Parties: c.Spec().PartyNames()}
	done, err := seedlessSchema.Run(ctx, c, call, func(o *job.Outcome[schemaColumns]) (schemaColumns, error) {
		for _, out := range o.Results {
			return out, o.Err()
		}
		return schemaColumns{}, o.Err()
	})
	if err != nil {
		return nil, err
	}
	order := bicluster.InitialColumns(c.Seed(), len(done.Decision.Columns))
	_, err = seedlessIterate.Run(ctx, c, job.Call[orderArgs]{Parties: call.Parties, Args: orderArgs{Order: order}},
		func(o *job.Outcome[struct{}]) (struct{}, error) { return struct{}{}, o.Err() })
	return nil, err
}

// forgeCommitment is a coordinator that replaces victim's commitment to
// the joint seed with one to a contribution of its own choice, so that it
// would know, and could grind, the seed.
func forgeCommitment(victim string) lying {
	return lying{decision: func(step job.Step, d []byte) []byte {
		if step.Phase != job.PhaseSeedCommit {
			return d
		}
		var com job.SeedCommitments
		if err := wire.Unmarshal(d, &com); err != nil {
			return d
		}
		js := job.NewJointSeed(step.Job, step.Round, step.Parties)
		for i, c := range com.Commitments {
			if c.Party == victim {
				com.Commitments[i] = js.Commit(victim, job.Contribution{1, 2, 3})
			}
		}
		b, err := wire.Marshal(&com)
		if err != nil {
			return d
		}
		return b
	}}
}

// TestSimCoordinatorCannotChooseSeed: over real nodes, the initial column
// order (and so the local biclusters) comes from a joint seed no party
// chose (issue 30, finding 12). A coordinator that skips the draw and asks
// for the order of the leader's job seed is refused by every party at
// iteration 0; one that replaces a party's commitment with its own is
// refused by that party at the reveal. Either way the refusal names the
// coordinator, and no party sent a ciphertext or a decryption share.
func TestSimCoordinatorCannotChooseSeed(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		kind     job.Kind
		phase    string
		refusers []string
	}{
		{"no draw", seedless{}, "iterate", []string{"org01", "org02", "org03"}},
		{"forged commitment", forgeCommitment("org02"), job.PhaseSeedReveal, []string{"org02"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec, parties, _ := levelConsortium(t, []float64{10, 10, 10}, []int{6, 6, 6})
			cl, id, rec := runUnderLiar(t, spec, parties, c.kind)
			for _, p := range c.refusers {
				want := fmt.Sprintf("party %s refuses %s round 0", p, c.phase)
				if !strings.Contains(rec.Error, want) || !strings.Contains(rec.Error, "coordinator "+liarName) {
					t.Errorf("the job's error %q does not say %q naming coordinator %s", rec.Error, want, liarName)
				}
			}
			for _, p := range parties {
				entries, err := audit.ReadFile(cl.LedgerPath(p))
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range entries {
					if e.Job != id {
						continue
					}
					if e.Type == secureagg.TypeShare || wire.Disclosure(e.Disclosure) == wire.DiscloseCiphertext {
						t.Errorf("%s sent %s (%s) to %s under a seed the coordinator chose", p, e.Type, e.Disclosure, e.Peer)
					}
				}
			}
		})
	}
}
