package node

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

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
	// until Raft has started (booted). started is when this node began
	// to take job messages (setStarted); appendedBefore holds the
	// attempts the leader appended before it whose start entries arrived
	// after the boot index, and toldLate the steps one of those was
	// reported for (startedBeforeBoot). All under bootMu.
	bootMu         sync.Mutex
	bootIndex      uint64
	booting        bool
	beforeBoot     map[bootStep]bool
	started        time.Time
	appendedBefore map[bootStep]bool
	toldLate       map[lateStep]bool
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

// lateStep names one step, whatever its attempt.
type lateStep struct {
	job, phase string
	round      int
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

// setStarted records when the node began to take job messages: from
// then on every message sent to it reaches this instance (or fails), not
// an earlier one. A node restarted in one process (sim) is a new
// instance, so this is per fsm, not per process.
func (f *fsm) setStarted(t time.Time) {
	f.bootMu.Lock()
	defer f.bootMu.Unlock()
	f.started = t
}

// noteStart remembers an attempt begun before this node instance started,
// from its start entry l: one the log held when the process started (at
// or below the boot index), or one the leader appended before the node
// began to take job messages (l.AppendedAt, the leader's clock, before
// started).
//
// The second case is an attempt the node's log did not yet hold as its
// earlier instance stopped: peers that had applied it may have sent the
// earlier instance its messages, which it acknowledged into a mailbox
// that died with it (a follower's log lags its peers' by a heartbeat, and
// a message accepted before its attempt is applied is kept, not refused),
// or their sends failed while the node was down and their failure
// notices with them. Run afresh, the attempt would wait for those
// messages until the step's timeout. Such an attempt is reported as
// restarted instead, which costs one re-run when nothing was lost.
//
// AppendedAt is the leader's clock and started this node's. A leader
// whose clock is ahead by more than the restart took leaves an attempt
// unflagged: today's behaviour, the step timeout. One behind flags
// attempts appended after the start too, and would flag each re-run of
// them, so an attempt is flagged this way once per step (toldLate): the
// skew costs at most one needless re-run per step. An entry without
// AppendedAt (written before hashicorp/raft v1.3) is never flagged.
func (f *fsm) noteStart(l *raft.Log, s *job.Step) {
	f.bootMu.Lock()
	defer f.bootMu.Unlock()
	switch {
	case l.Index != 0 && l.Index <= f.bootIndex:
		if f.beforeBoot == nil {
			f.beforeBoot = map[bootStep]bool{}
		}
		f.beforeBoot[bootStepOf(s)] = true
	case !f.started.IsZero() && !l.AppendedAt.IsZero() && l.AppendedAt.Before(f.started):
		if f.appendedBefore == nil {
			f.appendedBefore = map[bootStep]bool{}
		}
		f.appendedBefore[bootStepOf(s)] = true
	}
}

// startedBeforeBoot reports whether step began before this node instance
// started (noteStart), so that messages of it may be lost
// (runner.Rebooted). The worker asks once per attempt it runs; an attempt
// known only by the leader's clock is reported for the first such attempt
// of its step alone.
func (f *fsm) startedBeforeBoot(s job.Step) bool {
	f.bootMu.Lock()
	defer f.bootMu.Unlock()
	k := bootStepOf(&s)
	if f.beforeBoot[k] {
		return true
	}
	if !f.appendedBefore[k] {
		return false
	}
	delete(f.appendedBefore, k)
	step := lateStep{s.Job, s.Phase, s.Round}
	if f.toldLate[step] {
		return false
	}
	if f.toldLate == nil {
		f.toldLate = map[lateStep]bool{}
	}
	f.toldLate[step] = true
	return true
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
		f.noteStart(l, c.Entry.Step)
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
