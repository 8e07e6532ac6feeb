package table

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// ErrTooLarge means a table would not fit in the memory budget for reading
// tables (ReadOptions.MaxBytes); it is refused before it exhausts the node.
var ErrTooLarge = errors.New("table: too large to load")

// cell is one value as a source reader hands it to the shared row check.
// Text sources (CSV) set text only; typed sources set num and isNum for
// numbers, so that a number is never parsed back from its text.
type cell struct {
	null  bool
	isNum bool
	num   float64
	text  string
}

// builder is the one row-validation path every source reader uses: it
// selects the schema's columns from a source's header, refuses NULLs and
// non-numeric values in numeric columns with an error naming the source,
// row and column, and keeps the table within the memory budget.
type builder struct {
	source string
	cols   []*Column
	idx    []int // cols[j] is read from source field idx[j]
	infer  bool
	bytes  int64
	max    int64
	rows   int
	// maxRows, when positive, bounds the rows loaded (Source.MaxRows).
	maxRows int64
	// sink, when set, receives the values of the columns it reads
	// instead of the table keeping them (Aggregator's streaming path);
	// sinkAt[j] is cols[j]'s place among them, or -1.
	sink   rowSink
	sinkAt []int
}

// rowSink folds checked rows of a few columns as a reader hands them over,
// so that memory is the fold's, not the table's.
type rowSink interface {
	// names are the columns it reads, in the order take numbers them.
	names() []string
	// bound says the loaded columns include names()[i].
	bound(i int)
	// take receives one checked value of names()[i], of kind k ("" while
	// the kind is inferred); x is its number when k is Numeric.
	take(i int, k Kind, x float64, v cell)
	// end closes a row whose values it has taken; an error stops the
	// reader, which returns it.
	end() error
}

// newBuilder checks the header names (no empty or duplicate names, every
// schema column present) and picks the columns to load. A nil schema loads
// every column and infers the kinds at the end (finish).
func newBuilder(source string, names []string, schema map[string]Kind, opts ReadOptions) (*builder, error) {
	b, err := newBuilderMax(source, names, schema, opts.maxBytes())
	if err != nil {
		return nil, err
	}
	if opts.sink == nil {
		b.maxRows = opts.maxRows
		return b, nil
	}
	if h, ok := opts.sink.(*headerSink); ok {
		h.cols = columnNames(b.cols)
		return nil, errHeaderRead
	}
	b.bindSink(opts.sink)
	return b, nil
}

// bindSink hands the rows to s instead of keeping them.
func (b *builder) bindSink(s rowSink) {
	b.sink, b.max = s, 0
	b.sinkAt = make([]int, len(b.cols))
	for j, c := range b.cols {
		b.sinkAt[j] = slices.Index(s.names(), c.Name)
		if b.sinkAt[j] >= 0 {
			s.bound(b.sinkAt[j])
		}
	}
}

func newBuilderMax(source string, names []string, schema map[string]Kind, maxBytes int64) (*builder, error) {
	seen := make(map[string]int, len(names))
	for i, h := range names {
		if h == "" {
			return nil, fmt.Errorf("%w: %s: column %d has no name", ErrFormat, source, i+1)
		}
		if j, dup := seen[h]; dup {
			return nil, fmt.Errorf("%w: %s: duplicate column %q (fields %d and %d)", ErrFormat, source, h, j+1, i+1)
		}
		seen[h] = i
	}
	b := &builder{source: source, max: maxBytes, infer: schema == nil}
	if schema == nil {
		for i, h := range names {
			b.cols = append(b.cols, &Column{Name: h})
			b.idx = append(b.idx, i)
		}
		return b, nil
	}
	if err := checkHeader(source, names, schema); err != nil {
		return nil, err
	}
	for i, h := range names {
		if k, ok := schema[h]; ok {
			b.cols = append(b.cols, &Column{Name: h, Kind: k})
			b.idx = append(b.idx, i)
		}
	}
	return b, nil
}

// add appends one row; where names the source and row in errors
// ("path:LINE", "sqlite x.db table t: row N") and is called only on error.
// With a sink, the row is checked the same way and handed to it instead.
func (b *builder) add(row []cell, where func(field int) string) error {
	for j, c := range b.cols {
		v := row[b.idx[j]]
		if v.null {
			return fmt.Errorf("%w: %s: column %q: NULL value (every value must be present; impute or filter it in the source)",
				ErrFormat, where(b.idx[j]), c.Name)
		}
		var x float64
		if c.Kind == Numeric {
			var err error
			if x, err = cellNumber(v); err != nil {
				return fmt.Errorf("%w: %s: column %q: %w", ErrFormat, where(b.idx[j]), c.Name, err)
			}
		}
		if b.sink != nil {
			if b.sinkAt[j] >= 0 {
				b.sink.take(b.sinkAt[j], c.Kind, x, v)
			}
			continue
		}
		if c.Kind == Numeric {
			c.Num = append(c.Num, x)
			b.bytes += 8
		}
		s := cellText(v)
		c.Str = append(c.Str, s)
		b.bytes += int64(len(s)) + 16
	}
	if b.sink != nil {
		if err := b.sink.end(); err != nil {
			return err
		}
	}
	b.rows++
	// Neither error gives the rows read: a session may report it, and a
	// table's size is the organisation's.
	if b.maxRows > 0 && int64(b.rows) > b.maxRows {
		return tooManyRows(b.source)
	}
	if b.max > 0 && b.bytes > b.max {
		return fmt.Errorf("%w: %s: more than %d MiB in memory (the budget for one table); select fewer columns or rows in the source, or raise the budget",
			ErrTooLarge, b.source, b.max>>20)
	}
	return nil
}

// tooManyRows is the refusal of a table above its source's MaxRows. It
// does not give the rows read: a session may report it, and a table's size
// is the organisation's.
func tooManyRows(desc string) error {
	return fmt.Errorf("%w: %s: more rows than this node loads into memory (max_table_rows or the table's max_rows); select fewer rows in the source, use a kind that aggregates where the data lives, or raise the limit",
		ErrTooLarge, desc)
}

// LineLimit is a reader of a file that a kind parses itself (not through
// Open) which fails, with Open's refusal, once it has read more than
// src.MaxRows lines after the first skip (a header); Err says whether it
// did. Without a MaxRows it reads r as it is.
type LineLimit struct {
	r       io.Reader
	left    int64 // lines still allowed, header included
	started bool  // a line has begun since the last newline
	desc    string
	// Err is the refusal, once returned by Read.
	Err error
}

// NewLineLimit limits r, the file of src named desc in errors.
func NewLineLimit(r io.Reader, src Source, skip int, desc string) *LineLimit {
	l := &LineLimit{r: r, left: -1, desc: desc}
	if src.MaxRows > 0 {
		l.left = src.MaxRows + int64(skip)
	}
	return l
}

func (l *LineLimit) Read(p []byte) (int, error) {
	if l.Err != nil {
		return 0, l.Err
	}
	n, err := l.r.Read(p)
	if l.left < 0 {
		return n, err
	}
	for i, c := range p[:n] {
		if !l.started {
			if l.left == 0 {
				l.Err = tooManyRows(l.desc)
				return i, l.Err
			}
			l.left--
			l.started = true
		}
		if c == '\n' {
			l.started = false
		}
	}
	return n, err
}

// cellNumber is a numeric column's value, or why the cell is not one.
func cellNumber(v cell) (float64, error) {
	if !v.isNum {
		return parseNumber(v.text)
	}
	if math.IsNaN(v.num) || math.IsInf(v.num, 0) {
		return 0, fmt.Errorf("value %v is not a finite number", v.num)
	}
	return v.num, nil
}

// cellText is a cell as a column's Str keeps it.
func cellText(v cell) string {
	if v.isNum && v.text == "" {
		return strconv.FormatFloat(v.num, 'g', -1, 64)
	}
	return v.text
}

// finish returns the table, inferring kinds when there was no schema.
func (b *builder) finish(name string) *Table {
	if b.infer {
		for _, c := range b.cols {
			infer(c)
		}
	}
	return &Table{Name: name, Columns: b.cols}
}
