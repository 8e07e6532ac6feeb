// Package audit keeps each node's ledger of what it sent to other parties.
//
// The ledger is how an organisation checks what left its premises, so it is a
// plain JSON-lines file the organisation can read without Cohort: one object
// per message, appended and flushed to the operating system before Append
// returns, so that a crash loses at most the line being written. Reading is
// strict (unknown fields, bad lines and missing required fields are errors
// naming the line): a ledger that cannot be read exactly must not be
// summarised as if it were complete.
package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Entry records one message sent to another party.
type Entry struct {
	Time       time.Time `json:"time"`
	Job        string    `json:"job"`
	Phase      string    `json:"phase"`
	Peer       string    `json:"peer"`
	Type       string    `json:"type"`
	Bytes      int       `json:"bytes"`
	Disclosure string    `json:"disclosure"` // what the message reveals, a wire.Disclosure
	Round      int       `json:"round,omitempty"`
	// Decision is set on the entries that record the node's policy
	// decisions on a job (Type DecisionType, no peer, nothing sent): the
	// verdict, and the rule and reason behind it.
	Decision string `json:"decision,omitempty"`
	Rule     string `json:"rule,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// DecisionType is the type of the entries that record the node's policy
// decisions on a job.
const DecisionType = "policy/decision"

// ErrClosed is returned by Append on a closed ledger.
var ErrClosed = errors.New("audit: ledger closed")

// MaxLineBytes bounds one ledger line when reading, so a corrupt file cannot
// make the reader buffer without limit. Written entries are far smaller.
const MaxLineBytes = 1 << 20

// validate refuses entries that would make the ledger useless for checking
// disclosures: without a peer, type or disclosure a line says nothing.
func (e *Entry) validate() error {
	if e.Type == DecisionType {
		if e.Decision == "" || e.Job == "" || e.Bytes != 0 {
			return errors.New("a policy decision needs a job and a verdict, and sends nothing")
		}
		return nil
	}
	switch {
	case e.Decision != "":
		return errors.New("only " + DecisionType + " entries carry a decision")
	case e.Peer == "":
		return errors.New("missing peer")
	case e.Type == "":
		return errors.New("missing type")
	case e.Disclosure == "":
		return errors.New("missing disclosure")
	case e.Bytes < 0:
		return fmt.Errorf("negative bytes %d", e.Bytes)
	case e.Round < 0:
		return fmt.Errorf("negative round %d", e.Round)
	}
	return nil
}

// Ledger appends entries to one file. It is safe for concurrent use.
type Ledger struct {
	path string
	mu   sync.Mutex
	f    *os.File // nil once closed
	err  error    // the first write error: a ledger that lost a line stays failed
}

// Writable reports whether the ledger can still record entries. Senders
// check it first so that nothing leaves a node unrecorded.
func (l *Ledger) Writable() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return fmt.Errorf("audit: %s: %w", l.path, ErrClosed)
	}
	return l.err
}

// Open opens the ledger at path for appending, creating the file and its
// parent directories if needed. If an earlier run died mid-line, a newline is
// written first so that only the torn line is unreadable, not the next one too.
func Open(path string) (*Ledger, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("audit: create directory for %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("audit: open %s: %w", path, err)
	}
	if err := terminateLastLine(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("audit: open %s: %w", path, err)
	}
	return &Ledger{path: path, f: f}, nil
}

func terminateLastLine(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() == 0 {
		return nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], st.Size()-1); err != nil {
		return fmt.Errorf("read last byte: %w", err)
	}
	if last[0] == '\n' {
		return nil
	}
	_, err = f.Write([]byte{'\n'})
	return err
}

// Append writes e as one line. A zero Time is set to now (UTC), so callers
// need not stamp entries themselves.
func (l *Ledger) Append(e Entry) error {
	if err := e.validate(); err != nil {
		return fmt.Errorf("audit: append to %s: %w", l.path, err)
	}
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("audit: encode entry for %s: %w", l.path, err)
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return fmt.Errorf("audit: append to %s: %w", l.path, ErrClosed)
	}
	// One write per line: with O_APPEND the line lands whole at the end.
	if l.err != nil {
		return l.err
	}
	if _, err := l.f.Write(b); err != nil {
		l.err = fmt.Errorf("audit: append to %s: %w", l.path, err)
		return l.err
	}
	return nil
}

// Close syncs the ledger to disk and closes it. Closing twice is harmless.
func (l *Ledger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	serr := f.Sync()
	cerr := f.Close()
	if serr != nil {
		return fmt.Errorf("audit: sync %s: %w", l.path, serr)
	}
	if cerr != nil {
		return fmt.Errorf("audit: close %s: %w", l.path, cerr)
	}
	return nil
}

// ReadEntries parses a ledger. Any bad line (invalid JSON, unknown field,
// trailing data, missing peer/type/disclosure, blank line) is an error that
// names its line number.
func ReadEntries(r io.Reader) ([]Entry, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	var out []Entry
	line := 0
	for sc.Scan() {
		line++
		e, err := parseLine(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("audit: line %d: %w", line, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("audit: line %d: %w", line+1, err)
	}
	return out, nil
}

func parseLine(b []byte) (Entry, error) {
	var e Entry
	if len(bytes.TrimSpace(b)) == 0 {
		return e, errors.New("blank line")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return e, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return e, errors.New("trailing data after the entry")
	}
	if err := e.validate(); err != nil {
		return e, err
	}
	return e, nil
}

// ReadFile reads the ledger at path; errors name the file and line.
func ReadFile(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	defer f.Close()
	es, err := ReadEntries(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return es, nil
}
