package node

import (
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
)

// Job statuses.
const (
	StatusRunning = "running"
	StatusDone    = "done"
	StatusFailed  = "failed"
)

// Operations in the Raft log.
const (
	opSubmit = "submit" // a job spec was accepted
	opStart  = "start"  // the coordinator started an attempt of a step
	opDone   = "done"   // a step's outputs
	opFinish = "finish" // the job's result
	opFail   = "fail"   // the job failed
)

// command is one entry of the Raft log. The coordinator stamps Time, so
// every node replays identical timestamps.
type command struct {
	Op      string       `msgpack:"op"`
	Time    time.Time    `msgpack:"time"`
	Job     string       `msgpack:"job"`
	Spec    []byte       `msgpack:"spec,omitempty"`
	Step    *job.Step    `msgpack:"step,omitempty"`
	Outputs *job.Outputs `msgpack:"outputs,omitempty"`
	Result  []byte       `msgpack:"result,omitempty"`
	Error   string       `msgpack:"error,omitempty"`
}

// JobRecord is the replicated state of one job.
type JobRecord struct {
	ID        string        `msgpack:"id" json:"id"`
	Kind      string        `msgpack:"kind" json:"kind"`
	Spec      []byte        `msgpack:"spec" json:"-"`
	Status    string        `msgpack:"status" json:"status"`
	Submitted time.Time     `msgpack:"submitted" json:"submitted"`
	Finished  time.Time     `msgpack:"finished" json:"finished,omitzero"`
	Steps     []*StepRecord `msgpack:"steps" json:"steps"`
	Result    []byte        `msgpack:"result" json:"-"`
	Error     string        `msgpack:"error" json:"error,omitempty"`
}

// StepRecord is the latest attempt of one step and, once done, its outputs.
type StepRecord struct {
	Step     job.Step     `msgpack:"step" json:"-"`
	Phase    string       `msgpack:"phase" json:"phase"`
	Round    int          `msgpack:"round" json:"round"`
	Attempt  int          `msgpack:"attempt" json:"attempt"`
	Started  time.Time    `msgpack:"started" json:"started"`
	Finished time.Time    `msgpack:"finished" json:"finished,omitzero"`
	Outputs  *job.Outputs `msgpack:"outputs" json:"-"`
	Failed   []string     `msgpack:"-" json:"failed,omitempty"`
}

// Done reports whether the step's outputs are committed.
func (s *StepRecord) Done() bool { return s.Outputs != nil }

// fsmState is everything the log determines.
type fsmState struct {
	Jobs  map[string]*JobRecord `msgpack:"jobs"`
	Order []string              `msgpack:"order"` // job ids in submission order
}

// fsm applies log entries to the state. Readers take copies under the lock.
type fsm struct {
	mu      sync.RWMutex
	state   fsmState
	changed chan struct{} // signalled (without blocking) after every apply
	onApply func(*command)
}

func newFSM() *fsm {
	return &fsm{state: fsmState{Jobs: map[string]*JobRecord{}}, changed: make(chan struct{}, 1)}
}

func (f *fsm) notify() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// Apply implements raft.FSM. A malformed entry is refused with an error
// returned through the apply future; it never panics.
func (f *fsm) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	var c command
	if err := protocol.Unmarshal(l.Data, &c); err != nil {
		return fmt.Errorf("apply log entry %d: %w", l.Index, err)
	}
	err := f.apply(&c)
	if err == nil {
		if f.onApply != nil {
			f.onApply(&c)
		}
		f.notify()
	}
	return err
}

func (f *fsm) apply(c *command) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	j := f.state.Jobs[c.Job]
	if c.Op == opSubmit {
		if j != nil {
			return fmt.Errorf("job %s already exists", c.Job)
		}
		spec, err := job.ParseSpec(c.Spec, "job "+c.Job)
		if err != nil {
			return err
		}
		f.state.Jobs[c.Job] = &JobRecord{ID: c.Job, Kind: spec.Kind, Spec: c.Spec, Status: StatusRunning, Submitted: c.Time}
		f.state.Order = append(f.state.Order, c.Job)
		return nil
	}
	if j == nil {
		return fmt.Errorf("unknown job %s", c.Job)
	}
	if j.Status != StatusRunning {
		return fmt.Errorf("job %s is %s", c.Job, j.Status)
	}
	switch c.Op {
	case opStart:
		if c.Step == nil {
			return fmt.Errorf("start without step")
		}
		rec := j.step(c.Step.Phase, c.Step.Round)
		if rec == nil {
			rec = &StepRecord{Phase: c.Step.Phase, Round: c.Step.Round}
			j.Steps = append(j.Steps, rec)
		} else if rec.Done() {
			return fmt.Errorf("step %s/%d of job %s is already done", c.Step.Phase, c.Step.Round, c.Job)
		} else if c.Step.Attempt <= rec.Attempt {
			return fmt.Errorf("step %s/%d attempt %d is not newer than %d", c.Step.Phase, c.Step.Round, c.Step.Attempt, rec.Attempt)
		}
		rec.Step, rec.Attempt, rec.Started = *c.Step, c.Step.Attempt, c.Time
	case opDone:
		if c.Step == nil || c.Outputs == nil {
			return fmt.Errorf("done without step or outputs")
		}
		rec := j.step(c.Step.Phase, c.Step.Round)
		if rec == nil || rec.Attempt != c.Step.Attempt || rec.Done() {
			return fmt.Errorf("done for step %s/%d attempt %d that is not running", c.Step.Phase, c.Step.Round, c.Step.Attempt)
		}
		rec.Outputs, rec.Finished = c.Outputs, c.Time
		rec.Failed = sortedKeys(c.Outputs.Failed)
	case opFinish:
		j.Status, j.Result, j.Finished = StatusDone, c.Result, c.Time
	case opFail:
		j.Status, j.Error, j.Finished = StatusFailed, c.Error, c.Time
	default:
		return fmt.Errorf("unknown operation %q", c.Op)
	}
	return nil
}

func (j *JobRecord) step(phase string, round int) *StepRecord {
	for _, s := range j.Steps {
		if s.Phase == phase && s.Round == round {
			return s
		}
	}
	return nil
}

// job returns a deep-enough copy of one job record (records are replaced,
// never mutated, once committed, except for the step list).
func (f *fsm) job(id string) (*JobRecord, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	j, ok := f.state.Jobs[id]
	if !ok {
		return nil, false
	}
	return j.clone(), true
}

// jobs returns copies of all jobs in submission order.
func (f *fsm) jobs() []*JobRecord {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := make([]*JobRecord, 0, len(f.state.Order))
	for _, id := range f.state.Order {
		out = append(out, f.state.Jobs[id].clone())
	}
	return out
}

func (j *JobRecord) clone() *JobRecord {
	c := *j
	c.Steps = make([]*StepRecord, len(j.Steps))
	for i, s := range j.Steps {
		sc := *s
		c.Steps[i] = &sc
	}
	return &c
}

// Snapshot implements raft.FSM.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	b, err := protocol.Marshal(&f.state)
	if err != nil {
		return nil, err
	}
	return fsmSnapshot(b), nil
}

// Restore implements raft.FSM.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	var s fsmState
	if err := protocol.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	if s.Jobs == nil {
		s.Jobs = map[string]*JobRecord{}
	}
	if len(s.Order) != len(s.Jobs) {
		return fmt.Errorf("restore snapshot: %d jobs but %d in order", len(s.Jobs), len(s.Order))
	}
	for _, id := range s.Order {
		j := s.Jobs[id]
		if j == nil || j.ID != id {
			return fmt.Errorf("restore snapshot: job %q missing or inconsistent", id)
		}
		for _, st := range j.Steps {
			if st == nil {
				return fmt.Errorf("restore snapshot: job %q has an empty step", id)
			}
		}
	}
	f.mu.Lock()
	f.state = s
	f.mu.Unlock()
	f.notify()
	return nil
}

type fsmSnapshot []byte

func (s fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(s); err != nil {
		sink.Cancel()
		return fmt.Errorf("persist snapshot: %w", err)
	}
	return sink.Close()
}

func (s fsmSnapshot) Release() {}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
