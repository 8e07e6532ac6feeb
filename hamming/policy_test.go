package hamming

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/nodewatch"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// A node whose policy does not grant the distance form to attribute
// columns refuses the job before a row is read: the job fails naming the
// node's refusal, and neither party sends a blinded id or a ciphertext.
func TestPolicyRefusesDistance(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	strict := policy.Default()
	grant := policy.Grant{}
	for f, to := range strict.Columns["attribute"] {
		if f != wire.DiscloseDistance {
			grant[f] = to
		}
	}
	strict.Columns["attribute"] = grant
	var c nodewatch.Capture
	cl := simtest.StartCluster(t, ctx, []string{"east", "north", "south"}, sim.ClusterOptions{
		KindsFor: c.Registry("hamming", nodewatch.Watch{Kind: Kind{}}), TablesDir: exampleDir, Timing: timing, Logger: c.Logger(),
		PolicyFor: func(name string) *policy.Policy {
			if name == "south" {
				return strict
			}
			return policy.Default()
		},
	})
	n := cl.Node("north")
	rec, err := n.Wait(ctx, submit(t, ctx, n, exampleSpec))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status == node.StatusDone || !strings.Contains(rec.Error, "south") || !strings.Contains(rec.Error, "distance") {
		t.Fatalf("job %s: %q, want south's refusal of the distance form", rec.Status, rec.Error)
	}
	c.Mu.Lock()
	defer c.Mu.Unlock()
	for _, s := range c.Sent {
		if s.D == wire.DiscloseDistance || s.D == wire.DisclosePSIBlinded {
			t.Errorf("%s sent %s after south's refusal", s.From, s.M.Type)
		}
	}
	t.Logf("refused: %s", rec.Error)
}
