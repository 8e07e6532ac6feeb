package node

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"

	"github.com/cohortdm/cohort/api"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/wire"
)

// Job statuses, as the runtime (package job/runner) keeps them.
const (
	StatusRunning = runner.StatusRunning
	StatusDone    = runner.StatusDone
	StatusFailed  = runner.StatusFailed
)

// StatusQueued is how the API shows a running job whose first step has not
// started yet (the log holds it as running).
const StatusQueued = api.StatusQueued

// JobRecord and StepRecord are the replicated state of a job and of one
// of its steps, as the runtime keeps them.
type (
	JobRecord  = runner.JobRecord
	StepRecord = runner.StepRecord
)

// Membership operations in the Raft log (members.go): Member is the member
// added, or named removed. Every other entry is the runtime's (runner.Entry).
const (
	opAddMember    = "member-add"
	opRemoveMember = "member-remove"
)

// command is one entry of the Raft log: a job entry of the runtime, or a
// membership change. Nothing in it is private to one member: the log
// reaches every member (see package job).
type command struct {
	runner.Entry `msgpack:",inline"`
	// Member is the member a membership operation adds or removes.
	Member *Member `msgpack:"member,omitempty"`
}

// fsmState is everything the log determines, as a snapshot holds it.
type fsmState struct {
	Jobs  map[string]*JobRecord `msgpack:"jobs"`
	Order []string              `msgpack:"order"` // job ids in submission order
	// Members is the consortium as the log has it: the consortium file's
	// members at start, changed by member-add and member-remove.
	Members []Member `msgpack:"members,omitempty"`
	// Voters is the consortium file's voters: (kept with the members).
	Voters int `msgpack:"voters,omitempty"`
}

// fsm applies log entries: job entries to the runtime's state, membership
// changes to the consortium. Readers take copies.
type fsm struct {
	jobs *runner.State

	mu      sync.RWMutex // guards members and voters
	members []Member
	voters  int

	changed chan struct{} // signalled (without blocking) after every apply
	onApply func(*command)
	// onMembers, if set, sees the consortium after every change to it
	// (called with the lock held; it must not call back into the fsm).
	onMembers func(*Consortium)
	// applied is the index of the last entry Apply has processed. Raft's
	// own AppliedIndex moves when it hands entries to the FSM goroutine,
	// before Apply has run; the runner must wait for Apply.
	applied atomic.Uint64

	// bootIndex is the last index of the node's log when its process
	// started (setBootIndex); beforeBoot holds the attempts whose start
	// entries were at or below it, or open in the snapshot Raft restored
	// as it started (runner.Rebooted); booting is set from setBootIndex
	// until Raft has started (booted). All under bootMu.
	bootMu     sync.Mutex
	bootIndex  uint64
	booting    bool
	beforeBoot map[bootStep]bool
}

func newFSM() *fsm {
	return &fsm{jobs: runner.NewState(), changed: make(chan struct{}, 1)}
}

// bootStep names one attempt of one step.
type bootStep struct {
	job, phase     string
	round, attempt int
}

func bootStepOf(s *job.Step) bootStep {
	return bootStep{s.Job, s.Phase, s.Round, s.Attempt}
}

// setBootIndex records the last index of the node's log as its process
// starts, before Raft applies any entry.
func (f *fsm) setBootIndex(i uint64) {
	f.bootMu.Lock()
	defer f.bootMu.Unlock()
	f.bootIndex, f.booting = i, true
}

// booted marks the end of Raft's start: a snapshot restored after it came
// from the leader (InstallSnapshot), with attempts this process may never
// have begun.
func (f *fsm) booted() {
	f.bootMu.Lock()
	defer f.bootMu.Unlock()
	f.booting = false
}

// noteRestored remembers the attempts open in a snapshot that Raft
// restored as the process started: their start entries are inside it, so
// Apply never sees them, and they were begun (if at all) by the process
// before this one.
func (f *fsm) noteRestored() {
	f.bootMu.Lock()
	defer f.bootMu.Unlock()
	if !f.booting {
		return
	}
	for _, a := range f.jobs.Active() {
		for i := range a.Open {
			if f.beforeBoot == nil {
				f.beforeBoot = map[bootStep]bool{}
			}
			f.beforeBoot[bootStepOf(&a.Open[i])] = true
		}
	}
}

// noteStart remembers an attempt whose start entry, at index i, the log
// held when the process started.
func (f *fsm) noteStart(i uint64, s *job.Step) {
	f.bootMu.Lock()
	defer f.bootMu.Unlock()
	if i == 0 || i > f.bootIndex {
		return
	}
	if f.beforeBoot == nil {
		f.beforeBoot = map[bootStep]bool{}
	}
	f.beforeBoot[bootStepOf(s)] = true
}

// startedBeforeBoot reports whether step's start entry was in the log
// when the node's process started (runner.Rebooted).
func (f *fsm) startedBeforeBoot(s job.Step) bool {
	f.bootMu.Lock()
	defer f.bootMu.Unlock()
	return f.beforeBoot[bootStepOf(&s)]
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
	if err := wire.Unmarshal(l.Data, &c); err != nil {
		return fmt.Errorf("apply log entry %d: %w", l.Index, err)
	}
	err := f.apply(&c)
	if err == nil && c.Entry.Op == runner.OpStart && c.Entry.Step != nil {
		f.noteStart(l.Index, c.Entry.Step)
	}
	if err == nil {
		if f.onApply != nil {
			f.onApply(&c)
		}
		f.notify()
	}
	return err
}

func (f *fsm) apply(c *command) error {
	if c.Op == opAddMember || c.Op == opRemoveMember {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.applyMembers(c)
	}
	return f.jobs.Apply(&c.Entry)
}

// Snapshot implements raft.FSM. It only captures references (see
// runner.State.Snapshot); Persist does the encoding outside the lock.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	jobs, order := f.jobs.Snapshot()
	f.mu.RLock()
	defer f.mu.RUnlock()
	return &fsmSnapshot{state: fsmState{Jobs: jobs, Order: order, Members: slices.Clone(f.members), Voters: f.voters}}, nil
}

// Restore implements raft.FSM.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	var s fsmState
	if err := wire.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	if len(s.Members) > 0 {
		if err := (&Consortium{Members: s.Members, VotersWanted: s.Voters}).Validate("snapshot"); err != nil {
			return fmt.Errorf("restore snapshot: %w", err)
		}
	}
	if err := f.jobs.Restore(s.Jobs, s.Order); err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	f.noteRestored()
	f.mu.Lock()
	if len(s.Members) > 0 { // a snapshot from before membership was kept in the log has none
		f.members, f.voters = s.Members, s.Voters
	}
	if f.onMembers != nil {
		f.onMembers(f.consortiumLocked())
	}
	f.mu.Unlock()
	f.notify()
	return nil
}

type fsmSnapshot struct{ state fsmState }

func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	b, err := wire.Marshal(&s.state)
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
