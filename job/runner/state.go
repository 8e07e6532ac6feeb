package runner

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/cohortdm/cohort/job"
)

// Job statuses.
const (
	StatusRunning = "running"
	StatusDone    = "done"
	StatusFailed  = "failed"
)

// keptSteps bounds the step summaries a finished job keeps in the
// replicated state; a job of thousands of rounds keeps its last ones.
const keptSteps = 64

// openScan bounds how far back Active looks for open attempts.
const openScan = 32

// JobRecord is the replicated state of one job. Once the job has ended it
// is never mutated again (a new, compacted record replaces it), so readers
// and snapshots may share it.
type JobRecord struct {
	ID         string            `msgpack:"id" json:"id"`
	Kind       string            `msgpack:"kind" json:"kind"`
	Spec       []byte            `msgpack:"spec" json:"-"`
	Seed       []byte            `msgpack:"seed" json:"-"`
	Submission *Submission       `msgpack:"submission,omitempty" json:"submission,omitempty"`
	Status     string            `msgpack:"status" json:"status"`
	Submitted  time.Time         `msgpack:"submitted" json:"submitted"`
	Finished   time.Time         `msgpack:"finished" json:"finished,omitzero"`
	Steps      []*StepRecord     `msgpack:"steps" json:"steps"`
	Result     []byte            `msgpack:"result" json:"-"`
	Error      string            `msgpack:"error" json:"error,omitempty"`
	Failures   map[string]string `msgpack:"failures" json:"failures,omitempty"`
	// DroppedSteps counts the step summaries compaction removed.
	DroppedSteps int `msgpack:"dropped_steps" json:"dropped_steps,omitempty"`

	index map[stepKey]int // Steps by phase and round, rebuilt on demand
}

type stepKey struct {
	phase string
	round int
}

// StepRecord is the latest attempt of one step and, once done, its record.
// When the job ends, Step.Args and Record are dropped (compaction).
type StepRecord struct {
	Step     job.Step    `msgpack:"step" json:"-"`
	Phase    string      `msgpack:"phase" json:"phase"`
	Round    int         `msgpack:"round" json:"round"`
	Attempt  int         `msgpack:"attempt" json:"attempt"`
	Started  time.Time   `msgpack:"started" json:"started"`
	Finished time.Time   `msgpack:"finished" json:"finished,omitzero"`
	Done     bool        `msgpack:"done" json:"done"`
	Record   *job.Record `msgpack:"record" json:"-"`
	Failed   []string    `msgpack:"failed" json:"failed,omitempty"`
}

// State is the jobs part of the replicated state: what every member holds
// after applying the log's job entries. The node's Raft FSM and jobtest's
// in-memory log both keep one; readers get copies and never hold its lock.
type State struct {
	mu      sync.RWMutex
	jobs    map[string]*JobRecord
	order   []string // job ids in submission order
	running []string // ids of running jobs in submission order
	index   *finishedIndex
	// changed is closed and replaced at every change (Watch).
	changed chan struct{}
}

// NewState returns an empty state.
func NewState() *State {
	return &State{jobs: map[string]*JobRecord{}, changed: make(chan struct{}), index: newFinishedIndex()}
}

// Watch returns a channel closed at the next change of the state.
func (s *State) Watch() <-chan struct{} {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.changed
}

func (s *State) wake() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Apply applies one entry, refusing (with an error, never a panic) one that
// does not fit the state: a second submission of a job, a step of an
// ended job, an attempt not newer than the running one, a record for an
// attempt that is not running.
func (s *State) Apply(e *Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.apply(e)
	if err == nil {
		s.wake()
	}
	return err
}

// ErrJobExists is a submission for a job id the log already holds: the
// same signed submission committed twice (its id is derived from it), when
// a leader lost its leadership after appending it and the submitter tried
// again through the next.
var ErrJobExists = errors.New("job already exists")

func (s *State) apply(e *Entry) error {
	j := s.jobs[e.Job]
	if e.Op == OpSubmit {
		if j != nil {
			return fmt.Errorf("%w: %s", ErrJobExists, e.Job)
		}
		spec, err := job.ParseSpec(e.Spec, "job "+e.Job)
		if err != nil {
			return err
		}
		s.jobs[e.Job] = &JobRecord{ID: e.Job, Kind: spec.Kind, Spec: e.Spec, Seed: e.Seed, Submission: e.Submission,
			Status: StatusRunning, Submitted: e.Time}
		s.order = append(s.order, e.Job)
		s.running = append(s.running, e.Job)
		s.index.submitted(e.Job, spec.Kind, len(s.order)-1)
		return nil
	}
	if j == nil {
		return fmt.Errorf("unknown job %s", e.Job)
	}
	if j.Status != StatusRunning {
		return fmt.Errorf("job %s is %s", e.Job, j.Status)
	}
	switch e.Op {
	case OpStart:
		return s.applyStart(j, e)
	case OpDone:
		if e.Record == nil {
			return fmt.Errorf("done without a record")
		}
		st := e.Record.Step
		rec := j.step(st.Phase, st.Round)
		if rec == nil || rec.Attempt != st.Attempt || rec.Done {
			return fmt.Errorf("done for step %s/%d attempt %d that is not running", st.Phase, st.Round, st.Attempt)
		}
		rec.Record, rec.Finished, rec.Done = e.Record, e.Time, true
		rec.Failed = sortedKeys(e.Record.Failed)
	case OpFinish:
		s.end(j, StatusDone, e.Time, func(r *JobRecord) { r.Result = e.Result })
	case OpFail, OpCancel:
		s.end(j, StatusFailed, e.Time, func(r *JobRecord) { r.Error, r.Failures = e.Error, e.Failures })
	default:
		return fmt.Errorf("unknown operation %q", e.Op)
	}
	return nil
}

func (s *State) applyStart(j *JobRecord, e *Entry) error {
	if e.Step == nil {
		return fmt.Errorf("start without step")
	}
	rec := j.step(e.Step.Phase, e.Step.Round)
	switch {
	case rec == nil:
		rec = &StepRecord{Phase: e.Step.Phase, Round: e.Step.Round}
		j.addStep(rec)
	case rec.Done:
		return fmt.Errorf("step %s/%d of job %s is already done", e.Step.Phase, e.Step.Round, e.Job)
	case e.Step.Attempt <= rec.Attempt:
		return fmt.Errorf("step %s/%d attempt %d is not newer than %d", e.Step.Phase, e.Step.Round, e.Step.Attempt, rec.Attempt)
	}
	rec.Step, rec.Attempt, rec.Started = *e.Step, e.Step.Attempt, e.Time
	return nil
}

// end replaces a job's record with its compacted final form: spec, status,
// result or error, and at most keptSteps step summaries without their args
// and records. The old record may be shared with a snapshot in progress, so
// it is not mutated.
func (s *State) end(j *JobRecord, status string, at time.Time, set func(*JobRecord)) {
	e := &JobRecord{ID: j.ID, Kind: j.Kind, Spec: j.Spec, Seed: j.Seed, Submission: j.Submission, Status: status,
		Submitted: j.Submitted, Finished: at, DroppedSteps: j.DroppedSteps}
	steps := j.Steps
	if len(steps) > keptSteps {
		e.DroppedSteps += len(steps) - keptSteps
		steps = steps[len(steps)-keptSteps:]
	}
	for _, st := range steps {
		c := *st
		c.Step, c.Record = job.Step{}, nil
		e.Steps = append(e.Steps, &c)
	}
	set(e)
	s.jobs[j.ID] = e
	s.running = slices.DeleteFunc(s.running, func(id string) bool { return id == j.ID })
	s.index.finished(j.ID, j.Kind, status)
}

func (j *JobRecord) addStep(st *StepRecord) {
	j.Steps = append(j.Steps, st)
	if j.index != nil {
		j.index[stepKey{st.Phase, st.Round}] = len(j.Steps) - 1
	}
}

// step finds a step by phase and round through the index.
func (j *JobRecord) step(phase string, round int) *StepRecord {
	if j.index == nil {
		j.index = make(map[stepKey]int, len(j.Steps))
		for i, st := range j.Steps {
			j.index[stepKey{st.Phase, st.Round}] = i
		}
	}
	if i, ok := j.index[stepKey{phase, round}]; ok {
		return j.Steps[i]
	}
	return nil
}

func (j *JobRecord) clone() *JobRecord {
	c := *j
	c.index = nil
	c.Steps = make([]*StepRecord, len(j.Steps))
	for i, st := range j.Steps {
		sc := *st
		c.Steps[i] = &sc
	}
	return &c
}

// Job returns a copy of one job record, safe to read without the lock.
func (s *State) Job(id string) (*JobRecord, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	j, ok := s.jobs[id]
	if !ok {
		return nil, false
	}
	return j.clone(), true
}

// Jobs returns copies of all jobs in submission order.
func (s *State) Jobs() []*JobRecord {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*JobRecord, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, s.jobs[id].clone())
	}
	return out
}

// Counts returns how many jobs the log holds and how many of them run,
// without copying any.
func (s *State) Counts() (jobs, running int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.order), len(s.running)
}

// Running returns the ids of the running jobs in submission order.
func (s *State) Running() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.running)
}

// Status returns a job's status without copying it.
func (s *State) Status(id string) (string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	j, ok := s.jobs[id]
	if !ok {
		return "", false
	}
	return j.Status, true
}

// ActiveJob is what a member's reconcile loop needs of a running job: no
// finished steps.
type ActiveJob struct {
	ID    string
	Kind  string
	Spec  []byte
	Seed  []byte
	Open  []job.Step // attempts started and not done, oldest first
	Steps int        // steps started so far
	Queue int        // place among running jobs that have not started a step (0: started)
}

// Active returns the running jobs in submission order, with the attempts
// each has open. Its cost does not grow with finished jobs or steps.
func (s *State) Active() []ActiveJob {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]ActiveJob, 0, len(s.running))
	queue := 0
	for _, id := range s.running {
		j := s.jobs[id]
		a := ActiveJob{ID: j.ID, Kind: j.Kind, Spec: j.Spec, Seed: j.Seed, Steps: len(j.Steps)}
		if len(j.Steps) == 0 {
			queue++
			a.Queue = queue
		}
		a.Open = openSteps(j)
		out = append(out, a)
	}
	return out
}

// openSteps returns a job's attempts started and not done, oldest first.
// Open attempts are at the end: a job starts a step once the ones before
// it are done, except for steps it runs side by side.
func openSteps(j *JobRecord) []job.Step {
	var open []job.Step
	for i := len(j.Steps) - 1; i >= 0 && i >= len(j.Steps)-openScan; i-- {
		if st := j.Steps[i]; !st.Done {
			open = append(open, st.Step)
		}
	}
	slices.Reverse(open)
	return open
}

// Open returns the attempts of a running job that are started and not
// done and include party, oldest first.
func (s *State) Open(jobID, party string) []job.Step {
	s.mu.RLock()
	defer s.mu.RUnlock()
	j, ok := s.jobs[jobID]
	if !ok || j.Status != StatusRunning {
		return nil
	}
	var mine []job.Step
	for _, st := range openSteps(j) {
		if slices.Contains(st.Parties, party) {
			mine = append(mine, st)
		}
	}
	return mine
}

// QueuePosition is a running job's place among the running jobs that have
// not started a step, in submission order (0 when it has started).
func (s *State) QueuePosition(id string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	pos := 0
	for _, r := range s.running {
		if len(s.jobs[r].Steps) == 0 {
			pos++
			if r == id {
				return pos
			}
		}
	}
	return 0
}

// Step returns a copy of one step's record (nil if never started) and the
// job's status.
func (s *State) Step(jobID, phase string, round int) (*StepRecord, string, bool) {
	s.mu.Lock() // the index may be built
	defer s.mu.Unlock()
	j, ok := s.jobs[jobID]
	if !ok {
		return nil, "", false
	}
	st := j.step(phase, round)
	if st == nil {
		return nil, j.Status, true
	}
	c := *st
	return &c, j.Status, true
}

// History returns the committed records of a job's finished steps in the
// order the steps started (records are immutable once committed).
func (s *State) History(jobID string) []*job.Record {
	s.mu.RLock()
	defer s.mu.RUnlock()
	j, ok := s.jobs[jobID]
	if !ok {
		return nil
	}
	var out []*job.Record
	for _, st := range j.Steps {
		if st.Done && st.Record != nil {
			out = append(out, st.Record)
		}
	}
	return out
}

// Snapshot returns the state's jobs and order for a snapshot: ended jobs'
// records are immutable and shared, running ones are copied, so the caller
// may encode them outside the lock.
func (s *State) Snapshot() (map[string]*JobRecord, []string) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	jobs := make(map[string]*JobRecord, len(s.jobs))
	for id, j := range s.jobs {
		jobs[id] = j
	}
	for _, id := range s.running {
		jobs[id] = s.jobs[id].clone()
	}
	return jobs, slices.Clone(s.order)
}

// Restore replaces the state with a snapshot's jobs, after checking that
// they are consistent; on error the state is unchanged.
func (s *State) Restore(jobs map[string]*JobRecord, order []string) error {
	if jobs == nil {
		jobs = map[string]*JobRecord{}
	}
	if len(order) != len(jobs) {
		return fmt.Errorf("%d jobs but %d in order", len(jobs), len(order))
	}
	var running []string
	for _, id := range order {
		j := jobs[id]
		if j == nil || j.ID != id {
			return fmt.Errorf("job %q missing or inconsistent", id)
		}
		for _, st := range j.Steps {
			if st == nil {
				return fmt.Errorf("job %q has an empty step", id)
			}
		}
		if j.Status == StatusRunning {
			running = append(running, id)
		}
	}
	index := newFinishedIndex()
	index.rebuild(jobs, order)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.jobs, s.order, s.running, s.index = jobs, order, running, index
	s.wake()
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Kind returns a job's kind ("" for an unknown job), without copying it.
func (s *State) Kind(id string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if j, ok := s.jobs[id]; ok {
		return j.Kind
	}
	return ""
}
