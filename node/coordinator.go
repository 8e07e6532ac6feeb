package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/cohortdm/cohort/job"
)

// The coordinator side: driving a job while this node leads. Coordinate
// runs from the top on every new leader; Start answers finished steps from
// the log and checks that the replayed step is the committed one. Parties'
// outputs reach the coordinator as messages and stay in its memory; only
// the kind's public decision is committed.

// coordinate drives one job while this node leads.
func (n *Node) coordinate(ctx context.Context, jobID string) {
	// A new leader holds every committed entry but may not have applied
	// them all yet; the barrier makes the state it resumes from complete.
	if err := n.raft.Barrier(10 * time.Second).Error(); err != nil {
		n.log.Info("not coordinating: barrier failed", "job", jobID, "err", err)
		return
	}
	j, ok := n.fsm.job(jobID)
	if !ok || j.Status != StatusRunning {
		return
	}
	c := &coordinator{party: party{n: n, id: jobID, seed: j.Seed}}
	spec, kind, err := n.jobSpec(j.Kind, jobID, j.Spec)
	var res job.Result
	if err == nil {
		c.spec = spec
		res, err = kind.Coordinate(ctx, c)
	}
	if ctx.Err() != nil || errors.Is(err, errNotLeader) {
		return // deposed, cancelled or stopping: the log decides what follows
	}
	if err == nil {
		var b []byte
		b, err = n.assembleResult(jobID, spec, res)
		if err == nil {
			err = n.apply(&command{Op: opFinish, Job: jobID, Result: b})
			if err == nil {
				n.metrics.jobs.WithLabelValues(spec.Kind, StatusDone).Inc()
			}
			if err == nil || errors.Is(err, errNotLeader) {
				return
			}
		}
	}
	n.log.Error("job failed", "job", jobID, "err", err)
	n.metrics.jobs.WithLabelValues(j.Kind, StatusFailed).Inc()
	fail := &command{Op: opFail, Job: jobID, Error: err.Error(), Failures: c.lastFailures()}
	if aerr := n.apply(fail); aerr != nil && !errors.Is(aerr, errNotLeader) {
		n.log.Error("could not record job failure", "job", jobID, "err", aerr)
	}
}

// lastFailures returns the parties that failed in the latest attempt this
// coordinator waited for, or else in the job's latest finished step, with
// their errors, so a failed job names them.
func (c *coordinator) lastFailures() map[string]string {
	c.mu.Lock()
	failed := maps.Clone(c.failed)
	c.mu.Unlock()
	if len(failed) > 0 {
		return failed
	}
	h := c.n.fsm.history(c.id)
	for i := len(h) - 1; i >= 0; i-- {
		if len(h[i].Failed) > 0 {
			return maps.Clone(h[i].Failed)
		}
	}
	return nil
}

// assembleResult adds the fields every result.json has: kind, parties,
// timing (seconds per phase) and bytes (sent per party).
func (n *Node) assembleResult(jobID string, spec *job.Spec, res job.Result) ([]byte, error) {
	j, ok := n.fsm.job(jobID)
	if !ok {
		return nil, fmt.Errorf("job %s vanished", jobID)
	}
	timing := map[string]float64{}
	bytes := map[string]int64{}
	for _, s := range j.Steps {
		if !s.Done {
			continue
		}
		timing[s.Phase] += s.Finished.Sub(s.Started).Seconds()
		if s.Record != nil {
			for p, b := range s.Record.Bytes {
				bytes[p] = max(bytes[p], b)
			}
		}
	}
	out := map[string]any{}
	maps.Copy(out, res)
	out["kind"] = spec.Kind
	out["job"] = jobID
	out["parties"] = spec.PartyNames()
	out["timing"] = timing
	out["bytes"] = bytes
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return b, nil
}

// coordinator implements job.Coordinator on the leader.
type coordinator struct {
	party
	mu     sync.Mutex
	failed map[string]string // Failed of the latest attempt waited for
}

func (c *coordinator) Progress(phase string, done, total int) {
	c.n.mu.Lock()
	c.n.progress[c.id] = Progress{Phase: phase, Done: done, Total: total}
	c.n.mu.Unlock()
}

// Start begins one step attempt, or returns the committed one; see
// job.Coordinator.
func (c *coordinator) Start(ctx context.Context, step job.Step) (job.Attempt, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rec, status, ok := c.n.fsm.stepState(c.id, step.Phase, step.Round)
	if !ok {
		return nil, fmt.Errorf("job %s is not in the log", c.id)
	}
	if status != StatusRunning {
		return nil, fmt.Errorf("%w: job %s is %s", errNotLeader, c.id, status)
	}
	var latest *job.Step
	if rec != nil {
		latest = &rec.Step
	}
	step, err := job.NextAttempt(step, latest, c.spec, c.id, c.n.cfg.Name, int64(c.n.timing.StepMS))
	if err != nil {
		return nil, err
	}
	if rec != nil && rec.Done {
		return &attempt{c: c, step: rec.Step, record: rec.Record}, nil
	}
	c.Progress(step.Phase, 0, len(step.Parties))
	if err := c.n.apply(&command{Op: opStart, Job: c.id, Step: &step}); err != nil {
		return nil, err
	}
	return &attempt{c: c, step: step, began: time.Now()}, nil
}

// attempt implements job.Attempt.
type attempt struct {
	c      *coordinator
	step   job.Step
	record *job.Record
	began  time.Time
}

func (a *attempt) Step() job.Step      { return a.step }
func (a *attempt) Record() *job.Record { return a.record }

// Wait collects every party's output: parties get the step timeout plus a
// grace period for the report itself, and an unreachable party ends the
// attempt at once.
func (a *attempt) Wait(ctx context.Context) (*job.Outputs, error) {
	if a.record != nil {
		return nil, fmt.Errorf("step %s/%d is committed already; its outputs are gone", a.step.Phase, a.step.Round)
	}
	c, step := a.c, a.step
	waitCtx, cancel := context.WithTimeout(ctx, step.Timeout()+time.Duration(c.n.timing.SendMS)*time.Millisecond)
	defer cancel()
	outs := job.Collect(waitCtx, c, step, func(ctx context.Context, unreachable func(string, error)) {
		c.watchReachable(ctx, step.Parties, unreachable)
	}, func(done int) { c.Progress(step.Phase, done, len(step.Parties)) })
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.failed = outs.Failed
	c.mu.Unlock()
	return outs, nil
}

// Commit records the attempt's public part and the kind's decision.
func (a *attempt) Commit(ctx context.Context, outs *job.Outputs, decision []byte) (*job.Record, error) {
	if a.record != nil {
		return a.record, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rec := outs.Record(a.step, decision)
	if err := a.c.n.apply(&command{Op: opDone, Job: a.c.id, Record: rec}); err != nil {
		return nil, err
	}
	a.record = rec
	a.c.n.metrics.phaseSecs.WithLabelValues(a.c.spec.Kind, a.step.Phase).Observe(time.Since(a.began).Seconds())
	return rec, nil
}
