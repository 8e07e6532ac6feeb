package node

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/cohortdm/cohort/job/runner"
)

// newTestConsensus starts a replica for x's member self of cons in dir;
// the test closes it.
func newTestConsensus(t *testing.T, dir string, x *mesh, m *metrics, f *fsm, self string, join bool) *consensus {
	t.Helper()
	c, err := newConsensus(t.Context(), consensusConfig{
		DataDir: dir, Self: self, Timing: Timing{}.withDefaults(), Host: x.host, MemberName: x.gater.name,
		Members: x.members, Refused: m.raftRefused, FSM: f, Join: join, Log: discard(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// awaitLeader waits until c leads.
func awaitLeader(ctx context.Context, t *testing.T, c *consensus) {
	t.Helper()
	for !c.isLeader() {
		select {
		case <-c.raft.LeaderCh():
		case <-ctx.Done():
			t.Fatal("never elected")
		}
	}
}

// awaitJob waits until f has applied job id.
func awaitJob(ctx context.Context, t *testing.T, f *fsm, id string, want string) {
	t.Helper()
	for {
		changed := f.jobs.Watch()
		if st, ok := f.jobs.Status(id); ok && st == want {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			st, _ := f.jobs.Status(id)
			t.Fatalf("job %s is %q, want %q", id, st, want)
		}
	}
}

func submitEntry(id, kind string) *command {
	return &command{Entry: runner.Entry{Op: runner.OpSubmit, Job: id, Spec: []byte("kind: " + kind + "\nparties: [{name: a}]\n")}}
}

// A replica bootstraps its member set, commits while it leads, refuses to
// commit once shut down, and reopened from its directory replays its log
// without bootstrapping again.
func TestConsensusLifecycle(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	x, m, me := newTestMesh(t, "a")
	x.admit(&Consortium{Members: []Member{me}})
	f := newFSM()
	c := newTestConsensus(t, dir, x, m, f, "a", false)
	awaitLeader(t.Context(), t, c)
	if c.leader() != "a" || !slices.Equal(c.voters(), []string{"a"}) {
		t.Fatalf("leader %q, voters %v", c.leader(), c.voters())
	}
	if err := c.apply(submitEntry("j1", "x")); err != nil {
		t.Fatal(err)
	}
	awaitJob(t.Context(), t, f, "j1", StatusRunning)
	c.shutdown()
	if err := c.apply(submitEntry("j2", "x")); !errors.Is(err, errNotLeader) {
		t.Fatalf("apply after shutdown: %v, want errNotLeader", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	f2 := newFSM()
	c2 := newTestConsensus(t, dir, x, m, f2, "a", false)
	defer c2.Close()
	if c2.startIndex == 0 {
		t.Fatal("a reopened log starts empty")
	}
	awaitLeader(t.Context(), t, c2)
	awaitJob(t.Context(), t, f2, "j1", StatusRunning)
	if got := c2.lastCommandIndex(c2.raft.LastIndex()); got == 0 || got > c2.raft.LastIndex() {
		t.Fatalf("last command at %d of %d", got, c2.raft.LastIndex())
	}
}

// A joining replica with no state is not bootstrapped: it waits for a
// leader to add it, with no configuration of its own.
func TestConsensusJoinWaits(t *testing.T) {
	t.Parallel()
	x, m, me := newTestMesh(t, "a")
	x.admit(&Consortium{Members: []Member{me}})
	c := newTestConsensus(t, t.TempDir(), x, m, newFSM(), "a", true)
	if v := c.voters(); len(v) != 0 || c.startIndex != 0 {
		t.Fatalf("a joining replica has voters %v, start index %d", v, c.startIndex)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}
