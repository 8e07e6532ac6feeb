package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// ErrDeposed means this member cannot commit to the log any more (another
// member leads, or the job has ended): a coordinator that gets it stops
// quietly, and the log decides what follows.
var ErrDeposed = errors.New("not the coordinator any more")

// Log is the replicated log as a member sees it: it commits entries while
// the member leads, and holds the state the member has applied. The node's
// Raft log and jobtest's in-memory log both pass package runnertest's
// TestLog, which checks this contract.
type Log interface {
	// Commit appends e and returns once this member has applied it, so
	// that State shows it at once; concurrent commits are each applied
	// whole. A zero e.Time is stamped with the commit's time and a given
	// one kept, so every member replays the same. What State holds shares
	// no memory with e. Commit fails, committing nothing, with an error
	// wrapping ErrDeposed when this member cannot commit (another leads,
	// or leadership is moving), and with ctx's error when ctx has ended
	// before the call; it fails with State.Apply's error, the state
	// unchanged, for an entry the state refuses (the same entry twice, a
	// stale attempt).
	Commit(ctx context.Context, e *Entry) error
	// State is the state this member has applied. A member that has
	// become leader holds every entry committed before once it is given
	// a Coordinator (the node waits on a Raft barrier).
	State() *State
}

// Coordinator drives jobs on the member that leads: Run calls a job's
// Kind.Coordinate, starts and commits its steps, and commits the job's
// result or failure. A new leader calls Run from the top; Start answers
// finished steps from the log.
type Coordinator struct {
	Self  string
	Kinds job.Registry
	Log   Log
	// Net is this member's network; the parties' outputs arrive on it.
	Net job.Party
	// Config holds the timeouts (DefaultConfig, then the member's own);
	// Run refuses one that does not Validate.
	Config
	// Watch, if set, probes an attempt's parties while it runs and calls
	// down for one found unreachable, which ends the attempt at once.
	Watch func(ctx context.Context, parties []string, down func(party string, why error))
	// Progress, if set, is told how far a job's phase has got.
	Progress func(jobID, phase string, done, total int)
	// Starting, if set, sees every attempt before its start is committed;
	// the function it returns, if not nil, runs once it is committed.
	Starting func(step job.Step) (after func())
	// Committed, if set, sees every step's record once it is committed,
	// with the time its attempt began here.
	Committed func(step job.Step, rec *job.Record, began time.Time)
	// Logger, if set, is this member's log (a kind's panic goes there).
	Logger *slog.Logger
}

// Run drives one job to its end and returns the kind's result and the
// result as committed (the kind's fields and kind, job, parties and
// timing). A job that fails has its error committed with every party's
// causes, and Run returns that error; an error wrapping ErrDeposed, or
// ctx's, means this member stopped coordinating and committed nothing, as
// does one wrapping ErrConfig (c's Config does not Validate).
func (c *Coordinator) Run(ctx context.Context, jobID string) (job.Result, []byte, error) {
	if err := c.Validate(); err != nil {
		return nil, nil, fmt.Errorf("coordinator %s: %w", c.Self, err)
	}
	j, ok := c.Log.State().Job(jobID)
	if !ok {
		return nil, nil, fmt.Errorf("%w: job %s is not in the log", ErrDeposed, jobID)
	}
	if j.Status != StatusRunning {
		return nil, nil, fmt.Errorf("%w: job %s is %s", ErrDeposed, jobID, j.Status)
	}
	co := &coordination{c: c, id: jobID, seed: j.Seed, failures: map[string][]string{}}
	spec, kind, err := ParseJob(c.Kinds, jobID, j.Spec)
	var res job.Result
	var b []byte
	if err == nil {
		co.spec = spec
		if err = co.admit(ctx); err == nil {
			res, err = c.coordinate(ctx, jobID, kind, co)
		}
	}
	if ctx.Err() != nil || errors.Is(err, ErrDeposed) {
		return nil, nil, stopped(ctx, err)
	}
	if err == nil {
		if b, err = co.assemble(res); err == nil {
			err = c.Log.Commit(ctx, &Entry{Op: OpFinish, Job: jobID, Result: b})
			if err == nil || errors.Is(err, ErrDeposed) || ctx.Err() != nil {
				return res, b, stopped(ctx, err)
			}
		}
	}
	failures := co.allFailures()
	fail := &Entry{Op: OpFail, Job: jobID, Error: withOtherCauses(err.Error(), failures), Failures: failures}
	if cerr := c.Log.Commit(ctx, fail); cerr != nil {
		if errors.Is(cerr, ErrDeposed) || ctx.Err() != nil {
			return nil, nil, stopped(ctx, cerr)
		}
		return nil, nil, fmt.Errorf("job %s failed (%w), and the failure could not be committed: %w", jobID, err, cerr)
	}
	return nil, nil, err
}

// errCoordinatePanicked is a kind's Coordinate that panicked.
var errCoordinatePanicked = errors.New("the job's coordination failed unexpectedly (a bug: the coordinator's log has it)")

// coordinate runs the kind's Coordinate and turns a panic into the job's
// failure. Coordinate reads the parties' outputs, bytes from members: one
// its checks let through must not end the leader's node, and then, as each
// new leader runs the job from the top, every member's in turn. The
// panic's value and stack go to this member's log only (the value may
// hold data).
func (c *Coordinator) coordinate(ctx context.Context, jobID string, kind job.Kind, co *coordination) (res job.Result, err error) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if c.Logger != nil {
			c.Logger.Error("the job's coordination panicked", "job", jobID, "panic", v, "stack", string(debug.Stack()))
		}
		res, err = nil, errCoordinatePanicked
	}()
	return kind.Coordinate(ctx, co)
}

// withOtherCauses adds to a failed job's error the parties that failed an
// earlier step and that it does not name, each with its causes, so that
// the one line a user reads names every party that failed and why (a
// kind's error speaks of its last step only).
func withOtherCauses(msg string, failures map[string]string) string {
	var others []string
	for _, p := range sortedKeys(failures) {
		// A name ends where no name character follows (org1 is not org10).
		if !regexp.MustCompile(`(^|[^\w.-])` + regexp.QuoteMeta(p) + `([^\w.-]|$)`).MatchString(msg) {
			others = append(others, fmt.Sprintf("%s: %s", p, failures[p]))
		}
	}
	if len(others) == 0 {
		return msg
	}
	return msg + "; earlier, " + strings.Join(others, "; ")
}

// stopped returns err, or ctx's error when ctx has ended.
func stopped(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && err == nil {
		return cerr
	}
	return err
}

// ParseJob parses a committed spec and finds its kind.
func ParseJob(kinds job.Registry, id string, raw []byte) (*job.Spec, job.Kind, error) {
	spec, err := job.ParseSpec(raw, "job "+id)
	if err != nil {
		return nil, nil, err
	}
	kind, ok := kinds[spec.Kind]
	if !ok {
		return nil, nil, fmt.Errorf("%w: unknown job kind %q (this member runs %v)", job.ErrSpec, spec.Kind, kinds.Names())
	}
	return spec, kind, nil
}

// coordination implements job.Coordinator for one job on the leader.
type coordination struct {
	c    *Coordinator
	id   string
	spec *job.Spec
	seed []byte

	mu sync.Mutex
	// failures holds every party's causes over the attempts this
	// coordinator waited for, as "phase/round: cause", in order.
	failures map[string][]string
}

func (j *coordination) Self() string    { return j.c.Self }
func (j *coordination) JobID() string   { return j.id }
func (j *coordination) Spec() *job.Spec { return j.spec }
func (j *coordination) Seed() []byte    { return slices.Clone(j.seed) }
func (j *coordination) Send(ctx context.Context, to string, m *wire.Message, d wire.Disclosure) error {
	return j.c.Net.Send(ctx, to, m, d)
}
func (j *coordination) Receive(ctx context.Context, from string, k wire.Key) (*wire.Message, error) {
	return j.c.Net.Receive(ctx, from, k)
}

func (j *coordination) Progress(phase string, done, total int) {
	if j.c.Progress != nil {
		j.c.Progress(j.id, phase, done, total)
	}
}

// Start begins one step attempt, or returns the committed one; see
// job.Coordinator.
func (j *coordination) Start(ctx context.Context, step job.Step) (job.Attempt, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rec, status, ok := j.c.Log.State().Step(j.id, step.Phase, step.Round)
	if !ok {
		return nil, fmt.Errorf("%w: job %s is not in the log", ErrDeposed, j.id)
	}
	if status != StatusRunning {
		return nil, fmt.Errorf("%w: job %s is %s", ErrDeposed, j.id, status)
	}
	var latest *job.Step
	if rec != nil {
		latest = &rec.Step
	}
	step, err := NextAttempt(step, latest, j.spec, j.id, j.c.Self, j.c.StepTimeout.Milliseconds())
	if err != nil {
		return nil, err
	}
	if rec != nil && rec.Done {
		return &attempt{j: j, step: rec.Step, record: rec.Record}, nil
	}
	if err := j.commitStart(ctx, step); err != nil {
		return nil, err
	}
	return &attempt{j: j, step: step, began: time.Now()}, nil
}

// commitStart commits an attempt's start, shown to Progress and Starting.
func (j *coordination) commitStart(ctx context.Context, step job.Step) error {
	j.Progress(step.Phase, 0, len(step.Parties))
	var after func()
	if j.c.Starting != nil {
		after = j.c.Starting(step)
	}
	if err := j.c.Log.Commit(ctx, &Entry{Op: OpStart, Job: j.id, Step: &step}); err != nil {
		return err
	}
	if after != nil {
		after()
	}
	return nil
}

// attempt implements job.Attempt.
type attempt struct {
	j      *coordination
	step   job.Step
	record *job.Record
	began  time.Time
}

func (a *attempt) Step() job.Step      { return a.step }
func (a *attempt) Record() *job.Record { return a.record }

// Wait collects every party's output: parties get the step timeout plus
// the grace period for the report itself, and an unreachable party ends
// the attempt at once. A party whose node restarted in the attempt has
// lost what it received of it, but is back: the step is run again as a
// new attempt, as a new leader would, up to maxRestarts times, before the
// kind sees the party as silent.
func (a *attempt) Wait(ctx context.Context) (*job.Outputs, error) {
	if a.record != nil {
		return nil, fmt.Errorf("step %s/%d is committed already; its outputs are gone", a.step.Phase, a.step.Round)
	}
	for restarts := 0; ; restarts++ {
		outs, restarted := a.collect(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("step %s/%d attempt %d: %w", a.step.Phase, a.step.Round, a.step.Attempt, err)
		}
		if len(restarted) == 0 || restarts == maxRestarts {
			a.j.noteFailures(a.step, outs.Failed)
			return outs, nil
		}
		next := a.step
		next.Attempt++
		if err := a.j.commitStart(ctx, next); err != nil {
			return nil, err
		}
		a.step, a.began = next, time.Now()
	}
}

// maxRestarts bounds the attempts a step is re-run because a party's node
// restarted in it (a node restarting in a loop is then silent).
const maxRestarts = 3

// collect gathers one attempt's outputs (collect), bounded by the step
// timeout plus the grace period.
func (a *attempt) collect(ctx context.Context) (*job.Outputs, []string) {
	c, step := a.j.c, a.step
	waitCtx, cancel := context.WithTimeout(ctx, step.Timeout()+c.Grace)
	defer cancel()
	var watch func(context.Context, func(string, error))
	if c.Watch != nil {
		watch = func(ctx context.Context, unreachable func(string, error)) { c.Watch(ctx, step.Parties, unreachable) }
	}
	return collect(waitCtx, c.Net, step, watch, func(done int) { a.j.Progress(step.Phase, done, len(step.Parties)) })
}

// Commit records the attempt's public part and the kind's decision.
func (a *attempt) Commit(ctx context.Context, outs *job.Outputs, decision []byte, failure string) (*job.Record, error) {
	if a.record != nil {
		return a.record, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rec := outs.Record(a.step, decision)
	rec.Error = failure
	if err := a.j.c.Log.Commit(ctx, &Entry{Op: OpDone, Job: a.j.id, Record: rec}); err != nil {
		return nil, err
	}
	a.record = rec
	if a.j.c.Committed != nil {
		a.j.c.Committed(a.step, rec, a.began)
	}
	return rec, nil
}

// noteFailures keeps an attempt's failed parties and their causes.
func (j *coordination) noteFailures(step job.Step, failed map[string]string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, p := range sortedKeys(failed) {
		cause := fmt.Sprintf("%s/%d: %s", step.Phase, step.Round, failed[p])
		if !slices.Contains(j.failures[p], cause) {
			j.failures[p] = append(j.failures[p], cause)
		}
	}
}

// allFailures names every party that failed any attempt of the job, with
// each distinct cause: those this coordinator saw and those the log's
// records keep from earlier leaders.
func (j *coordination) allFailures() map[string]string {
	for _, rec := range j.c.Log.State().History(j.id) {
		j.noteFailures(rec.Step, rec.Failed)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.failures) == 0 {
		return nil
	}
	out := make(map[string]string, len(j.failures))
	for p, causes := range j.failures {
		out[p] = strings.Join(causes, "; ")
	}
	return out
}

// assemble adds the fields every result has: kind, job, parties and
// timing (seconds per phase, from the log's timestamps).
func (j *coordination) assemble(res job.Result) ([]byte, error) {
	rec, ok := j.c.Log.State().Job(j.id)
	if !ok {
		return nil, fmt.Errorf("%w: job %s vanished", ErrDeposed, j.id)
	}
	timing := map[string]float64{}
	for _, s := range rec.Steps {
		if s.Done {
			timing[s.Phase] += s.Finished.Sub(s.Started).Seconds()
		}
	}
	out := map[string]any{}
	maps.Copy(out, res)
	out["kind"] = j.spec.Kind
	out["job"] = j.id
	out["parties"] = j.spec.PartyNames()
	out["timing"] = timing
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return b, nil
}
