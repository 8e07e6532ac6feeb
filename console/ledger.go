package console

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"sync"
	"time"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/job/runner"
)

// ledgerIndex follows the node's audit ledger, the JSON-lines file of
// everything the node sent (package audit). It reads each line once, when
// a page first needs it, and keeps what the views show: the totals per
// job, peer and disclosure kind (audit.Row), one small point per message
// for the charts over time, the policy decisions, and to whom the node
// sent each step's output (the step's coordinator). A page therefore costs
// the lines appended since the last one, not the whole ledger.
//
// The ledger is strict: a line that cannot be read stops the index there,
// and the views say so, rather than show totals that leave it out.
type ledgerIndex struct {
	path string

	mu      sync.Mutex
	offset  int64 // bytes indexed, always at the end of a line
	lines   int
	bad     error // the first unreadable line: nothing after it is indexed
	openErr error // the last failure to open or read the file (retried)

	rows    []audit.Row // in the order first seen
	rowAt   map[rowKey]int
	jobRows map[string][]int
	points  []point
	// Points name jobs, peers and disclosure kinds by their index here.
	jobs, peers, discs    []string
	jobAt, peerAt, discAt map[string]int32
	decisions             []audit.Entry
	jobDecs               map[string][]int
	coords                map[string]map[stepRef]string // by job

	// chunkGen counts the changes to each chunk of exportChunkRows rows;
	// exports holds each format's rendering of the rows (export.go).
	chunkGen []uint64
	exports  [exportFormats]*renderedExport
	// totals are the disclosures page's sums, kept current (totals.go).
	totals ledgerTotals
}

type rowKey struct{ job, peer, disclosure string }

// stepRef names one step of a job.
type stepRef struct {
	phase string
	round int
}

// point is one message, for the charts over time.
type point struct {
	unix            int64
	bytes           int64
	job, peer, disc int32
}

// chunkBytes bounds one read of the ledger; it is larger than the
// longest line the ledger admits (audit.MaxLineBytes).
const chunkBytes = 4 << 20

func newLedgerIndex(path string) *ledgerIndex {
	l := &ledgerIndex{path: path}
	l.reset()
	return l
}

func (l *ledgerIndex) reset() {
	*l = ledgerIndex{path: l.path, rowAt: map[rowKey]int{}, jobRows: map[string][]int{}, jobAt: map[string]int32{}, peerAt: map[string]int32{},
		discAt: map[string]int32{}, jobDecs: map[string][]int{}, coords: map[string]map[stepRef]string{}, totals: newLedgerTotals()}
}

// refresh indexes the lines appended since the last call. l.mu is held.
func (l *ledgerIndex) refresh() {
	if l.path == "" {
		return
	}
	f, err := os.Open(l.path)
	if errors.Is(err, fs.ErrNotExist) {
		l.openErr = nil
		return
	}
	if err != nil {
		l.openErr = err
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		l.openErr = err
		return
	}
	l.openErr = nil
	if st.Size() < l.offset { // replaced by a shorter file: start over
		l.reset()
	}
	for l.bad == nil && l.offset < st.Size() {
		buf := make([]byte, min(st.Size()-l.offset, chunkBytes))
		if _, err := f.ReadAt(buf, l.offset); err != nil {
			l.openErr = err
			return
		}
		end := bytes.LastIndexByte(buf, '\n')
		if end < 0 {
			if len(buf) == chunkBytes {
				l.bad = fmt.Errorf("line %d: longer than %d bytes", l.lines+1, audit.MaxLineBytes)
			}
			return // the last line is still being written
		}
		l.index(buf[:end+1])
		l.offset += int64(end + 1)
	}
}

// index adds whole lines. On a bad line it adds the lines before it.
func (l *ledgerIndex) index(chunk []byte) {
	es, err := audit.ReadEntries(bytes.NewReader(chunk))
	if err == nil {
		l.add(es)
		l.lines += len(es)
		return
	}
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		line := chunk[:i+1]
		chunk = chunk[i+1:]
		es, err := audit.ReadEntries(bytes.NewReader(line))
		if err != nil {
			if inner := errors.Unwrap(err); inner != nil {
				err = inner
			}
			l.bad = fmt.Errorf("line %d: %w", l.lines+1, err)
			return
		}
		l.add(es)
		l.lines++
	}
}

// add indexes entries: their messages first, which names their peers and
// kinds, then the rows they add to and the policy decisions.
func (l *ledgerIndex) add(es []audit.Entry) {
	for _, e := range es {
		if e.Type == audit.DecisionType {
			continue
		}
		p := point{unix: e.Time.Unix(), bytes: int64(e.Bytes), job: intern(&l.jobs, l.jobAt, e.Job),
			peer: intern(&l.peers, l.peerAt, e.Peer), disc: intern(&l.discs, l.discAt, e.Disclosure)}
		l.points = append(l.points, p)
		l.totals.addPoint(len(l.points)-1, p)
		if e.Type == runner.OutputType {
			if l.coords[e.Job] == nil {
				l.coords[e.Job] = map[stepRef]string{}
			}
			l.coords[e.Job][stepRef{e.Phase, e.Round}] = e.Peer
		}
	}
	for _, r := range audit.Summarize(es) {
		pk := pairKey{l.peerAt[r.Peer], l.discAt[r.Disclosure]}
		l.totals.grow(pk, r.Messages, r.Bytes)
		k := rowKey{r.Job, r.Peer, r.Disclosure}
		if i, ok := l.rowAt[k]; ok {
			l.rows[i].Messages += r.Messages
			l.rows[i].Bytes += r.Bytes
			l.touch(i)
			continue
		}
		l.rowAt[k] = len(l.rows)
		l.jobRows[r.Job] = append(l.jobRows[r.Job], len(l.rows))
		l.totals.addRow(len(l.rows), pk)
		l.rows = append(l.rows, r)
		l.touch(len(l.rows) - 1)
	}
	for _, d := range audit.Decisions(es) {
		l.jobDecs[d.Job] = append(l.jobDecs[d.Job], len(l.decisions))
		l.decisions = append(l.decisions, d)
	}
}

func intern(names *[]string, at map[string]int32, s string) int32 {
	if i, ok := at[s]; ok {
		return i
	}
	i := int32(len(*names))
	*names = append(*names, s)
	at[s] = i
	return i
}

// ledgerFilter selects rows by job, peer and disclosure kind ("" for any).
type ledgerFilter struct {
	Job, Peer, Disclosure string
}

func (f ledgerFilter) match(r *audit.Row) bool {
	return (f.Job == "" || r.Job == f.Job) && (f.Peer == "" || r.Peer == f.Peer) &&
		(f.Disclosure == "" || r.Disclosure == f.Disclosure)
}

// ledgerState is what the index says of the ledger as a whole.
type ledgerState struct {
	Path    string
	Lines   int
	Bad     string // why indexing stopped, "" when it did not
	OpenErr string
}

func (l *ledgerIndex) state() ledgerState {
	s := ledgerState{Path: l.path, Lines: l.lines}
	if l.bad != nil {
		s.Bad = l.bad.Error()
	}
	if l.openErr != nil {
		s.OpenErr = l.openErr.Error()
	}
	return s
}

// read refreshes the index and runs f on it under its lock.
func (l *ledgerIndex) read(f func(l *ledgerIndex)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refresh()
	f(l)
}

// rowsFor returns the rows a filter selects, in the order first seen.
func (l *ledgerIndex) rowsFor(f ledgerFilter) []audit.Row {
	var out []audit.Row
	l.read(func(l *ledgerIndex) {
		idx := l.candidates(f)
		for _, i := range idx {
			if f.match(&l.rows[i]) {
				out = append(out, l.rows[i])
			}
		}
	})
	return out
}

// candidates are the indexes of the rows a filter may select, in order:
// one job's, one peer's and kind's, one peer's, one kind's, or all. Only
// the last is allocated; the others are the index's lists, not to be
// modified. Unless the filter names a job, every candidate is selected
// (see exact). l.mu is held.
func (l *ledgerIndex) candidates(f ledgerFilter) []int {
	peer, disc := lookup(l.peerAt, f.Peer), lookup(l.discAt, f.Disclosure)
	switch {
	case f.Job != "":
		return l.jobRows[f.Job]
	case (f.Peer != "" && peer < 0) || (f.Disclosure != "" && disc < 0):
		return nil
	case f.Peer != "" && f.Disclosure != "":
		return l.totals.pairRows[pairKey{peer, disc}]
	case f.Peer != "":
		return l.totals.peerRows[peer]
	case f.Disclosure != "":
		return l.totals.discRows[disc]
	}
	all := make([]int, len(l.rows))
	for i := range all {
		all[i] = i
	}
	return all
}

// exact says whether every one of the filter's candidates is selected, so
// that a caller need not match each (comparing a row's strings costs
// about 70 ns, 7 ms for the 100,000 rows of a filter by kind).
func (f ledgerFilter) exact() bool { return f.Job == "" }

// jobLedger is what the ledger holds of one job.
type jobLedger struct {
	Rows      []audit.Row
	Decisions []audit.Entry
	// Coordinators maps a step to whom this node sent its output.
	Coordinators map[stepRef]string
	State        ledgerState
}

func (l *ledgerIndex) job(id string) jobLedger {
	var out jobLedger
	l.read(func(l *ledgerIndex) {
		for _, i := range l.jobRows[id] {
			out.Rows = append(out.Rows, l.rows[i])
		}
		for _, i := range l.jobDecs[id] {
			out.Decisions = append(out.Decisions, l.decisions[i])
		}
		out.Coordinators = maps.Clone(l.coords[id])
		out.State = l.state()
	})
	return out
}

// span returns the times of the ledger's first and last messages (zero if
// none). l.mu is held.
func (l *ledgerIndex) span() (first, last time.Time) {
	if len(l.points) == 0 {
		return
	}
	return time.Unix(l.totals.first, 0), time.Unix(l.totals.last, 0)
}
