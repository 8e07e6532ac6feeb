package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
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
	Verdict string `json:"verdict"`
	Rule    string `json:"rule,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Detail is what this organisation's own ledger adds to a refusal
	// (which dataset, which rule of its policy); it never leaves the node.
	Detail string    `json:"detail,omitempty"`
	Time   time.Time `json:"time"`
	// Approval is a person's decision on a job that waited for one:
	// "approved" or "rejected" (with Reason), empty otherwise.
	Approval string `json:"approval,omitempty"`
	// Fault, with Verdict Refused, is why this node could not decide: its
	// state could not be written (a full disk). It is this node's failure,
	// not its policy's answer, so the job may go on without it.
	Fault error `json:"-"`
}

// StateError is a failure to write the policy state. Its text is what a
// member may read (the system error, "no space left on device"), never
// the file's path; Unwrap gives the whole error for this node's own log.
type StateError struct{ Err error }

func (e *StateError) Error() string {
	var errno syscall.Errno
	if errors.As(e.Err, &errno) {
		return "its policy state cannot be written: " + errno.Error()
	}
	return "its policy state cannot be written"
}

func (e *StateError) Unwrap() error { return e.Err }

// Refusal returns the decision's refusal, nil unless it refuses.
func (d Decision) Refusal() *Refusal {
	if d.Verdict != Refused {
		return nil
	}
	return &Refusal{Rule: d.Rule, Reason: d.Reason, Detail: d.Detail}
}

// AggregateRecord is one aggregate this node's data entered. Table is the
// dataset's name (job.DatasetName), never a spec's.
type AggregateRecord struct {
	Job     string    `json:"job"`
	Table   string    `json:"dataset"`
	Column  string    `json:"column"`
	Parties []string  `json:"parties"`
	Rows    int       `json:"rows"`
	Noised  bool      `json:"noised,omitempty"`
	Time    time.Time `json:"time"`
	// LegacyTable is the spec's table name a record of a store from
	// before datasets holds (see migrate); such a record weighs on every
	// dataset's column of its name.
	LegacyTable string `json:"table,omitempty"`
}

// stateVersion is the store's format: 1 keys everything on datasets.
const stateVersion = 1

// state is what the store keeps.
type state struct {
	Version int `json:"version"`
	// Seq is the last journal entry the state holds (journal.go).
	Seq        uint64              `json:"seq,omitempty"`
	Decisions  map[string]Decision `json:"decisions"`
	Approvals  map[string]Decision `json:"approvals"` // a person's decisions, by job
	Aggregates []AggregateRecord   `json:"aggregates"`
	Spent      map[string]Amount   `json:"spent"` // by "dataset.column"
	// LegacySpent is what a store from before datasets had spent, by
	// column: it counts against every dataset's column of that name.
	LegacySpent map[string]Amount `json:"legacy_spent,omitempty"`
	Releases    map[string]int    `json:"releases"` // exact releases by dataset
	// JobSpends are the newest draws with the job that made them, so that
	// a job admitted again at a later step weighs its declared budget
	// against what other jobs spent, not against its own draws.
	JobSpends []JobSpend `json:"job_spends,omitempty"`
	// JobReleases are the newest exact releases with the job that made
	// them, for the same reason: a job counts its releases before its
	// last steps (quantile, before the round that could finish a value),
	// and is admitted again at each of them.
	JobReleases []JobRelease `json:"job_releases,omitempty"`
	// Synthetic are the synthetic releases published by dataset, and
	// JobSynthetic the newest with the job that published them, each job
	// counted once (synthetic.go).
	Synthetic    map[string]int `json:"synthetic_releases,omitempty"`
	JobSynthetic []JobRelease   `json:"job_synthetic,omitempty"`
	// Formed records, per job, the dataset columns whose total this node
	// helped decrypt and over which parties.
	Formed map[string][]FormedRecord `json:"formed"`
	// Nonces are the submissions seen within the submission window.
	Nonces map[string]NonceRecord `json:"submission_nonces"`
}

// FormedRecord is one total of a dataset column that this node sent a
// decryption share of, in one job.
type FormedRecord struct {
	Table   string   `json:"dataset"`
	Column  string   `json:"column"`
	Parties []string `json:"parties"`
}

// JobRelease is one exact release by a job of a dataset's pooled value.
type JobRelease struct {
	Job     string `json:"job"`
	Dataset string `json:"dataset"`
}

// JobSpend is one draw of noise by a job on a "dataset.column".
type JobSpend struct {
	Job    string `json:"job"`
	Key    string `json:"key"`
	Amount Amount `json:"amount"`
}

// NonceRecord is a submission's nonce: the job it belongs to and the
// submission's time, after which (plus the window) it is forgotten.
type NonceRecord struct {
	Job  string    `json:"job"`
	Time time.Time `json:"time"`
}

// Bounds on what the store keeps: decisions and aggregates of old jobs go
// first. A differencing attack needs an earlier aggregate; a node that has
// seen more than maxAggregates keeps the newest. Decisions and aggregates
// are trimmed in batches, once they pass their bound by an eighth, so that
// a node at its bounds does not scan or copy them all on every job.
const (
	maxDecisions  = 10_000
	maxAggregates = 50_000
	maxJobSpends  = 10_000 // JobSpends, and JobReleases
)

// Store keeps a node's decisions, approvals, aggregates and spending in
// one JSON file in its data dir, a snapshot written whole and atomically,
// and a journal of the changes since (journal.go), each appended and synced
// before the change is acknowledged, so they survive restarts and crashes;
// with no file it keeps them in memory.
type Store struct {
	path string
	mu   sync.Mutex
	st   state
	j    journal
	// byColumn indexes st.Aggregates by "table\x00column".
	byColumn map[string][]AggregateRecord
}

// StateFile is the store's file in a node's data dir.
const StateFile = "policy-state.json"

// OpenStore opens the store at path, or an empty one if the file does not
// exist yet.
func OpenStore(path string) (*Store, error) {
	s := &Store{path: path, st: emptyState(), j: journal{path: journalPath(path), every: compactEvery}}
	s.reindex()
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("policy state: %w", err)
	default:
		s.st = state{} // a file without a version is from before datasets
		if err := json.Unmarshal(b, &s.st); err != nil {
			return nil, fmt.Errorf("policy state %s: %w", path, err)
		}
		s.migrate()
		s.fill()
	}
	if err := s.replay(); err != nil {
		return nil, err
	}
	return s, nil
}

// migrate carries a store from before datasets over, conservatively: its
// records and spending were keyed on the names specs gave, which cannot be
// mapped to datasets, so each weighs on every dataset's column of the same
// name (an upgraded node forgets no aggregate and no spending).
func (s *Store) migrate() {
	if s.st.Version >= stateVersion {
		return
	}
	for i := range s.st.Aggregates {
		if a := &s.st.Aggregates[i]; a.Table == "" && a.LegacyTable == "" {
			a.LegacyTable = "?"
		}
	}
	for key, a := range s.st.Spent {
		col := columnOf(key)
		if s.st.LegacySpent == nil {
			s.st.LegacySpent = map[string]Amount{}
		}
		s.st.LegacySpent[col] = s.st.LegacySpent[col].plus(a)
	}
	s.st.Spent = nil
	s.st.Version = stateVersion
}

// MemoryStore is a store that keeps nothing on disk (tests, jobtest).
func MemoryStore() *Store {
	s := &Store{st: emptyState()}
	s.reindex()
	return s
}

func emptyState() state {
	return state{Version: stateVersion, Decisions: map[string]Decision{}, Approvals: map[string]Decision{}, Spent: map[string]Amount{},
		Releases: map[string]int{}, Synthetic: map[string]int{}, Formed: map[string][]FormedRecord{}, Nonces: map[string]NonceRecord{}}
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
	if s.st.Releases == nil {
		s.st.Releases = e.Releases
	}
	if s.st.Synthetic == nil {
		s.st.Synthetic = e.Synthetic
	}
	if s.st.Formed == nil {
		s.st.Formed = e.Formed
	}
}

// save writes the whole state as the snapshot; s.mu is held. The journal
// is emptied after it (compact).
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
	if !s.applyDecision(jobID, d) {
		return false, nil
	}
	return true, s.persist(entry{Op: opDecision, Job: jobID, Decision: &d})
}

func (s *Store) applyDecision(jobID string, d Decision) bool {
	old, ok := s.st.Decisions[jobID]
	if ok && old.Verdict == d.Verdict && old.Rule == d.Rule && old.Approval == d.Approval {
		return false
	}
	s.st.Decisions[jobID] = d
	trimOldest(s.st.Decisions, maxDecisions)
	return true
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
	s.applyApproval(jobID, d)
	return s.persist(entry{Op: opApproval, Job: jobID, Decision: &d})
}

func (s *Store) applyApproval(jobID string, d Decision) {
	s.st.Approvals[jobID] = d
	trimOldest(s.st.Approvals, maxDecisions)
}

// reindex rebuilds byColumn; s.mu is held (or the store is new).
func (s *Store) reindex() {
	s.byColumn = map[string][]AggregateRecord{}
	for _, a := range s.st.Aggregates {
		k := indexKey(a)
		s.byColumn[k] = append(s.byColumn[k], a)
	}
}

// indexKey is a record's key in byColumn: its dataset and column, or for a
// legacy record its column alone.
func indexKey(a AggregateRecord) string {
	if a.LegacyTable != "" {
		return "\x00legacy\x00" + a.Column
	}
	return a.Table + "\x00" + a.Column
}

// earlier returns the aggregates recorded over one dataset's column, and
// the legacy records of its column name (an Earlier).
func (s *Store) earlier(dataset, column string) []AggregateRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.byColumn[dataset+"\x00"+column])
	for _, a := range s.byColumn["\x00legacy\x00"+column] {
		a.Table = dataset
		out = append(out, a)
	}
	return out
}

// history returns every aggregate recorded and the spending, as copies.
func (s *Store) history() ([]AggregateRecord, map[string]Amount) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.st.Aggregates), s.spentLocked()
}

// History returns what a check weighs: the earlier aggregates and copies
// of the spending and the exact releases.
func (s *Store) History() History {
	return s.HistoryFor("")
}

// HistoryFor is History for a check of jobID: its own draws are left out
// of what is spent, and its own exact releases out of those counted, as
// its declared budget and releases count them.
func (s *Store) HistoryFor(jobID string) History {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := History{Earlier: s.earlier, Spent: s.spentLocked(), LegacySpent: maps.Clone(s.st.LegacySpent), Releases: maps.Clone(s.st.Releases)}
	for _, js := range s.st.JobSpends {
		if jobID != "" && js.Job == jobID {
			h.Spent[js.Key] = h.Spent[js.Key].minus(js.Amount)
		}
	}
	for _, jr := range s.st.JobReleases {
		if jobID != "" && jr.Job == jobID && h.Releases[jr.Dataset] > 0 {
			h.Releases[jr.Dataset]--
		}
	}
	return h
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
	if !s.applyAggregate(a) {
		return nil
	}
	return s.persist(entry{Op: opAggregate, Aggregate: &a})
}

func (s *Store) applyAggregate(a AggregateRecord) bool {
	for _, e := range s.byColumn[a.Table+"\x00"+a.Column] {
		if e.Job == a.Job && slices.Equal(e.Parties, a.Parties) && e.Rows == a.Rows {
			return false
		}
	}
	s.st.Aggregates = append(s.st.Aggregates, a)
	k := indexKey(a)
	s.byColumn[k] = append(s.byColumn[k], a)
	if n := len(s.st.Aggregates); n > maxAggregates+maxAggregates/8 {
		s.st.Aggregates = slices.Clone(s.st.Aggregates[n-maxAggregates:])
		s.reindex()
	}
	return true
}

// spend adds to a column's spending if the budget holds it; it reports
// whether it did.
func (s *Store) spend(jobID, dataset, column string, a, budget Amount) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.applySpend(jobID, dataset, column, a, budget) {
		return false, nil
	}
	return true, s.persist(entry{Op: opSpend, Job: jobID, Dataset: dataset, Column: column, Amount: &a, Budget: &budget})
}

func (s *Store) applySpend(jobID, dataset, column string, a, budget Amount) bool {
	key := dataset + "." + column
	cur, legacy := s.st.Spent[key], s.st.LegacySpent[column]
	if !cur.plus(legacy).plus(a).within(budget) {
		return false
	}
	s.st.Spent[key] = cur.plus(a)
	s.st.JobSpends = append(s.st.JobSpends, JobSpend{Job: jobID, Key: key, Amount: a})
	if n := len(s.st.JobSpends); n > maxJobSpends {
		s.st.JobSpends = slices.Clone(s.st.JobSpends[n-maxJobSpends:])
	}
	return true
}

// release counts one exact release of a dataset by a job if the
// allowance holds it; it reports whether it did.
func (s *Store) release(jobID, dataset string, allowance int) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.applyRelease(jobID, dataset, allowance) {
		return false, nil
	}
	return true, s.persist(entry{Op: opRelease, Job: jobID, Dataset: dataset, Allowance: allowance})
}

func (s *Store) applyRelease(jobID, dataset string, allowance int) bool {
	if s.st.Releases[dataset]+1 > allowance {
		return false
	}
	s.st.Releases[dataset]++
	s.st.JobReleases = append(s.st.JobReleases, JobRelease{Job: jobID, Dataset: dataset})
	if n := len(s.st.JobReleases); n > maxJobSpends {
		s.st.JobReleases = slices.Clone(s.st.JobReleases[n-maxJobSpends:])
	}
	return true
}

// Formed returns the totals this node helped decrypt in a job (for an
// owner's tools and tests: what a later guard weighs).
func (s *Store) Formed(jobID string) []FormedRecord { return s.formed(jobID) }

// formed returns the totals this node helped decrypt in a job.
func (s *Store) formed(jobID string) []FormedRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.st.Formed[jobID])
}

// addFormed records that this node helped decrypt totals of a job.
func (s *Store) addFormed(jobID string, recs []FormedRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.applyFormed(jobID, recs) {
		return nil
	}
	return s.persist(entry{Op: opFormed, Job: jobID, Formed: recs})
}

func (s *Store) applyFormed(jobID string, recs []FormedRecord) bool {
	changed := false
	for _, r := range recs {
		if !slices.ContainsFunc(s.st.Formed[jobID], func(e FormedRecord) bool {
			return e.Table == r.Table && e.Column == r.Column && slices.Equal(e.Parties, r.Parties)
		}) {
			s.st.Formed[jobID] = append(s.st.Formed[jobID], r)
			changed = true
		}
	}
	if !changed {
		return false
	}
	for len(s.st.Formed) > maxDecisions {
		delete(s.st.Formed, slices.Min(slices.Collect(maps.Keys(s.st.Formed)))) // job ids begin with their time
	}
	return true
}

// useNonce records a submission's nonce for a job; it fails when another
// job used it within the window (a replayed submission). Nonces older
// than the window are forgotten: a submission that old is refused by its
// time.
func (s *Store) useNonce(nonce, jobID string, at time.Time, window time.Duration, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.st.Nonces[nonce]; ok {
		if prev.Job != jobID {
			return fmt.Errorf("job %s", prev.Job)
		}
		return nil
	}
	s.applyNonce(nonce, jobID, at, window, now)
	if err := s.persist(entry{Op: opNonce, Job: jobID, Nonce: nonce, At: at, Window: window, Now: now}); err != nil {
		// Not kept: a restart would forget it, so the job is not admitted
		// on it until it is written.
		delete(s.st.Nonces, nonce)
		return &StateError{Err: err}
	}
	return nil
}

// applyNonce forgets the nonces older than the window and keeps nonce.
func (s *Store) applyNonce(nonce, jobID string, at time.Time, window time.Duration, now time.Time) {
	for k, r := range s.st.Nonces {
		if now.Sub(r.Time) > window {
			delete(s.st.Nonces, k)
		}
	}
	s.st.Nonces[nonce] = NonceRecord{Job: jobID, Time: at}
}

// trimOldest drops the oldest decisions beyond max once there are an
// eighth more (oldest first, ties by job id).
func trimOldest(m map[string]Decision, max int) {
	if len(m) <= max+max/8 {
		return
	}
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		if c := m[a].Time.Compare(m[b].Time); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for _, k := range keys[:len(keys)-max] {
		delete(m, k)
	}
}
