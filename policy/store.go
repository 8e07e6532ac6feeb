package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/cohortdm/cohort/internal/atomicfile"
)

// Verdicts of a node on a job.
const (
	Accepted = "accepted"
	Refused  = "refused"
	Awaiting = "awaiting-approval"
)

// Decision is a node's verdict on a job and why.
type Decision struct {
	Verdict string    `json:"verdict"`
	Rule    string    `json:"rule,omitempty"`
	Reason  string    `json:"reason,omitempty"`
	Time    time.Time `json:"time"`
	// Approval is a person's decision on a job that waited for one:
	// "approved" or "rejected" (with Reason), empty otherwise.
	Approval string `json:"approval,omitempty"`
}

// Refusal returns the decision's refusal, nil unless it refuses.
func (d Decision) Refusal() *Refusal {
	if d.Verdict != Refused {
		return nil
	}
	return &Refusal{Rule: d.Rule, Reason: d.Reason}
}

// AggregateRecord is one aggregate this node's data entered.
type AggregateRecord struct {
	Job     string    `json:"job"`
	Table   string    `json:"table"`
	Column  string    `json:"column"`
	Parties []string  `json:"parties"`
	Rows    int       `json:"rows"`
	Noised  bool      `json:"noised,omitempty"`
	Time    time.Time `json:"time"`
}

// state is what the store keeps.
type state struct {
	Decisions  map[string]Decision `json:"decisions"`
	Approvals  map[string]Decision `json:"approvals"` // a person's decisions, by job
	Aggregates []AggregateRecord   `json:"aggregates"`
	Spent      map[string]Amount   `json:"spent"` // by "table.column"
	Nonces     map[string]string   `json:"nonces"`
}

// Bounds on what the store keeps: decisions and aggregates of old jobs go
// first. A differencing attack needs an earlier aggregate; a node that has
// seen more than maxAggregates keeps the newest.
const (
	maxDecisions  = 10_000
	maxAggregates = 50_000
)

// Store keeps a node's decisions, approvals, aggregates and spending in
// one JSON file in its data dir (written whole and atomically on every
// change), so they survive restarts; with no file it keeps them in memory.
type Store struct {
	path string
	mu   sync.Mutex
	st   state
	// byColumn indexes st.Aggregates by "table\x00column".
	byColumn map[string][]AggregateRecord
}

// StateFile is the store's file in a node's data dir.
const StateFile = "policy-state.json"

// OpenStore opens the store at path, or an empty one if the file does not
// exist yet.
func OpenStore(path string) (*Store, error) {
	s := &Store{path: path, st: emptyState()}
	s.reindex()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("policy state: %w", err)
	}
	if err := json.Unmarshal(b, &s.st); err != nil {
		return nil, fmt.Errorf("policy state %s: %w", path, err)
	}
	s.fill()
	return s, nil
}

// MemoryStore is a store that keeps nothing on disk (tests, jobtest).
func MemoryStore() *Store {
	s := &Store{st: emptyState()}
	s.reindex()
	return s
}

func emptyState() state {
	return state{Decisions: map[string]Decision{}, Approvals: map[string]Decision{}, Spent: map[string]Amount{}, Nonces: map[string]string{}}
}

func (s *Store) fill() {
	s.reindex()
	e := emptyState()
	if s.st.Decisions == nil {
		s.st.Decisions = e.Decisions
	}
	if s.st.Approvals == nil {
		s.st.Approvals = e.Approvals
	}
	if s.st.Spent == nil {
		s.st.Spent = e.Spent
	}
	if s.st.Nonces == nil {
		s.st.Nonces = e.Nonces
	}
}

// save writes the state; s.mu is held.
func (s *Store) save() error {
	if s.path == "" {
		return nil
	}
	b, err := json.MarshalIndent(&s.st, "", " ")
	if err != nil {
		return fmt.Errorf("policy state: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("policy state: %w", err)
	}
	if err := atomicfile.Write(s.path, b, 0o600); err != nil {
		return fmt.Errorf("policy state: %w", err)
	}
	return nil
}

// decision returns the node's decision on a job.
func (s *Store) decision(jobID string) (Decision, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.st.Decisions[jobID]
	return d, ok
}

// setDecision records a decision; it reports whether the verdict changed.
func (s *Store) setDecision(jobID string, d Decision) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.st.Decisions[jobID]
	if ok && old.Verdict == d.Verdict && old.Rule == d.Rule && old.Approval == d.Approval {
		return false, nil
	}
	s.st.Decisions[jobID] = d
	trimOldest(s.st.Decisions, maxDecisions)
	return true, s.save()
}

// approval returns a person's decision on a job.
func (s *Store) approval(jobID string) (Decision, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.st.Approvals[jobID]
	return d, ok
}

func (s *Store) setApproval(jobID string, d Decision) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.Approvals[jobID] = d
	trimOldest(s.st.Approvals, maxDecisions)
	return s.save()
}

// reindex rebuilds byColumn; s.mu is held (or the store is new).
func (s *Store) reindex() {
	s.byColumn = map[string][]AggregateRecord{}
	for _, a := range s.st.Aggregates {
		k := a.Table + "\x00" + a.Column
		s.byColumn[k] = append(s.byColumn[k], a)
	}
}

// earlier returns the aggregates recorded over one column (an Earlier).
func (s *Store) earlier(table, column string) []AggregateRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.byColumn[table+"\x00"+column])
}

// history returns every aggregate recorded and the spending, as copies.
func (s *Store) history() ([]AggregateRecord, map[string]Amount) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.st.Aggregates), s.spentLocked()
}

// spentCopy returns the spending per column, as a copy.
func (s *Store) spentCopy() map[string]Amount {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.spentLocked()
}

func (s *Store) spentLocked() map[string]Amount {
	spent := make(map[string]Amount, len(s.st.Spent))
	for k, v := range s.st.Spent {
		spent[k] = v
	}
	return spent
}

// addAggregate records an aggregate unless the same one (job, table,
// column, parties) is recorded already: a re-run of a step is one.
func (s *Store) addAggregate(a AggregateRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.byColumn[a.Table+"\x00"+a.Column] {
		if e.Job == a.Job && slices.Equal(e.Parties, a.Parties) && e.Rows == a.Rows {
			return nil
		}
	}
	s.st.Aggregates = append(s.st.Aggregates, a)
	k := a.Table + "\x00" + a.Column
	s.byColumn[k] = append(s.byColumn[k], a)
	if n := len(s.st.Aggregates); n > maxAggregates {
		s.st.Aggregates = slices.Clone(s.st.Aggregates[n-maxAggregates:])
		s.reindex()
	}
	return s.save()
}

// spend adds to a column's spending if the budget holds it; it reports
// whether it did.
func (s *Store) spend(key string, a, budget Amount) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.st.Spent[key]
	if cur.Epsilon+a.Epsilon > budget.Epsilon || cur.Delta+a.Delta > budget.Delta {
		return false, nil
	}
	s.st.Spent[key] = Amount{Epsilon: cur.Epsilon + a.Epsilon, Delta: cur.Delta + a.Delta}
	return true, s.save()
}

// useNonce records a submission nonce for a job; it fails when another
// job used it before (a replayed submission).
func (s *Store) useNonce(nonce, jobID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.st.Nonces[nonce]; ok && prev != jobID {
		return fmt.Errorf("job %s", prev)
	}
	if _, ok := s.st.Nonces[nonce]; ok {
		return nil
	}
	s.st.Nonces[nonce] = jobID
	trimOldestNonces(s.st.Nonces, maxDecisions)
	return s.save()
}

// trimOldest drops the oldest decisions beyond max.
func trimOldest(m map[string]Decision, max int) {
	for len(m) > max {
		var oldest string
		var at time.Time
		for k, d := range m {
			if oldest == "" || d.Time.Before(at) || d.Time.Equal(at) && k < oldest {
				oldest, at = k, d.Time
			}
		}
		delete(m, oldest)
	}
}

// trimOldestNonces drops nonces beyond max, those of the smallest job ids
// (job ids begin with their submission time) first.
func trimOldestNonces(m map[string]string, max int) {
	for len(m) > max {
		var oldest string
		for k, j := range m {
			if oldest == "" || j < m[oldest] {
				oldest = k
			}
		}
		delete(m, oldest)
	}
}
