package node

import (
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/runner"
)

// A reopened replica knows the attempts whose start its log held when it
// started (runner.Rebooted), and no attempt started after.
func TestStartsBeforeBootRemembered(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	x, m, me := newTestMesh(t, "a")
	x.admit(&Consortium{Members: []Member{me}})
	start := func(c *consensus, attempt int) job.Step {
		t.Helper()
		s := job.Step{Job: "j1", Phase: "p", Attempt: attempt, Parties: []string{"a"}, Coordinator: "a", TimeoutMS: 60_000}
		if err := c.apply(&command{Entry: runner.Entry{Op: runner.OpStart, Job: "j1", Step: &s}}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	f := newFSM()
	c := newTestConsensus(t, dir, x, m, f, "a", false)
	awaitLeader(t.Context(), t, c)
	if err := c.apply(submitEntry("j1", "x")); err != nil {
		t.Fatal(err)
	}
	awaitJob(t.Context(), t, f, "j1", StatusRunning)
	first := start(c, 1)
	if f.startedBeforeBoot(first) {
		t.Fatal("an attempt started by this process counts as begun before it")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	f2 := newFSM()
	c2 := newTestConsensus(t, dir, x, m, f2, "a", false)
	defer c2.Close()
	awaitLeader(t.Context(), t, c2)
	awaitJob(t.Context(), t, f2, "j1", StatusRunning)
	second := start(c2, 2)
	if !f2.startedBeforeBoot(first) {
		t.Error("the attempt the log held at start is not known as begun before it")
	}
	if f2.startedBeforeBoot(second) {
		t.Error("an attempt started after the restart counts as begun before it")
	}
}
