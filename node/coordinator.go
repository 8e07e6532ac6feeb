package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/wire"
)

// The coordinator side: while this node leads, the runtime's Coordinator
// (package job/runner) drives each running job over this node's Raft log
// and messenger. Coordinate runs from the top on every new leader; the
// runtime answers finished steps from the log and checks that the replayed
// step is the committed one.

// newCoordinator builds the runtime's coordinator for this node.
func (r *jobRunner) newCoordinator() *runner.Coordinator {
	return &runner.Coordinator{
		Self: r.Self, Kinds: r.Kinds, Log: r.Commit, Net: r.Net,
		Config:   r.Config(),
		Watch:    r.Watch,
		Progress: r.Progress.set,
		Logger:   r.Log,
		Committed: func(step job.Step, _ *job.Record, began time.Time) {
			r.Metrics.phaseSecs.WithLabelValues(r.FSM.jobs.Kind(step.Job), step.Phase).Observe(time.Since(began).Seconds())
		},
	}
}

// runtimeConfig is the runtime's timeouts on this node: its Timing's step
// and send timeouts (checked when the node was made), and its policy's
// approval timeout.
func (n *Node) runtimeConfig() runner.Config {
	c := runner.DefaultConfig()
	c.StepTimeout = time.Duration(n.timing.StepMS) * time.Millisecond
	c.Grace = time.Duration(n.timing.SendMS) * time.Millisecond
	c.ApprovalTimeout = max(n.policy.ApprovalTimeout(), time.Millisecond) // a step holds milliseconds
	return c
}

// coordinate drives one job while this node leads.
func (r *jobRunner) coordinate(ctx context.Context, jobID string) {
	// A new leader holds every committed entry but may not have applied
	// them all yet; the barrier makes the state it resumes from complete.
	if err := r.Raft.raft.Barrier(10 * time.Second).Error(); err != nil {
		r.Log.Info("not coordinating: barrier failed", "job", jobID, "err", err)
		return
	}
	kind := r.FSM.jobs.Kind(jobID)
	_, _, err := r.coord.Run(ctx, jobID)
	switch {
	case err == nil:
		r.Metrics.jobs.WithLabelValues(kind, StatusDone).Inc()
	case ctx.Err() != nil || errors.Is(err, runner.ErrDeposed):
		// deposed, cancelled or stopping: the log decides what follows
	default:
		r.Log.Error("job failed", "job", jobID, "err", err)
		r.Metrics.jobs.WithLabelValues(kind, StatusFailed).Inc()
	}
}

// raftLog is the runtime's view of this node's Raft log.
type raftLog struct {
	fsm *fsm
	c   *consensus
}

func (l raftLog) State() *runner.State { return l.fsm.jobs }

func (l raftLog) Commit(ctx context.Context, e *runner.Entry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := l.c.apply(&command{Entry: *e})
	if errors.Is(err, errNotLeader) {
		return fmt.Errorf("%w: %w", runner.ErrDeposed, err)
	}
	return err
}

// netParty is the runtime's view of this node's messenger.
type netParty struct{ n *Node }

func (p netParty) Self() string { return p.n.cfg.Name }
func (p netParty) Send(ctx context.Context, to string, m *wire.Message, d wire.Disclosure) error {
	return p.n.ms.send(ctx, to, m, d)
}
func (p netParty) Receive(ctx context.Context, from string, k wire.Key) (*wire.Message, error) {
	return p.n.ms.box.Get(ctx, from, k)
}

// SendUnrecorded reports a failure that keeps this node from recording
// what it sends (runner.UnrecordedSender).
func (p netParty) SendUnrecorded(ctx context.Context, to string, m *wire.Message) error {
	return p.n.ms.sendFailure(ctx, to, m)
}
