package node

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"github.com/cohortdm/cohort/protocol"
)

// The reconcile loop: every node makes itself do what the Raft log says.

// reconcileLoop makes this node do what the log says: coordinate running
// jobs while it leads, and run the steps it takes part in.
func (n *Node) reconcileLoop() {
	defer n.wg.Done()
	obs := make(chan raft.Observation, 16)
	observer := raft.NewObserver(obs, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.RaftState)
		return ok
	})
	n.raft.RegisterObserver(observer)
	defer n.raft.DeregisterObserver(observer)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		n.reconcile()
		select {
		case <-n.ctx.Done():
			n.stopAll()
			return
		case <-n.fsm.changed:
		case <-obs:
		case <-tick.C:
		}
	}
}

// coordination is one running Coordinate goroutine; it removes itself when
// it ends, so a node that loses and regains leadership resumes the job.
type coordination struct{ cancel context.CancelFunc }

func (n *Node) stopAll() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, c := range n.coordinating {
		c.cancel()
	}
	for _, c := range n.participating {
		c()
	}
}

func (n *Node) reconcile() {
	state := n.raft.State()
	n.metrics.setRaftState(state.String())
	if state != n.lastState {
		n.log.Info("raft state changed", "from", n.lastState.String(), "to", state.String())
		n.lastState = state
	}
	leader := state == raft.Leader
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	for _, j := range n.fsm.jobs() {
		co, coordinating := n.coordinating[j.ID]
		switch {
		case j.Status != StatusRunning:
			if n.cleaned[j.ID] {
				continue
			}
			if coordinating {
				co.cancel()
				delete(n.coordinating, j.ID)
			}
			for id, c := range n.participating {
				if id.job == j.ID {
					c()
					delete(n.participating, id)
				}
			}
			for id := range n.finished {
				if id.job == j.ID {
					delete(n.finished, id)
				}
			}
			delete(n.progress, j.ID)
			n.ms.box.drop(j.ID)
			n.cleaned[j.ID] = true
			continue
		case leader && !coordinating:
			ctx, cancel := context.WithCancel(n.ctx)
			co := &coordination{cancel: cancel}
			n.coordinating[j.ID] = co
			n.wg.Add(1)
			go func() {
				defer n.wg.Done()
				n.coordinate(ctx, j.ID)
				cancel()
				n.mu.Lock()
				if n.coordinating[j.ID] == co {
					delete(n.coordinating, j.ID)
				}
				n.mu.Unlock()
			}()
		case !leader && coordinating:
			co.cancel()
			delete(n.coordinating, j.ID)
		}
		for _, s := range j.Steps {
			id := stepID{j.ID, s.Phase, s.Round, s.Attempt}
			for old, c := range n.participating { // a newer attempt or a finished step supersedes
				if old.job == id.job && old.phase == id.phase && old.round == id.round && (old.attempt < id.attempt || s.Done()) {
					c()
					delete(n.participating, old)
				}
			}
			if s.Done() || n.finished[id] || !contains(s.Step.Parties, n.cfg.Name) {
				continue
			}
			if _, running := n.participating[id]; running {
				continue
			}
			ctx, cancel := context.WithCancel(n.ctx)
			n.participating[id] = cancel
			n.wg.Add(1)
			go n.participate(ctx, j, s.Step, id)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// acceptMessage refuses messages that can no longer be received: for a
// finished job, or for an attempt older than the step's latest.
func (n *Node) acceptMessage(m *protocol.Message) error {
	j, ok := n.fsm.job(m.Job)
	if !ok {
		return nil // the job may not be applied here yet; it is dropped with the job later
	}
	if j.Status != StatusRunning {
		return fmt.Errorf("%w: job %s is %s", errStale, m.Job, j.Status)
	}
	if s := j.step(m.Phase, m.Round); s != nil && m.Attempt < s.Attempt {
		return fmt.Errorf("%w: attempt %d of step %s/%d superseded by %d", errStale, m.Attempt, m.Phase, m.Round, s.Attempt)
	}
	return nil
}
