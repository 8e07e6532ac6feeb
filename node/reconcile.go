package node

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/hashicorp/raft"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
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

// reconcileLoop runs until the runner's context ends.
func (r *jobRunner) reconcileLoop() {
	obs := make(chan raft.Observation, 16)
	observer := raft.NewObserver(obs, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.RaftState)
		return ok
	})
	r.Raft.raft.RegisterObserver(observer)
	defer r.Raft.raft.DeregisterObserver(observer)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		leader := r.observeRaft()
		if r.caughtUp() {
			r.reconcile(leader)
		}
		select {
		case <-r.ctx.Done():
			r.stopAll()
			return
		case <-r.FSM.changed:
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
func (r *jobRunner) caughtUp() bool {
	if r.ready {
		return true
	}
	c := r.Raft
	if c.leader() == "" {
		return false
	}
	target := max(c.startIndex, c.raft.LastIndex())
	if c.raft.AppliedIndex() < target || r.FSM.applied.Load() < c.lastCommandIndex(target) {
		return false
	}
	r.ready = true
	r.Log.Info("caught up with the log", "index", target)
	return true
}

// coordination is one running Coordinate goroutine; it removes itself when
// it ends, so a node that loses and regains leadership resumes the job.
type coordination struct{ cancel context.CancelFunc }

func (r *jobRunner) stopAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.coordinating {
		c.cancel()
	}
	for _, w := range r.workers {
		w.stop()
	}
}

// observeRaft records Raft's state in the metrics and the log, and reports
// whether this node leads.
func (r *jobRunner) observeRaft() bool {
	state := r.Raft.raft.State()
	r.Metrics.setRaftState(state.String())
	r.Metrics.raftTerm.Set(float64(r.Raft.raft.CurrentTerm()))
	if state != r.lastState {
		r.Log.Info("raft state changed", "from", r.lastState.String(), "to", state.String())
		r.lastState = state
	}
	return state == raft.Leader
}

func (r *jobRunner) reconcile(leader bool) {
	active := r.FSM.jobs.Active()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctx.Err() != nil {
		return // closing: start nothing more
	}
	live := make(map[string]bool, len(active))
	// Coordination slots go first to jobs that have started (a previous
	// leader may have run more at once), then to queued jobs in order.
	for _, started := range []bool{true, false} {
		for _, j := range active {
			if (j.Steps > 0) != started {
				continue
			}
			_, coordinating := r.coordinating[j.ID]
			switch {
			case leader && !coordinating && len(r.coordinating) < r.MaxJobs:
				r.startCoordinating(j.ID)
			case !leader && coordinating:
				r.coordinating[j.ID].cancel()
				delete(r.coordinating, j.ID)
			}
		}
	}
	for _, j := range active {
		live[j.ID] = true
		var mine []job.Step
		for _, s := range j.Open {
			if slices.Contains(s.Parties, r.Self) {
				mine = append(mine, s)
			}
		}
		w := r.workers[j.ID]
		if w == nil {
			if len(mine) == 0 {
				continue
			}
			w = r.newWorker(j)
			r.workers[j.ID] = w
		}
		w.want(mine)
	}
	// Jobs that ended (or vanished) release everything at once.
	for id, co := range r.coordinating {
		if !live[id] {
			co.cancel()
			delete(r.coordinating, id)
		}
	}
	for id, w := range r.workers {
		if !live[id] {
			if st, ok := r.FSM.jobs.Status(id); ok && st != StatusRunning {
				w.end()
			} else {
				w.stop()
			}
			delete(r.workers, id)
		}
	}
	if r.Busy != nil {
		r.Busy(len(r.workers) > 0)
	}
	if !r.swept {
		r.sweepScratch()
		r.swept = true
	}
	r.Progress.keep(live)
	r.dropUndeliverable(live)
}

// dropUndeliverable discards queued messages nobody will receive: for jobs
// that ended, and for jobs this node has not seen committed within
// unknownJobGrace of the message's arrival. live is the running jobs when
// reconcile began; a job the FSM applied since then is asked about afresh,
// so a message that arrives as its job is applied is kept, not dropped (its
// step would otherwise wait for it until the step's timeout).
func (r *jobRunner) dropUndeliverable(live map[string]bool) {
	r.Box.DropUnless(func(jobID string, at time.Time) bool {
		if live[jobID] {
			return true
		}
		if status, known := r.FSM.jobs.Status(jobID); known {
			return status == StatusRunning
		}
		return time.Since(at) < r.UnknownJobGrace
	})
}

// startCoordinating starts Coordinate for a job; r.mu is held.
func (r *jobRunner) startCoordinating(id string) {
	ctx, cancel := context.WithCancel(r.ctx)
	co := &coordination{cancel: cancel}
	r.coordinating[id] = co
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.coordinate(ctx, id)
		cancel()
		r.mu.Lock()
		if r.coordinating[id] == co {
			delete(r.coordinating, id)
		}
		r.mu.Unlock()
		r.FSM.notify() // a slot is free: start the next queued job
	}()
}

// acceptMessage refuses messages that can no longer be received: for a
// finished job, or for an attempt older than the step's latest.
func (n *Node) acceptMessage(m *wire.Message) error {
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
