package node_test

import (
	"context"
	"testing"
	"time"

	"github.com/cohortdm/cohort/api"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
)

// One signed submission committed twice (a leader that lost its
// leadership after appending it, and Submit trying again through the next)
// is one job: the second commit finds the first's id. It used to be a
// second job under a new id, which the parties refused as a replayed
// submission, so the submitter was handed a failed job (41 of 1,000 jobs
// in a loaded 500-job run with 36 elections).
func TestOneSubmissionIsOneJob(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3, job.Registry{"probe": &prober{}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.MakeLeader(ctx, "org1"); err != nil {
		t.Fatal(err)
	}
	leader := c.Node("org1")
	first, second, err := node.CommitTwice(leader, proberSpec(names(3), "{rounds: 1}"))
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Fatalf("one submission made two jobs: %s and %s", first, second)
	}
	rec, err := leader.Wait(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != node.StatusDone {
		t.Fatalf("job %s: %s", rec.Status, rec.Error)
	}
	if jobs := leader.Jobs(api.JobQuery{}); len(jobs) != 1 {
		t.Fatalf("%d jobs listed, want 1", len(jobs))
	}
}
