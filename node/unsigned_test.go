package node_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sum"
)

// A leader that commits a job nobody signed (running other code than
// Cohort's) gets nothing: every party's policy refuses it at admission,
// before a row is read, naming the rule (issue 30, finding 10: a
// submission was checked only when present).
func TestUnsignedJobRefused(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ex := filepath.Join("..", "examples", "sum")
	spec, err := os.ReadFile(filepath.Join(ex, "spec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := job.ParseSpec(spec, "spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := simtest.StartCluster(t, ctx, parsed.PartyNames(), sim.ClusterOptions{
		Kinds: job.Registry{"sum": sum.Kind{}}, TablesDir: ex, Setup: simtest.ThresholdKeys(keyBits),
		Policy: policy.Default(),
	})
	defer c.Close()
	// Under load the leader may change while it commits: commit again
	// through the new one (a job the old one did commit is refused as
	// well, and the test follows the last).
	var leader *node.Node
	var id string
	for {
		if leader, err = c.WaitLeader(ctx); err != nil {
			t.Fatal(err)
		}
		if id, err = node.CommitUnsigned(leader, spec); err == nil {
			break
		}
		if !strings.Contains(err.Error(), "not the leader") { // node's errNotLeader: deposed while committing
			t.Fatal(err)
		}
	}
	rec, err := leader.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != node.StatusFailed {
		t.Fatalf("the unsigned job %s: %s", rec.Status, rec.Result)
	}
	for _, p := range parsed.PartyNames() {
		if want := p + ": rule submission: job " + id + " carries no signed submission"; !strings.Contains(rec.Error, want) {
			t.Errorf("the failure %q does not say %q", rec.Error, want)
		}
	}
}
