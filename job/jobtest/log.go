package jobtest

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
)

// Operations of the in-memory log, those of the node's Raft log.
const (
	OpSubmit = "submit" // the spec and the job's seed
	OpStart  = "start"  // the coordinator started an attempt of a step
	OpDone   = "done"   // a step's public record
	OpFinish = "finish" // the job's result (JSON)
	OpFail   = "fail"   // the job failed
)

// Entry is one record of the in-memory log. Everything in it is what every
// member of a real consortium would hold.
type Entry struct {
	Op       string            `msgpack:"op"`
	Job      string            `msgpack:"job"`
	Spec     []byte            `msgpack:"spec,omitempty"`
	Seed     []byte            `msgpack:"seed,omitempty"`
	Step     *job.Step         `msgpack:"step,omitempty"`
	Record   *job.Record       `msgpack:"record,omitempty"`
	Result   []byte            `msgpack:"result,omitempty"`
	Error    string            `msgpack:"error,omitempty"`
	Failures map[string]string `msgpack:"failures,omitempty"`
	// Data is the entry as committed (msgpack): a leakage test searches it.
	Data []byte `msgpack:"-"`
}

// errDeposed refuses an append from a coordinator that is no longer the
// leader, as raft refuses an Apply on a deposed leader.
var errDeposed = errors.New("jobtest: not the leader any more")

// Job statuses in the log.
const (
	statusRunning = "running"
	statusDone    = "done"
	statusFailed  = "failed"
)

type stepKey struct {
	phase string
	round int
}

// stepState is the latest attempt of one step and, once done, the index of
// its done entry.
type stepState struct {
	step job.Step
	done int // index of the done entry in entries; -1 while running
}

// memLog is the log of one job: entries are encoded when appended and
// decoded again before they are applied, so nothing a member reads shares
// memory with what the coordinator committed, and what does not survive
// the encoding fails here as it would over Raft.
type memLog struct {
	mu      sync.Mutex
	entries []Entry
	term    int // bumped at every leader change
	status  string
	steps   []*stepState // in start order
	index   map[stepKey]*stepState
	// changed is closed and replaced at every append and leader change.
	changed chan struct{}
}

func newLog() *memLog {
	return &memLog{index: map[stepKey]*stepState{}, changed: make(chan struct{})}
}

// append commits e for a coordinator of the given term.
func (l *memLog) append(term int, e *Entry) error {
	data, err := protocol.Marshal(e)
	if err != nil {
		return fmt.Errorf("jobtest: log %s: %w", e.Op, err)
	}
	var c Entry
	if err := protocol.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("jobtest: log %s: %w", e.Op, err)
	}
	c.Data = data
	l.mu.Lock()
	defer l.mu.Unlock()
	if term != l.term {
		return errDeposed
	}
	if err := l.apply(&c); err != nil {
		return err
	}
	l.entries = append(l.entries, c)
	l.wake()
	return nil
}

// apply checks an entry against the state and applies it, as the node's
// FSM does; l.mu is held.
func (l *memLog) apply(c *Entry) error {
	if c.Op == OpSubmit {
		if l.status != "" {
			return fmt.Errorf("jobtest: job %s already exists", c.Job)
		}
		l.status = statusRunning
		return nil
	}
	if l.status != statusRunning {
		return fmt.Errorf("jobtest: job %s is %s", c.Job, l.status)
	}
	switch c.Op {
	case OpStart:
		if c.Step == nil {
			return errors.New("jobtest: start without a step")
		}
		k := stepKey{c.Step.Phase, c.Step.Round}
		s := l.index[k]
		switch {
		case s == nil:
			s = &stepState{done: -1}
			l.index[k] = s
			l.steps = append(l.steps, s)
		case s.done >= 0:
			return fmt.Errorf("jobtest: step %s/%d is already done", k.phase, k.round)
		case c.Step.Attempt <= s.step.Attempt:
			return fmt.Errorf("jobtest: step %s/%d attempt %d is not newer than %d", k.phase, k.round, c.Step.Attempt, s.step.Attempt)
		}
		s.step = *c.Step
	case OpDone:
		if c.Record == nil {
			return errors.New("jobtest: done without a record")
		}
		st := c.Record.Step
		s := l.index[stepKey{st.Phase, st.Round}]
		if s == nil || s.done >= 0 || s.step.Attempt != st.Attempt {
			return fmt.Errorf("jobtest: done for step %s/%d attempt %d that is not running", st.Phase, st.Round, st.Attempt)
		}
		s.done = len(l.entries)
	case OpFinish:
		l.status = statusDone
	case OpFail:
		l.status = statusFailed
	default:
		return fmt.Errorf("jobtest: unknown log operation %q", c.Op)
	}
	return nil
}

// wake releases everyone waiting for a change; l.mu is held.
func (l *memLog) wake() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// newTerm starts a new leader's term: appends from older terms fail.
func (l *memLog) newTerm() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.term++
	l.wake()
	return l.term
}

// currentTerm returns the term and whether the job still runs.
func (l *memLog) currentTerm() (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.term, l.status == statusRunning
}

// watch returns a channel closed at the next change.
func (l *memLog) watch() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// step returns the latest attempt of a step, its committed record (nil
// while it runs), whether it was ever started, and whether the job runs.
func (l *memLog) step(phase string, round int) (job.Step, *job.Record, bool, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.index[stepKey{phase, round}]
	if s == nil {
		return job.Step{}, nil, false, l.status == statusRunning
	}
	var rec *job.Record
	if s.done >= 0 {
		rec = l.record(s.done)
	}
	return s.step, rec, true, l.status == statusRunning
}

// record decodes the record of a done entry afresh, so that every reader
// has its own copy; l.mu is held.
func (l *memLog) record(i int) *job.Record {
	var e Entry
	if err := protocol.Unmarshal(l.entries[i].Data, &e); err != nil {
		// Internal error: append decoded these very bytes before keeping them.
		panic(fmt.Sprintf("jobtest: committed entry %d no longer decodes: %v", i, err))
	}
	return e.Record
}

// history returns the committed records of finished steps in start order.
func (l *memLog) history() []*job.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*job.Record
	for _, s := range l.steps {
		if s.done >= 0 {
			out = append(out, l.record(s.done))
		}
	}
	return out
}

// stepID names one attempt.
type stepID struct {
	phase   string
	round   int
	attempt int
}

func idOf(s job.Step) stepID { return stepID{s.Phase, s.Round, s.Attempt} }

// next returns the oldest open attempt that includes party and is not in
// skip, and whether the job still runs.
func (l *memLog) next(party string, skip map[stepID]bool) (job.Step, bool, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.steps {
		if s.done < 0 && !skip[idOf(s.step)] && slices.Contains(s.step.Parties, party) {
			return s.step, true, l.status == statusRunning
		}
	}
	return job.Step{}, false, l.status == statusRunning
}

// open reports whether an attempt is still the open attempt of its step
// in a running job.
func (l *memLog) open(id stepID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.index[stepKey{id.phase, id.round}]
	return l.status == statusRunning && s != nil && s.done < 0 && s.step.Attempt == id.attempt
}

// lastFailures returns the failed parties of the latest finished step that
// had any, so that a failed job names them as the node's does.
func (l *memLog) lastFailures() map[string]string {
	h := l.history()
	for i := len(h) - 1; i >= 0; i-- {
		if len(h[i].Failed) > 0 {
			return h[i].Failed
		}
	}
	return nil
}

// snapshot returns the entries so far.
func (l *memLog) snapshot() []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Entry(nil), l.entries...)
}
