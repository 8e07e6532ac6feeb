package modelselect

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/hamdist"
	"github.com/cohortdm/cohort/internal/testkit/nodewatch"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// runWatched runs the example on east, north and south under the default
// policy with the watched kind, east coordinating, and returns the record.
func runWatched(t *testing.T, c *nodewatch.Capture, w nodewatch.Watch) *node.JobRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cl := simtest.StartCluster(t, ctx, []string{"east", "north", "south"}, sim.ClusterOptions{
		KindsFor: c.Registry("model-select", w), TablesDir: exampleDir, Timing: timing, Logger: c.Logger(), Policy: policy.Default(),
	})
	if err := cl.MakeLeader(ctx, "east"); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	n := cl.Node("east")
	id, err := n.Submit(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := n.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// A hostile coordinator that asks for the scores again (round 1) once
// they are committed, to have more counts of the labels formed, is
// refused by both parties before any id or ciphertext leaves.
func TestHostileCoordinator(t *testing.T) {
	again := func(ctx context.Context, co job.Coordinator) (job.Result, error) {
		res, err := Kind{}.Coordinate(ctx, co)
		if err != nil {
			return nil, err
		}
		call := job.Call[scoreArgs]{Round: 1, Parties: co.Spec().PartyNames()}
		if _, err := scoreRound.Run(ctx, co, call, func(o *job.Outcome[scoreOutput]) (scoreDecision, error) {
			return scoreDecision{}, o.Err()
		}); err == nil {
			return nil, errors.New("a second score round ran")
		}
		return res, nil
	}
	var c nodewatch.Capture
	rec := runWatched(t, &c, nodewatch.Watch{Kind: Kind{}, Lead: again})
	if rec.Status != node.StatusDone {
		t.Fatalf("job %s: %s", rec.Status, rec.Error)
	}
	c.Mu.Lock()
	defer c.Mu.Unlock()
	for _, s := range c.Sent {
		if s.M.Round == 1 && s.D != wire.DiscloseControl {
			t.Errorf("%s sent %s in the second round", s.From, s.M.Type)
		}
	}
	refused := 0
	for _, f := range c.Failures {
		if strings.Contains(f, "model-select has one step, score round 0") {
			refused++
		}
	}
	if refused < 2 {
		t.Errorf("failures %q: want both parties' refusals", c.Failures)
	}
}

// A label holder that swaps its blinded comparisons' run key (as a stale
// run would) fails the job: the predictions holder refuses them, no
// scores are committed.
func TestHostileMember(t *testing.T) {
	stale := hamdist.GenerateKey().Public()
	swap := func(m *wire.Message) *wire.Message {
		if m.Type != hamdist.TypeBlinded {
			return m
		}
		cp := *m
		var err error
		if cp.Body, err = hamdist.EncodeChunk(stale, nil, 0, hamdist.ChunkSize); err != nil {
			panic(err)
		}
		return &cp
	}
	var c nodewatch.Capture
	rec := runWatched(t, &c, nodewatch.Watch{Kind: Kind{}, Corrupter: "south", Corrupt: swap})
	if rec.Status == node.StatusDone || !strings.Contains(rec.Error, "another run") {
		t.Fatalf("job %s: %q, want the stale run refused", rec.Status, rec.Error)
	}
	c.Mu.Lock()
	defer c.Mu.Unlock()
	for _, d := range c.Decisions {
		if d != nil {
			t.Errorf("a decision was committed: %x", d)
		}
	}
}
