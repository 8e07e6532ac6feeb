package jobtest

import (
	"context"
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/job"
)

// The coordinator side, as the node's: Start answers finished steps from
// the log and checks that a replayed step is the committed one; outputs
// reach the coordinator as messages and stay in its memory; only the
// kind's decision is committed.

// coordinator implements job.Coordinator for one leader's term.
type coordinator struct {
	job.Party
	r    *runner
	term int
	spec *job.Spec
}

func (r *runner) newCoordinator(name string, term int) (*coordinator, error) {
	spec, err := r.parseSpec()
	if err != nil {
		return nil, err
	}
	return &coordinator{Party: r.net.Party(name), r: r, term: term, spec: spec}, nil
}

func (c *coordinator) JobID() string             { return c.r.id }
func (c *coordinator) Spec() *job.Spec           { return c.spec }
func (c *coordinator) Seed() []byte              { return slices.Clone(c.r.seed) }
func (c *coordinator) Progress(string, int, int) {}

// Start begins one attempt of step, or returns the committed one.
func (c *coordinator) Start(ctx context.Context, step job.Step) (job.Attempt, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	latest, rec, started, running := c.r.log.step(step.Phase, step.Round)
	if !running {
		return nil, fmt.Errorf("%w: job %s has ended", errDeposed, c.r.id)
	}
	var committed *job.Step
	if started {
		committed = &latest
	}
	step, err := job.NextAttempt(step, committed, c.spec, c.r.id, c.Self(), c.r.opts.StepTimeout.Milliseconds())
	if err != nil {
		return nil, err
	}
	if rec != nil {
		return &attempt{c: c, step: latest, record: rec}, nil
	}
	if term, _ := c.r.log.currentTerm(); term != c.term {
		return nil, errDeposed // no event for a leader deposed already
	}
	fault := c.r.hook(Event{Kind: Starting, Step: step, Leader: c.Self()})
	if err := c.r.log.append(c.term, &Entry{Op: OpStart, Job: c.r.id, Step: &step}); err != nil {
		return nil, err
	}
	c.r.inject(fault)
	return &attempt{c: c, step: step}, nil
}

// attempt implements job.Attempt.
type attempt struct {
	c      *coordinator
	step   job.Step
	record *job.Record
}

func (a *attempt) Step() job.Step      { return a.step }
func (a *attempt) Record() *job.Record { return a.record }

// Wait collects every party's output: parties get the step timeout plus
// Grace for the report itself, and a party that is dropped with DropFail
// (its node is down) ends the attempt at once.
func (a *attempt) Wait(ctx context.Context) (*job.Outputs, error) {
	if a.record != nil {
		return nil, fmt.Errorf("jobtest: step %s/%d is committed already; its outputs are gone", a.step.Phase, a.step.Round)
	}
	c, step := a.c, a.step
	waitCtx, cancel := context.WithTimeout(ctx, step.Timeout()+c.r.opts.Grace)
	defer cancel()
	outs := job.Collect(waitCtx, c, step, func(ctx context.Context, unreachable func(string, error)) {
		c.watchReachable(ctx, step.Parties, func(p string) { unreachable(p, ErrDropped) })
	}, nil)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("jobtest: step %s/%d attempt %d: %w", step.Phase, step.Round, step.Attempt, err)
	}
	return outs, nil
}

// watchReachable calls down for the first party other than the coordinator
// found dropped with DropFail, until ctx ends. It stands for the node's
// reachability probes, without their delay.
func (c *coordinator) watchReachable(ctx context.Context, parties []string, down func(p string)) {
	for {
		p, changed := c.r.net.failed(parties, c.Self())
		if p != "" {
			down(p)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
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
	if err := a.c.r.log.append(a.c.term, &Entry{Op: OpDone, Job: a.c.r.id, Record: rec}); err != nil {
		return nil, err
	}
	a.record = rec
	a.c.r.inject(a.c.r.hook(Event{Kind: Committed, Step: a.step, Record: rec, Leader: a.c.Self()}))
	return rec, nil
}
