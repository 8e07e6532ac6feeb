package node

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/wire"
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

// An attempt whose start entry reaches the log after the boot index but
// was appended by the leader before the node began to take messages is
// begun before it (peers may have sent it messages the earlier instance
// lost); one appended after is not. A leader's clock behind this node's
// would flag every re-run of the step, so the clock flags one attempt
// per step.
func TestStartsAppendedBeforeStartRemembered(t *testing.T) {
	t.Parallel()
	f := newFSM()
	f.setBootIndex(1)
	start := time.Now()
	f.setStarted(start)
	index := uint64(1)
	apply := func(c *command, appended time.Time) {
		t.Helper()
		b, err := wire.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		index++
		if err, _ := f.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: b, AppendedAt: appended}).(error); err != nil {
			t.Fatal(err)
		}
	}
	attempt := func(round, n int, appended time.Time) job.Step {
		s := job.Step{Job: "j1", Phase: "p", Round: round, Attempt: n, Parties: []string{"a"}, Coordinator: "a", TimeoutMS: 60_000}
		apply(&command{Entry: runner.Entry{Op: runner.OpStart, Job: "j1", Step: &s}}, appended)
		return s
	}
	apply(submitEntry("j1", "x"), start.Add(-time.Minute))
	lost := attempt(0, 1, start.Add(-time.Second))
	if !f.startedBeforeBoot(lost) {
		t.Error("an attempt the leader appended before the node started is not known as begun before it")
	}
	if skewed := attempt(0, 2, start.Add(-time.Millisecond)); f.startedBeforeBoot(skewed) {
		t.Error("a second attempt of a step is flagged by the leader's clock: a clock behind would re-run it forever")
	}
	if later := attempt(1, 1, start.Add(time.Second)); f.startedBeforeBoot(later) {
		t.Error("an attempt the leader appended after the node started counts as begun before it")
	}
	if unknown := attempt(2, 1, time.Time{}); f.startedBeforeBoot(unknown) {
		t.Error("an attempt without AppendedAt counts as begun before the start")
	}
}
