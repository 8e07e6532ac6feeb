package node_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sim"
)

// A node keeps nothing per job once the job has ended, beyond its record
// in the replicated state: after many finished jobs its workers,
// coordinations, progress entries, queued messages and goroutines are back where they were after the first job (issue 36's
// "memory flat"; it caught the messenger's count of bytes sent per job,
// kept for every job and read by nothing). The jobs run a few at a time,
// as a queue's would.
func TestFinishedJobsLeaveNothingBehind(t *testing.T) {
	const jobs = 40
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := simtest.StartCluster(t, ctx, names(3), sim.ClusterOptions{Kinds: job.Registry{"noop": &noop{}}, MaxJobs: 4})
	defer c.Close()
	spec := noopSpec(names(3), 2)
	run := func(n int) {
		t.Helper()
		leader, err := c.WaitLeader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, n)
		for i := range ids {
			if ids[i], err = leader.Submit(ctx, spec); err != nil {
				t.Fatal(err)
			}
		}
		for _, nd := range c.Running() { // every member, not only the leader, applies the end
			for _, id := range ids {
				if rec, err := nd.Wait(ctx, id); err != nil || rec.Status != node.StatusDone {
					t.Fatalf("%s: job %s: %v %+v", nd.Name(), id, err, rec)
				}
			}
		}
	}
	run(1) // the first job dials the members and warms the caches
	base, goroutines := settled(ctx, t, c, nil, -1)
	run(jobs)
	// One goroutine (or more) left behind per job would leave jobs more.
	settled(ctx, t, c, base, goroutines+jobs/4)
}

// settled waits until no node holds a worker, coordination, progress
// entry or queued message any more, each node's other per-job state is
// as in base (unless base is nil) and, unless most is negative, the
// process runs at most most goroutines; it returns each node's state and
// the goroutine count then. It waits on the nodes' own pace (their
// reconcile loops drop an ended job's work at the next pass), failing
// only when two minutes pass without that.
func settled(ctx context.Context, t *testing.T, c *sim.Cluster, base map[string]node.Retained, most int) (map[string]node.Retained, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		held, now := "", map[string]node.Retained{}
		for _, n := range c.Running() {
			r := node.RetainedOf(n)
			now[n.Name()] = r
			idle := r.Workers == 0 && r.Coordinating == 0 && r.Progress == 0 && r.Queued == 0
			if b, ok := base[n.Name()]; !idle || base != nil && (!ok || r != b) {
				held += fmt.Sprintf(" %s: %+v (after the first job: %+v);", n.Name(), r, base[n.Name()])
			}
		}
		g := runtime.NumGoroutine()
		if held == "" && (most < 0 || g <= most) {
			return now, g
		}
		select {
		case <-ctx.Done():
			t.Fatalf("still held after every job ended:%s goroutines %d (want at most %d)", held, g, most)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
