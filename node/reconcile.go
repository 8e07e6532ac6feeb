package node

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/hashicorp/raft"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
)

// The reconcile loop: every node makes itself do what the Raft log says.
// It is level-triggered: each pass compares the running jobs in the log
// with what this node is doing (coordinations while it leads, one worker per
// job it takes part in) and starts or stops work to match. A node acts only
// once it has applied what its own log held at start, so a restart never
// starts work for a job that finished long ago.

// unknownJobGrace is how long messages for a job this node has not applied
// yet are kept: a party may send before the job's submission reaches us,
// but a job id nobody committed must not hold memory.
const unknownJobGrace = 30 * time.Second

// defaultMaxJobs is how many jobs a leader coordinates at once when the
// node's config does not say: half the cores, at least one. A job's
// cryptography keeps every core busy, so more at once only makes each
// slower and starves Raft's heartbeats.
func defaultMaxJobs() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// reconcileLoop runs until the node closes.
func (n *Node) reconcileLoop() {
	defer n.wg.Done()
	obs := make(chan raft.Observation, 16)
	observer := raft.NewObserver(obs, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.RaftState)
		return ok
	})
	n.consensus.raft.RegisterObserver(observer)
	defer n.consensus.raft.DeregisterObserver(observer)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		leader := n.observeRaft()
		if n.caughtUp() {
			n.reconcile(leader)
		}
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

// caughtUp reports whether the node has applied every entry its log held
// when it started, and, once a leader is known, every entry the leader has
// sent it. Until then the state is a half-replayed past: jobs that finished
// long ago still look running, and a restarted party would re-run steps the
// others finished while it was down. Raft's AppliedIndex moves when entries
// are handed to the FSM, before Apply runs, so the FSM's own count decides.
func (n *Node) caughtUp() bool {
	if n.ready {
		return true
	}
	if _, leader := n.consensus.raft.LeaderWithID(); leader == "" {
		return false
	}
	target := max(n.consensus.startIndex, n.consensus.raft.LastIndex())
	if n.consensus.raft.AppliedIndex() < target || n.fsm.applied.Load() < n.consensus.lastCommandIndex(target) {
		return false
	}
	n.ready = true
	n.log.Info("caught up with the log", "index", target)
	return true
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
	for _, w := range n.workers {
		w.stop()
	}
}

// observeRaft records Raft's state in the metrics and the log, and reports
// whether this node leads.
func (n *Node) observeRaft() bool {
	state := n.consensus.raft.State()
	n.metrics.setRaftState(state.String())
	if state != n.lastState {
		n.log.Info("raft state changed", "from", n.lastState.String(), "to", state.String())
		n.lastState = state
	}
	return state == raft.Leader
}

func (n *Node) reconcile(leader bool) {
	active := n.fsm.jobs.Active()
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	live := make(map[string]bool, len(active))
	// Coordination slots go first to jobs that have started (a previous
	// leader may have run more at once), then to queued jobs in order.
	for _, started := range []bool{true, false} {
		for _, j := range active {
			if (j.Steps > 0) != started {
				continue
			}
			_, coordinating := n.coordinating[j.ID]
			switch {
			case leader && !coordinating && len(n.coordinating) < n.maxJobs:
				n.startCoordinating(j.ID)
			case !leader && coordinating:
				n.coordinating[j.ID].cancel()
				delete(n.coordinating, j.ID)
			}
		}
	}
	for _, j := range active {
		live[j.ID] = true
		var mine []job.Step
		for _, s := range j.Open {
			if slices.Contains(s.Parties, n.cfg.Name) {
				mine = append(mine, s)
			}
		}
		w := n.workers[j.ID]
		if w == nil {
			if len(mine) == 0 {
				continue
			}
			w = n.newWorker(j)
			n.workers[j.ID] = w
		}
		w.want(mine)
	}
	// Jobs that ended (or vanished) release everything at once.
	for id, co := range n.coordinating {
		if !live[id] {
			co.cancel()
			delete(n.coordinating, id)
		}
	}
	for id, w := range n.workers {
		if !live[id] {
			if st, ok := n.fsm.jobs.Status(id); ok && st != StatusRunning {
				w.end()
			} else {
				w.stop()
			}
			delete(n.workers, id)
		}
	}
	if !n.swept {
		n.sweepScratch()
		n.swept = true
	}
	for id := range n.progress {
		if !live[id] {
			delete(n.progress, id)
		}
	}
	n.dropUndeliverable(live)
}

// dropUndeliverable discards queued messages nobody will receive: for jobs
// that ended, and for jobs this node has not seen committed within
// unknownJobGrace of the message's arrival. live is the running jobs when
// reconcile began; a job the FSM applied since then is asked about afresh,
// so a message that arrives as its job is applied is kept, not dropped (its
// step would otherwise wait for it until the step's timeout).
func (n *Node) dropUndeliverable(live map[string]bool) {
	n.ms.box.DropUnless(func(jobID string, at time.Time) bool {
		if live[jobID] {
			return true
		}
		if status, known := n.fsm.jobs.Status(jobID); known {
			return status == StatusRunning
		}
		return time.Since(at) < n.unknownJobGrace
	})
}

// startCoordinating starts Coordinate for a job; n.mu is held.
func (n *Node) startCoordinating(id string) {
	ctx, cancel := context.WithCancel(n.ctx)
	co := &coordination{cancel: cancel}
	n.coordinating[id] = co
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.coordinate(ctx, id)
		cancel()
		n.mu.Lock()
		if n.coordinating[id] == co {
			delete(n.coordinating, id)
		}
		n.mu.Unlock()
		n.fsm.notify() // a slot is free: start the next queued job
	}()
}

// acceptMessage refuses messages that can no longer be received: for a
// finished job, or for an attempt older than the step's latest.
func (n *Node) acceptMessage(m *protocol.Message) error {
	s, status, ok := n.fsm.jobs.Step(m.Job, m.Phase, m.Round)
	if !ok {
		return nil // the job may not be applied here yet; kept for a grace period
	}
	if status != StatusRunning {
		return fmt.Errorf("%w: job %s is %s", errStale, m.Job, status)
	}
	if s != nil && m.Attempt < s.Attempt {
		return fmt.Errorf("%w: attempt %d of step %s/%d superseded by %d", errStale, m.Attempt, m.Phase, m.Round, s.Attempt)
	}
	return nil
}
