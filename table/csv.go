package table

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Load reads the CSV file at path as table name. See Read for the format.
func Load(path, name string, schema map[string]Kind) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("table: %w", err) // os.Open's error names the path
	}
	defer f.Close()
	return Read(f, path, name, schema)
}

// Read parses comma-separated values with a header row from r as table name;
// source names the input in errors (usually the file path).
//
// A non-nil schema lists the columns to load and their kinds: a schema
// column missing from the header is an error and extra CSV columns are
// ignored, so a party can keep columns in its file that a job must not see.
// A nil schema loads every column and infers its kind: numeric if every value
// parses as a finite number (and there is at least one row), else categorical.
//
// Values are trimmed of surrounding spaces (the UCI Adult data has a space
// after every comma). Numeric cells must hold finite numbers; empty cells and
// placeholders such as "?" are errors, because silently imputing them would
// change the mined model. Columns keep file order.
func Read(r io.Reader, source, name string, schema map[string]Kind) (*Table, error) {
	return read(r, source, name, schema, ReadOptions{})
}

func read(r io.Reader, source, name string, schema map[string]Kind, opts ReadOptions) (*Table, error) {
	if schema != nil {
		if err := checkSchema(source, schema); err != nil {
			return nil, err
		}
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // ragged rows are reported below with our own message
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true

	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %s: empty file, want a header row", ErrFormat, source)
	}
	if err != nil {
		return nil, csvError(source, err)
	}
	headerLine, _ := cr.FieldPos(0)
	names, err := headerNames(source, headerLine, header)
	if err != nil {
		return nil, err
	}

	b, err := newBuilder(source, names, schema, opts)
	if err != nil {
		return nil, err
	}
	row := make([]cell, len(names))
	where := func(field int) string {
		line, _ := cr.FieldPos(field)
		return fmt.Sprintf("%s:%d", source, line)
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvError(source, err)
		}
		if len(rec) != len(names) {
			line, _ := cr.FieldPos(0)
			return nil, fmt.Errorf("%w: %s:%d: row has %d fields, header has %d",
				ErrFormat, source, line, len(rec), len(names))
		}
		for i, v := range rec {
			row[i] = cell{text: strings.TrimSpace(v)}
		}
		if err := b.add(row, where); err != nil {
			return nil, err
		}
	}
	return b.finish(name), nil
}

// checkSchema refuses unknown kinds and empty schemas before any reading.
func checkSchema(source string, schema map[string]Kind) error {
	if len(schema) == 0 {
		return fmt.Errorf("%w: %s: schema lists no columns", ErrSchema, source)
	}
	for _, col := range sortedKeys(schema) {
		if !schema[col].Valid() {
			return fmt.Errorf("%w: %s: column %q: unknown kind %q (want key, numeric, categorical, class or id)",
				ErrSchema, source, col, schema[col])
		}
	}
	return nil
}

// headerNames trims the header and refuses empty or duplicate names, which
// would make columns ambiguous.
func headerNames(source string, line int, header []string) ([]string, error) {
	names := make([]string, len(header))
	seen := make(map[string]int, len(header))
	for i, h := range header {
		h = strings.TrimSpace(h)
		if i == 0 {
			h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")) // byte order mark from spreadsheet exports
		}
		if h == "" {
			return nil, fmt.Errorf("%w: %s:%d: header field %d is empty", ErrFormat, source, line, i+1)
		}
		if j, dup := seen[h]; dup {
			return nil, fmt.Errorf("%w: %s:%d: duplicate column %q (fields %d and %d)", ErrFormat, source, line, h, j+1, i+1)
		}
		seen[h] = i
		names[i] = h
	}
	return names, nil
}

// checkHeader makes sure every schema column is in the header. When none is,
// the file most likely has no header row at all, and the error says so.
func checkHeader(source string, names []string, schema map[string]Kind) error {
	var missing []string
	for _, col := range sortedKeys(schema) {
		if !slices.Contains(names, col) {
			missing = append(missing, col)
		}
	}
	switch {
	case len(missing) == 0:
		return nil
	case len(missing) == len(schema):
		return fmt.Errorf("%w: %s: no schema column in the first line (missing header row?): want %s, got %s",
			ErrSchema, source, quoteList(missing), quoteList(names))
	default:
		return fmt.Errorf("%w: %s: column %q is not in the header (missing: %s)",
			ErrSchema, source, missing[0], quoteList(missing))
	}
}

// parseNumber accepts finite decimal numbers only: NaN and infinities would
// break split search and sums silently. Its error never quotes the value: a
// party's error can travel to the coordinator and into the Raft log as the
// reason it failed a step, and a cell is private. The row and column the
// caller names are enough to find it at home.
func parseNumber(v string) (float64, error) {
	if v == "" {
		return 0, errors.New("empty value in a numeric column")
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, errors.New("not a finite number (text, NaN or infinity in a numeric column)")
	}
	return x, nil
}

// infer sets the kind of a column loaded without a schema.
func infer(c *Column) {
	c.Kind = Categorical
	if len(c.Str) == 0 {
		return
	}
	num := make([]float64, len(c.Str))
	for i, v := range c.Str {
		x, err := parseNumber(v)
		if err != nil {
			return
		}
		num[i] = x
	}
	c.Kind = Numeric
	c.Num = num
}

func csvError(source string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%w: %s:%d: %w", ErrFormat, source, pe.Line, err)
	}
	return fmt.Errorf("table: read %s: %w", source, err)
}

func sortedKeys(m map[string]Kind) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}
