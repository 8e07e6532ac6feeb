package policy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The store's journal. Writing the whole state on every change cost a
// node at its bounds (10,000 decisions, 50,000 aggregates) half a second
// per change, several per job; so each change is appended to a journal
// of JSON lines beside the snapshot and synced before it is acknowledged,
// and the snapshot is rewritten (and the journal emptied) only every
// compactEvery changes. On open, the entries after the snapshot's Seq are
// applied again, in order, through the same apply functions that made
// them: the checks (a budget, an allowance) give the same answers on the
// same state, so replay rebuilds exactly what was acknowledged. An entry
// whose line was cut short by a crash was never acknowledged and is
// dropped; anything else unreadable refuses to open, as a bad snapshot
// does.

// compactEvery is how many journal entries trigger a new snapshot.
const compactEvery = 1024

// Journal operations.
const (
	opDecision  = "decision"
	opApproval  = "approval"
	opAggregate = "aggregate"
	opSpend     = "spend"
	opRelease   = "release"
	opSynthetic = "synthetic"
	opFormed    = "formed"
	opNonce     = "nonce"
)

// entry is one change, with everything its apply function needs.
type entry struct {
	Seq       uint64           `json:"seq"`
	Op        string           `json:"op"`
	Job       string           `json:"job,omitempty"`
	Decision  *Decision        `json:"decision,omitempty"`
	Aggregate *AggregateRecord `json:"aggregate,omitempty"`
	Dataset   string           `json:"dataset,omitempty"`
	Column    string           `json:"column,omitempty"`
	Amount    *Amount          `json:"amount,omitempty"`
	Budget    *Amount          `json:"budget,omitempty"`
	Allowance int              `json:"allowance,omitempty"`
	Formed    []FormedRecord   `json:"formed,omitempty"`
	Nonce     string           `json:"nonce,omitempty"`
	At        time.Time        `json:"at,omitzero"`
	Window    time.Duration    `json:"window,omitempty"`
	Now       time.Time        `json:"now,omitzero"`
}

// journal is the file of entries since the snapshot.
type journal struct {
	path    string
	every   int  // entries that trigger a snapshot: compactEvery
	entries int  // entries in the file
	dirty   bool // an append failed: the next change writes a snapshot
}

// journalPath is the journal beside the snapshot at path.
func journalPath(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".journal"
}

// persist makes a change applied to s.st durable; s.mu is held. With no
// file it does nothing.
func (s *Store) persist(e entry) error {
	if s.path == "" {
		return nil
	}
	s.st.Seq++
	e.Seq = s.st.Seq
	if s.j.dirty || s.j.entries+1 >= s.j.every {
		return s.compact()
	}
	if err := s.j.append(e); err != nil {
		s.j.dirty = true // what is in memory reaches the disk with the next change
		return fmt.Errorf("policy state: %w", err)
	}
	s.j.entries++
	return nil
}

// compact writes the snapshot and empties the journal; s.mu is held. A
// crash between the two leaves entries the snapshot already holds, which
// replay skips by their Seq.
func (s *Store) compact() error {
	if err := s.save(); err != nil {
		s.j.dirty = true
		return err
	}
	if err := os.Truncate(s.j.path, 0); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.j.dirty = true
		return fmt.Errorf("policy state: %w", err)
	}
	s.j.entries, s.j.dirty = 0, false
	return nil
}

// append writes e as one line and syncs it; on failure it cuts the file
// back to where it was, so that no partial line stays before later ones.
func (j *journal) append(e entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(j.path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(j.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err == nil {
		_, err = f.Write(append(b, '\n'))
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil && st != nil {
		_ = f.Truncate(st.Size())
	}
	return errors.Join(err, f.Close())
}

// replay applies the journal's entries after the snapshot's Seq.
func (s *Store) replay() error {
	b, err := os.ReadFile(s.j.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("policy state journal: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, len(b)+1)
	line := 0
	for sc.Scan() {
		line++
		var e entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			if !bytes.HasSuffix(b, []byte("\n")) && line == bytes.Count(b, []byte("\n"))+1 {
				// The last line, cut short by a crash: never acknowledged.
				// Cut it off, or the next entry would follow it.
				if err := os.Truncate(s.j.path, int64(bytes.LastIndexByte(b, '\n')+1)); err != nil {
					return fmt.Errorf("policy state journal: %w", err)
				}
				break
			}
			return fmt.Errorf("policy state journal, line %d: %w", line, err)
		}
		s.j.entries++
		if e.Seq <= s.st.Seq {
			continue // in the snapshot already
		}
		if e.Seq != s.st.Seq+1 {
			return fmt.Errorf("policy state journal, line %d: entry %d after %d", line, e.Seq, s.st.Seq)
		}
		if err := s.apply(e); err != nil {
			return fmt.Errorf("policy state journal, line %d: %w", line, err)
		}
		s.st.Seq = e.Seq
	}
	return sc.Err()
}

// apply redoes one entry's change.
func (s *Store) apply(e entry) error {
	switch {
	case e.Op == opDecision && e.Decision != nil:
		s.applyDecision(e.Job, *e.Decision)
	case e.Op == opApproval && e.Decision != nil:
		s.applyApproval(e.Job, *e.Decision)
	case e.Op == opAggregate && e.Aggregate != nil:
		s.applyAggregate(*e.Aggregate)
	case e.Op == opSpend && e.Amount != nil && e.Budget != nil:
		s.applySpend(e.Job, e.Dataset, e.Column, *e.Amount, *e.Budget)
	case e.Op == opRelease:
		s.applyRelease(e.Job, e.Dataset, e.Allowance)
	case e.Op == opSynthetic:
		s.applySynthetic(e.Job, e.Dataset, e.Allowance)
	case e.Op == opFormed:
		s.applyFormed(e.Job, e.Formed)
	case e.Op == opNonce:
		s.applyNonce(e.Nonce, e.Job, e.At, e.Window, e.Now)
	default:
		return fmt.Errorf("an entry of unknown form (op %q)", e.Op)
	}
	return nil
}
