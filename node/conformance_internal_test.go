package node

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/job/runner/runnertest"
)

// raftLogs is three members' raftLogs (the runtime's view of a node's
// log: apply, the Raft FSM) over real hashicorp/raft. Raft's in-memory
// transport and stores stand in for libp2p and bbolt, which have their own
// tests, and no reconcile loop runs, so nothing but the suite commits.
type raftLogs struct {
	nodes  []*Node
	obs    chan raft.Observation
	leader int
}

func (c *raftLogs) Leader() runner.Log {
	return raftLog{c.nodes[c.leader].fsm, c.nodes[c.leader].consensus}
}

// Elect transfers leadership to the next member and waits, as the node
// does before it coordinates, until the new leader has applied every entry
// committed before; and until the old one knows it was deposed.
func (c *raftLogs) Elect(ctx context.Context) error {
	old := c.nodes[c.leader].Raft()
	next := (c.leader + 1) % len(c.nodes)
	target := c.nodes[next].Raft()
	id := raft.ServerID(fmt.Sprint(next))
	if err := old.LeadershipTransferToServer(id, raft.ServerAddress(id)).Error(); err != nil {
		return fmt.Errorf("leadership transfer: %w", err)
	}
	if err := c.await(ctx, func() bool { return target.State() == raft.Leader && old.State() != raft.Leader }); err != nil {
		return err
	}
	c.leader = next
	return target.Barrier(10 * time.Second).Error()
}

// await waits until cond holds, rechecking at every change of any
// member's Raft state or leader.
func (c *raftLogs) await(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-c.obs:
		case <-ctx.Done():
			return fmt.Errorf("raft: %w", ctx.Err())
		}
	}
	return nil
}

// newRaftLogs starts three Raft members over the node's FSM; the first
// bootstraps alone and adds the others, so it leads.
func newRaftLogs(t *testing.T) *raftLogs {
	c := &raftLogs{obs: make(chan raft.Observation, 64)}
	var trans []*raft.InmemTransport
	for i := range 3 {
		_, tr := raft.NewInmemTransport(raft.ServerAddress(fmt.Sprint(i)))
		trans = append(trans, tr)
	}
	for i, a := range trans {
		for j, b := range trans {
			if i != j {
				a.Connect(b.LocalAddr(), b)
			}
		}
	}
	for i, tr := range trans {
		rc := raft.DefaultConfig()
		rc.LocalID = raft.ServerID(fmt.Sprint(i))
		rc.Logger = hclog.NewNullLogger()
		// A loaded machine must not depose the leader between the suite's
		// steps: only Elect does.
		rc.HeartbeatTimeout, rc.ElectionTimeout, rc.LeaderLeaseTimeout = 2*time.Second, 2*time.Second, time.Second
		rc.CommitTimeout = 5 * time.Millisecond
		store, snaps := raft.NewInmemStore(), raft.NewInmemSnapshotStore()
		if i == 0 {
			boot := raft.Configuration{Servers: []raft.Server{{ID: rc.LocalID, Address: tr.LocalAddr()}}}
			if err := raft.BootstrapCluster(rc, store, store, snaps, tr, boot); err != nil {
				t.Fatal(err)
			}
		}
		n := &Node{fsm: newFSM()}
		r, err := raft.NewRaft(rc, n.fsm, store, store, snaps, tr)
		if err != nil {
			t.Fatal(err)
		}
		n.consensus = &consensus{raft: r}
		t.Cleanup(func() {
			if err := r.Shutdown().Error(); err != nil {
				t.Error(err)
			}
		})
		r.RegisterObserver(raft.NewObserver(c.obs, false, nil))
		c.nodes = append(c.nodes, n)
	}
	first := c.nodes[0].Raft()
	if err := c.await(t.Context(), func() bool { return first.State() == raft.Leader }); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 3; i++ {
		id := raft.ServerID(fmt.Sprint(i))
		if err := first.AddVoter(id, raft.ServerAddress(id), 0, 0).Error(); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// The node's Raft log keeps the runtime's log contract.
func TestRaftLogConforms(t *testing.T) {
	t.Parallel()
	runnertest.TestLog(t, newRaftLogs(t))
}

// A commit refused because leadership is moving is a deposition: the
// coordinator stops quietly and the next leader resumes the job.
func TestApplyDuringTransferIsDeposed(t *testing.T) {
	t.Parallel()
	for _, err := range []error{raft.ErrNotLeader, raft.ErrLeadershipLost, raft.ErrLeadershipTransferInProgress, raft.ErrRaftShutdown} {
		if !errors.Is(deposed(err), errNotLeader) {
			t.Errorf("%v is not a deposition", err)
		}
	}
	if errors.Is(deposed(raft.ErrEnqueueTimeout), errNotLeader) {
		t.Error("a timeout is taken for a deposition")
	}
}
