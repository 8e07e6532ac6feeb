package node

import (
	"bytes"
	"io"
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/runner"
)

// A reopened replica knows the attempts whose start its log held when it
// started (runner.Rebooted), and no attempt started after.
func TestStartsBeforeBootRemembered(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	x, m, f, c := soloJob(t, dir)
	first := startAttempt(t, c, 1)
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
	second := startAttempt(t, c2, 2)
	if !f2.startedBeforeBoot(first) {
		t.Error("the attempt the log held at start is not known as begun before it")
	}
	if f2.startedBeforeBoot(second) {
		t.Error("an attempt started after the restart counts as begun before it")
	}
}

// An attempt open in the snapshot Raft restores as the replica starts is
// known as begun before it too: its start entry is inside the snapshot, so
// Apply never sees it.
func TestStartsInRestoredSnapshotRemembered(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	x, m, _, c := soloJob(t, dir)
	open := startAttempt(t, c, 1)
	if err := c.raft.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	f2 := newFSM()
	c2 := newTestConsensus(t, dir, x, m, f2, "a", false)
	defer c2.Close()
	if open := f2.jobs.Open("j1", "a"); len(open) != 1 {
		t.Fatalf("the restored snapshot holds %d open attempts of j1, want 1", len(open))
	}
	if !f2.startedBeforeBoot(open) {
		t.Error("the attempt open in the snapshot restored at start is not known as begun before it")
	}
	awaitLeader(t.Context(), t, c2)
	later := startAttempt(t, c2, 2)
	// A snapshot installed by the leader after the start (here f2's own).
	if err := f2.Restore(snapshotOf(t, f2)); err != nil {
		t.Fatal(err)
	}
	if f2.startedBeforeBoot(later) {
		t.Error("an attempt in a snapshot installed after the start counts as begun before it")
	}
}

// soloJob starts a one-member replica "a" in dir and commits a running
// job j1 through it.
func soloJob(t *testing.T, dir string) (*mesh, *metrics, *fsm, *consensus) {
	t.Helper()
	x, m, me := newTestMesh(t, "a")
	x.admit(&Consortium{Members: []Member{me}})
	f := newFSM()
	c := newTestConsensus(t, dir, x, m, f, "a", false)
	awaitLeader(t.Context(), t, c)
	if err := c.apply(submitEntry("j1", "x")); err != nil {
		t.Fatal(err)
	}
	awaitJob(t.Context(), t, f, "j1", StatusRunning)
	return x, m, f, c
}

// startAttempt commits the start of an attempt of j1's step "p" through c.
func startAttempt(t *testing.T, c *consensus, attempt int) job.Step {
	t.Helper()
	s := job.Step{Job: "j1", Phase: "p", Attempt: attempt, Parties: []string{"a"}, Coordinator: "a", TimeoutMS: 60_000}
	if err := c.apply(&command{Entry: runner.Entry{Op: runner.OpStart, Job: "j1", Step: &s}}); err != nil {
		t.Fatal(err)
	}
	return s
}

// snapshotOf is f's snapshot as Raft would persist and read it back.
func snapshotOf(t *testing.T, f *fsm) io.ReadCloser {
	t.Helper()
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var sink bufferSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	return io.NopCloser(&sink.Buffer)
}

// bufferSink is a raft.SnapshotSink in memory.
type bufferSink struct{ bytes.Buffer }

func (*bufferSink) ID() string    { return "test" }
func (*bufferSink) Cancel() error { return nil }
func (*bufferSink) Close() error  { return nil }
