package node

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
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

// StatusQueued is how the API shows a running job whose first step has not
// started yet (the log holds it as running).
const StatusQueued = "queued"

// Operations in the Raft log.
const (
	opSubmit = "submit" // a job spec was accepted, with the job's seed
	opStart  = "start"  // the coordinator started an attempt of a step
	opDone   = "done"   // a step's public record
	opFinish = "finish" // the job's result
	opFail   = "fail"   // the job failed
	opCancel = "cancel" // a member cancelled the job
	// Membership (members.go): Member is the member added, or named removed.
	opAddMember    = "member-add"
	opRemoveMember = "member-remove"
)

// keptSteps bounds the step summaries a finished job keeps in the
// replicated state; a job of thousands of rounds keeps its last ones.
const keptSteps = 64

// command is one entry of the Raft log. The coordinator stamps Time, so
// every node replays identical timestamps. Nothing in it is private to one
// member: the log reaches every member (see package job).
type command struct {
	Op     string      `msgpack:"op"`
	Time   time.Time   `msgpack:"time"`
	Job    string      `msgpack:"job"`
	Spec   []byte      `msgpack:"spec,omitempty"`
	Seed   []byte      `msgpack:"seed,omitempty"`
	Step   *job.Step   `msgpack:"step,omitempty"`
	Record *job.Record `msgpack:"record,omitempty"`
	Result []byte      `msgpack:"result,omitempty"`
	Error  string      `msgpack:"error,omitempty"`
	// Failures names each failing party of a failed job and its error.
	Failures map[string]string `msgpack:"failures,omitempty"`
	// Member is the member a membership operation adds or removes.
	Member *Member `msgpack:"member,omitempty"`
}

// JobRecord is the replicated state of one job. Once the job has ended it
// is never mutated again (a new, compacted record replaces it), so readers
// and snapshots may share it.
type JobRecord struct {
	ID        string            `msgpack:"id" json:"id"`
	Kind      string            `msgpack:"kind" json:"kind"`
	Spec      []byte            `msgpack:"spec" json:"-"`
	Seed      []byte            `msgpack:"seed" json:"-"`
	Status    string            `msgpack:"status" json:"status"`
	Submitted time.Time         `msgpack:"submitted" json:"submitted"`
	Finished  time.Time         `msgpack:"finished" json:"finished,omitzero"`
	Steps     []*StepRecord     `msgpack:"steps" json:"steps"`
	Result    []byte            `msgpack:"result" json:"-"`
	Error     string            `msgpack:"error" json:"error,omitempty"`
	Failures  map[string]string `msgpack:"failures" json:"failures,omitempty"`
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

// fsmState is everything the log determines.
type fsmState struct {
	Jobs  map[string]*JobRecord `msgpack:"jobs"`
	Order []string              `msgpack:"order"` // job ids in submission order
	// Members is the consortium as the log has it: the consortium file's
	// members at start, changed by member-add and member-remove.
	Members []Member `msgpack:"members,omitempty"`
	// Voters is the consortium file's voters: (kept with the members).
	Voters int `msgpack:"voters,omitempty"`
}

// fsm applies log entries to the state. Readers take copies under the lock.
type fsm struct {
	mu      sync.RWMutex
	state   fsmState
	running []string      // ids of running jobs in submission order
	changed chan struct{} // signalled (without blocking) after every apply
	onApply func(*command)
	// onMembers, if set, sees the consortium after every change to it
	// (called with the lock held; it must not call back into the fsm).
	onMembers func(*Consortium)
	// applied is the index of the last entry Apply has processed. Raft's
	// own AppliedIndex moves when it hands entries to the FSM goroutine,
	// before Apply has run; the runner must wait for Apply.
	applied atomic.Uint64
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
	defer f.applied.Store(l.Index)
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
	if c.Op == opAddMember || c.Op == opRemoveMember {
		return f.applyMembers(c)
	}
	j := f.state.Jobs[c.Job]
	if c.Op == opSubmit {
		if j != nil {
			return fmt.Errorf("job %s already exists", c.Job)
		}
		spec, err := job.ParseSpec(c.Spec, "job "+c.Job)
		if err != nil {
			return err
		}
		f.state.Jobs[c.Job] = &JobRecord{ID: c.Job, Kind: spec.Kind, Spec: c.Spec, Seed: c.Seed, Status: StatusRunning, Submitted: c.Time}
		f.state.Order = append(f.state.Order, c.Job)
		f.running = append(f.running, c.Job)
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
			j.addStep(rec)
		} else if rec.Done {
			return fmt.Errorf("step %s/%d of job %s is already done", c.Step.Phase, c.Step.Round, c.Job)
		} else if c.Step.Attempt <= rec.Attempt {
			return fmt.Errorf("step %s/%d attempt %d is not newer than %d", c.Step.Phase, c.Step.Round, c.Step.Attempt, rec.Attempt)
		}
		rec.Step, rec.Attempt, rec.Started = *c.Step, c.Step.Attempt, c.Time
	case opDone:
		if c.Record == nil {
			return fmt.Errorf("done without a record")
		}
		st := c.Record.Step
		rec := j.step(st.Phase, st.Round)
		if rec == nil || rec.Attempt != st.Attempt || rec.Done {
			return fmt.Errorf("done for step %s/%d attempt %d that is not running", st.Phase, st.Round, st.Attempt)
		}
		rec.Record, rec.Finished, rec.Done = c.Record, c.Time, true
		rec.Failed = sortedKeys(c.Record.Failed)
	case opFinish:
		f.end(j, StatusDone, c.Time, func(e *JobRecord) { e.Result = c.Result })
	case opFail, opCancel:
		f.end(j, StatusFailed, c.Time, func(e *JobRecord) { e.Error, e.Failures = c.Error, c.Failures })
	default:
		return fmt.Errorf("unknown operation %q", c.Op)
	}
	return nil
}

// end replaces a job's record with its compacted final form: spec, status,
// result or error, and at most keptSteps step summaries without their args
// and records. The old record may be shared with a snapshot in progress, so
// it is not mutated.
func (f *fsm) end(j *JobRecord, status string, at time.Time, set func(*JobRecord)) {
	e := &JobRecord{ID: j.ID, Kind: j.Kind, Spec: j.Spec, Seed: j.Seed, Status: status, Submitted: j.Submitted,
		Finished: at, DroppedSteps: j.DroppedSteps}
	steps := j.Steps
	if len(steps) > keptSteps {
		e.DroppedSteps += len(steps) - keptSteps
		steps = steps[len(steps)-keptSteps:]
	}
	for _, s := range steps {
		c := *s
		c.Step, c.Record = job.Step{}, nil
		e.Steps = append(e.Steps, &c)
	}
	set(e)
	f.state.Jobs[j.ID] = e
	f.running = slices.DeleteFunc(f.running, func(id string) bool { return id == j.ID })
}

func (j *JobRecord) addStep(s *StepRecord) {
	j.Steps = append(j.Steps, s)
	if j.index != nil {
		j.index[stepKey{s.Phase, s.Round}] = len(j.Steps) - 1
	}
}

// step finds a step by phase and round through the index.
func (j *JobRecord) step(phase string, round int) *StepRecord {
	if j.index == nil {
		j.index = make(map[stepKey]int, len(j.Steps))
		for i, s := range j.Steps {
			j.index[stepKey{s.Phase, s.Round}] = i
		}
	}
	if i, ok := j.index[stepKey{phase, round}]; ok {
		return j.Steps[i]
	}
	return nil
}

// job returns a copy of one job record, safe to read without the lock.
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

// activeJob is what the runner needs of a running job: no finished steps.
type activeJob struct {
	ID    string
	Kind  string
	Spec  []byte
	Seed  []byte
	Open  []job.Step // attempts started and not done, oldest first
	Steps int        // steps started so far
	Queue int        // place among running jobs that have not started a step (0: started)
}

// active returns the running jobs in submission order, with the attempts
// each has open. Its cost does not grow with finished jobs or steps.
func (f *fsm) active() []activeJob {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := make([]activeJob, 0, len(f.running))
	queue := 0
	for _, id := range f.running {
		j := f.state.Jobs[id]
		a := activeJob{ID: j.ID, Kind: j.Kind, Spec: j.Spec, Seed: j.Seed, Steps: len(j.Steps)}
		if len(j.Steps) == 0 {
			queue++
			a.Queue = queue
		}
		// Open attempts are at the end: a job starts a step once the ones
		// before it are done, except for steps it runs side by side.
		for i := len(j.Steps) - 1; i >= 0 && i >= len(j.Steps)-openScan; i-- {
			if s := j.Steps[i]; !s.Done {
				a.Open = append(a.Open, s.Step)
			}
		}
		slices.Reverse(a.Open)
		out = append(out, a)
	}
	return out
}

// queuePosition is a running job's place among the running jobs that have
// not started a step, in submission order (0 when it has started).
func (f *fsm) queuePosition(id string) int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	pos := 0
	for _, r := range f.running {
		if len(f.state.Jobs[r].Steps) == 0 {
			pos++
			if r == id {
				return pos
			}
		}
	}
	return 0
}

// openScan bounds how far back active looks for open attempts.
const openScan = 32

// stepState returns a copy of one step's record (nil if never started) and
// the job's status.
func (f *fsm) stepState(jobID, phase string, round int) (*StepRecord, string, bool) {
	f.mu.Lock() // the index may be built
	defer f.mu.Unlock()
	j, ok := f.state.Jobs[jobID]
	if !ok {
		return nil, "", false
	}
	s := j.step(phase, round)
	if s == nil {
		return nil, j.Status, true
	}
	c := *s
	return &c, j.Status, true
}

// history returns the committed records of a job's finished steps in the
// order the steps started (records are immutable once committed).
func (f *fsm) history(jobID string) []*job.Record {
	f.mu.RLock()
	defer f.mu.RUnlock()
	j, ok := f.state.Jobs[jobID]
	if !ok {
		return nil
	}
	var out []*job.Record
	for _, s := range j.Steps {
		if s.Done && s.Record != nil {
			out = append(out, s.Record)
		}
	}
	return out
}

// status returns a job's status without copying it.
func (f *fsm) status(id string) (string, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	j, ok := f.state.Jobs[id]
	if !ok {
		return "", false
	}
	return j.Status, true
}

func (j *JobRecord) clone() *JobRecord {
	c := *j
	c.index = nil
	c.Steps = make([]*StepRecord, len(j.Steps))
	for i, s := range j.Steps {
		sc := *s
		c.Steps[i] = &sc
	}
	return &c
}

// Snapshot implements raft.FSM. It only captures references: ended jobs'
// records are immutable and shared, running ones are copied; Persist does
// the encoding outside the lock.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	s := &fsmSnapshot{state: fsmState{Jobs: make(map[string]*JobRecord, len(f.state.Jobs)), Order: slices.Clone(f.state.Order),
		Members: slices.Clone(f.state.Members), Voters: f.state.Voters}}
	for id, j := range f.state.Jobs {
		s.state.Jobs[id] = j
	}
	for _, id := range f.running {
		s.state.Jobs[id] = f.state.Jobs[id].clone()
	}
	return s, nil
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
	var running []string
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
		if j.Status == StatusRunning {
			running = append(running, id)
		}
	}
	if len(s.Members) > 0 {
		if err := (&Consortium{Members: s.Members, VotersWanted: s.Voters}).Validate("snapshot"); err != nil {
			return fmt.Errorf("restore snapshot: %w", err)
		}
	}
	f.mu.Lock()
	if len(s.Members) == 0 { // a snapshot from before membership was kept in the log
		s.Members, s.Voters = f.state.Members, f.state.Voters
	}
	f.state, f.running = s, running
	if f.onMembers != nil {
		f.onMembers(f.consortiumLocked())
	}
	f.mu.Unlock()
	f.notify()
	return nil
}

type fsmSnapshot struct{ state fsmState }

func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	b, err := protocol.Marshal(&s.state)
	if err != nil {
		sink.Cancel()
		return fmt.Errorf("persist snapshot: %w", err)
	}
	if _, err := sink.Write(b); err != nil {
		sink.Cancel()
		return fmt.Errorf("persist snapshot: %w", err)
	}
	return sink.Close()
}

func (s *fsmSnapshot) Release() {}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
