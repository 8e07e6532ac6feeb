package coherence

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Format is how a transaction file is laid out.
type Format int

const (
	// FIMI is the Frequent Itemset Mining Implementations repository's
	// format: one transaction per line, items as non-negative decimal
	// integers separated by spaces (a trailing space is allowed). An empty
	// line is an empty transaction.
	FIMI Format = iota
	// CSV is one row per (transaction id, item) pair, `tid,item`, with an
	// optional `tid,item` header. A transaction's items are its rows in
	// order; a row with an empty item declares a transaction with no item
	// (what a published file holds for a transaction that lost every item).
	CSV
)

func (f Format) String() string {
	if f == CSV {
		return "csv"
	}
	return "fimi"
}

// Database is a table of transactions: one per person, each a set of items.
// Items are numbered 0..len(Items)-1; Items holds each one's label as the
// file spells it (the decimal integer of a FIMI file, canonical: no leading
// zeros).
type Database struct {
	Items []string
	// Trans holds each transaction's items in the order the file gives
	// them, each at most once.
	Trans [][]int32
}

// ErrFormat wraps every problem with a transaction file. Its messages name
// the line (or row) and field, never a value.
var ErrFormat = errors.New("coherence: bad transaction file")

// MaxItems bounds the distinct items of one database.
const MaxItems = 1 << 30

// maxLine bounds one line of a FIMI file (64 MiB).
const maxLine = 64 << 20

// ReadFIMI reads a FIMI transaction file. Repeated items in a transaction
// count once.
func ReadFIMI(r io.Reader) (*Database, error) {
	b := newBuilder()
	if err := readFIMI(r, b); err != nil {
		return nil, err
	}
	return b.finish(), nil
}

// transSink takes transactions as a parser reads them: a FIMI line's
// items (begin, then add), or a CSV's pairs. The builder keeps them;
// a supportCounter counts them (CountFIMI, CountCSV): one parser for
// both.
type transSink interface {
	begin()
	add(label string) error
	pair(tid, item string) error
}

// readFIMI parses a FIMI file into s.
func readFIMI(r io.Reader, b transSink) error {
	br := bufio.NewReaderSize(r, 1<<16)
	for line := 1; ; line++ {
		raw, err := readLine(br)
		if err == io.EOF && raw == nil {
			break
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("%w: line %d: %w", ErrFormat, line, err)
		}
		b.begin()
		field := 0
		for rest := raw; len(rest) > 0; {
			i := bytes.IndexAny(rest, " \t")
			tok := rest
			if i >= 0 {
				tok, rest = rest[:i], rest[i+1:]
			} else {
				rest = nil
			}
			if len(tok) == 0 {
				continue
			}
			field++
			v, perr := strconv.ParseUint(string(tok), 10, 64)
			if perr != nil || tok[0] == '+' {
				return fmt.Errorf("%w: line %d: field %d is not a non-negative integer below 2^64", ErrFormat, line, field)
			}
			if err := b.add(strconv.FormatUint(v, 10)); err != nil {
				return fmt.Errorf("%w: line %d: %w", ErrFormat, line, err)
			}
		}
		if err == io.EOF {
			break
		}
	}
	return nil
}

// readLine returns the next line without its end (LF or CRLF); nil and
// io.EOF at the end of input, the last line and io.EOF when it has no end.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > maxLine {
			return nil, fmt.Errorf("longer than %d bytes", maxLine)
		}
		line = append(line, chunk...)
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF:
			if len(line) == 0 {
				return nil, io.EOF
			}
			return bytes.TrimSuffix(line, []byte{'\r'}), io.EOF
		case err != nil:
			return nil, err
		}
		line = line[:len(line)-1]
		return bytes.TrimSuffix(line, []byte{'\r'}), nil
	}
}

// ReadCSV reads a `tid,item` file. Rows of one transaction need not be
// adjacent; transactions are numbered in the order their ids first appear.
// The ids themselves are not kept: they may identify people.
func ReadCSV(r io.Reader) (*Database, error) {
	b := newBuilder()
	if err := readCSV(r, b); err != nil {
		return nil, err
	}
	return b.finish(), nil
}

// readCSV parses a `tid,item` file into b.
func readCSV(r io.Reader, b transSink) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 2
	cr.ReuseRecord = true
	for row := 1; ; row++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return fmt.Errorf("%w: row %d: %v", ErrFormat, row, pe.Err)
			}
			return fmt.Errorf("%w: row %d: %w", ErrFormat, row, err)
		}
		if row == 1 && rec[0] == "tid" && rec[1] == "item" {
			continue
		}
		if err := b.pair(rec[0], rec[1]); err != nil {
			return fmt.Errorf("%w: row %d: %w", ErrFormat, row, err)
		}
	}
	return nil
}

// FromPairs builds a database from (transaction id, item) pairs, as ReadCSV
// reads them from a file: a table of columns tid and item.
func FromPairs(tids, items []string) (*Database, error) {
	if len(tids) != len(items) {
		return nil, fmt.Errorf("%w: %d transaction ids for %d items", ErrFormat, len(tids), len(items))
	}
	b := newBuilder()
	for i := range tids {
		if err := b.pair(tids[i], items[i]); err != nil {
			return nil, fmt.Errorf("%w: row %d: %w", ErrFormat, i+1, err)
		}
	}
	return b.finish(), nil
}

// errTooManyItems refuses a database of more than MaxItems items.
var errTooManyItems = fmt.Errorf("more than %d distinct items", MaxItems)

// errFieldTID refuses a pair without a transaction id.
var errFieldTID = errors.New("field tid is empty")

// pair adds item to the transaction with id tid (an empty item only makes
// sure the transaction exists).
func (b *builder) pair(tid, item string) error {
	if tid == "" {
		return errFieldTID
	}
	t, ok := b.tids[tid]
	if !ok {
		t = len(b.db.Trans)
		b.tids[strings.Clone(tid)] = t
		b.db.Trans = append(b.db.Trans, nil)
	}
	if item == "" {
		return nil
	}
	return b.addTo(t, item)
}

// builder numbers items as they first appear and drops repeats within a
// transaction.
type builder struct {
	db    *Database
	tids  map[string]int // a CSV's transaction ids, numbered
	ids   map[string]int32
	last  []int // per item, 1 + the transaction it was last added to
	apart bool  // an item came back to an earlier transaction
}

func newBuilder() *builder {
	return &builder{db: &Database{}, ids: map[string]int32{}, tids: map[string]int{}}
}

func (b *builder) begin() { b.db.Trans = append(b.db.Trans, nil) }

func (b *builder) add(label string) error { return b.addTo(len(b.db.Trans)-1, label) }

func (b *builder) addTo(t int, label string) error {
	id, ok := b.ids[label]
	if !ok {
		if len(b.db.Items) >= MaxItems {
			return errTooManyItems
		}
		id = int32(len(b.db.Items))
		label = strings.Clone(label)
		b.ids[label] = id
		b.db.Items = append(b.db.Items, label)
		b.last = append(b.last, 0)
	}
	if b.last[id] == t+1 {
		return nil
	}
	if b.last[id] > t+1 {
		b.apart = true // a CSV transaction's rows are apart: finish checks
	}
	b.last[id] = t + 1
	b.db.Trans[t] = append(b.db.Trans[t], id)
	return nil
}

// finish drops the repeats that rows apart let through.
func (b *builder) finish() *Database {
	if !b.apart {
		return b.db
	}
	seen := make([]int, len(b.db.Items))
	for t, tr := range b.db.Trans {
		kept := tr[:0]
		for _, it := range tr {
			if seen[it] != t+1 {
				seen[it] = t + 1
				kept = append(kept, it)
			}
		}
		b.db.Trans[t] = kept
	}
	return b.db
}

// Write writes db in format f: FIMI lines without a trailing space, or
// `tid,item` rows under a header with the transactions numbered from 1 in
// order (a transaction without items is one row with an empty item).
func (db *Database) Write(w io.Writer, f Format) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	if f == CSV {
		cw := csv.NewWriter(bw)
		if err := cw.Write([]string{"tid", "item"}); err != nil {
			return err
		}
		for t, tr := range db.Trans {
			tid := strconv.Itoa(t + 1)
			if len(tr) == 0 {
				if err := cw.Write([]string{tid, ""}); err != nil {
					return err
				}
			}
			for _, it := range tr {
				if err := cw.Write([]string{tid, db.Items[it]}); err != nil {
					return err
				}
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		return bw.Flush()
	}
	for _, tr := range db.Trans {
		for i, it := range tr {
			if i > 0 {
				bw.WriteByte(' ')
			}
			bw.WriteString(db.Items[it])
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// Occurrences is the number of item occurrences, summed over transactions.
func (db *Database) Occurrences() int {
	n := 0
	for _, t := range db.Trans {
		n += len(t)
	}
	return n
}

// Supports counts each item's transactions.
func (db *Database) Supports() []int {
	sup := make([]int, len(db.Items))
	for _, t := range db.Trans {
		for _, it := range t {
			sup[it]++
		}
	}
	return sup
}

// Without returns db with the given items removed from every transaction:
// the same transactions in the same order, each item order kept. Items
// that no longer occur keep their numbers and labels.
func (db *Database) Without(removed []int32) *Database {
	drop := make([]bool, len(db.Items))
	for _, it := range removed {
		drop[it] = true
	}
	out := &Database{Items: db.Items, Trans: make([][]int32, len(db.Trans))}
	for t, tr := range db.Trans {
		var kept []int32
		for _, it := range tr {
			if !drop[it] {
				kept = append(kept, it)
			}
		}
		out.Trans[t] = kept
	}
	return out
}
