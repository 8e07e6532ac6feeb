package jobtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cohortdm/cohort/job"
	jobrun "github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/wire"
)

// Operations of the log: the runtime's (package job/runner), as the node's
// Raft log holds them.
const (
	OpSubmit = jobrun.OpSubmit
	OpStart  = jobrun.OpStart
	OpDone   = jobrun.OpDone
	OpFinish = jobrun.OpFinish
	OpFail   = jobrun.OpFail
)

// Entry is one committed entry of the in-memory log. Everything in it is
// what every member of a real consortium would hold.
type Entry struct {
	jobrun.Entry
	// Data is the entry as committed (msgpack): a leakage test searches it.
	Data []byte
}

// memLog is the log of one job. Entries are encoded when committed and
// decoded again before they are applied, so nothing a member reads shares
// memory with what the coordinator committed, and what does not survive
// the encoding fails here as it would over Raft. A term, bumped at every
// leader change, refuses appends from a deposed coordinator as raft
// refuses an Apply on a deposed leader.
type memLog struct {
	state *jobrun.State

	mu      sync.Mutex
	entries []Entry
	term    int
}

func newLog() *memLog { return &memLog{state: jobrun.NewState()} }

// commit appends e for a coordinator of the given term.
func (l *memLog) commit(term int, e *jobrun.Entry) error {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	data, err := wire.Marshal(e)
	if err != nil {
		return fmt.Errorf("jobtest: log %s: %w", e.Op, err)
	}
	var c jobrun.Entry
	if err := wire.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("jobtest: log %s: %w", e.Op, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if term != l.term {
		return fmt.Errorf("jobtest: %w", jobrun.ErrDeposed)
	}
	if err := l.state.Apply(&c); err != nil {
		return fmt.Errorf("jobtest: %w", err)
	}
	l.entries = append(l.entries, Entry{Entry: c, Data: data})
	return nil
}

// newTerm starts a new leader's term: appends from older terms fail.
func (l *memLog) newTerm() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.term++
	return l.term
}

// currentTerm returns the term.
func (l *memLog) currentTerm() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.term
}

// snapshot returns the entries so far, each decoded afresh.
func (l *memLog) snapshot() []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Entry, len(l.entries))
	for i, e := range l.entries {
		var c jobrun.Entry
		if err := wire.Unmarshal(e.Data, &c); err != nil {
			// Internal error: commit decoded these very bytes before keeping them.
			panic(fmt.Sprintf("jobtest: committed entry %d no longer decodes: %v", i, err))
		}
		out[i] = Entry{Entry: c, Data: e.Data}
	}
	return out
}

// termLog is the log as one leader's coordinator sees it.
type termLog struct {
	l    *memLog
	term int
}

func (t termLog) State() *jobrun.State { return t.l.state }

func (t termLog) Commit(ctx context.Context, e *jobrun.Entry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return t.l.commit(t.term, e)
}

// errNoSecrets is what a party given no Secrets reads.
var errNoSecrets = errors.New("jobtest: no secrets given for this party (Options.Secrets)")

type noSecrets struct{ party string }

func (s noSecrets) ReadSecret(name string) ([]byte, error) {
	return nil, fmt.Errorf("party %s: read %s: %w", s.party, name, errNoSecrets)
}

func (s noSecrets) WriteSecret(name string, _ []byte) error {
	return fmt.Errorf("party %s: write %s: %w", s.party, name, errNoSecrets)
}

func (s noSecrets) Parsed(names []string, _ func([][]byte) (any, error)) (any, error) {
	return nil, fmt.Errorf("party %s: read %v: %w", s.party, names, errNoSecrets)
}

// records returns the committed records of the kind's steps (not the
// runtime's admit phase), in commit order.
func records(log []Entry) []*job.Record {
	var out []*job.Record
	for _, e := range log {
		if e.Op == OpDone && e.Record.Step.Phase != jobrun.AdmitPhase {
			out = append(out, e.Record)
		}
	}
	return out
}
