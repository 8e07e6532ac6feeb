// Package table loads a party's private data as typed, column-oriented tables.
//
// Tables come from CSV files with a header row, Parquet files, SQLite
// databases, PostgreSQL or ClickHouse (see Source and Open); every reader
// hands its rows to one validation path, so each source reports NULLs,
// non-numbers and missing columns alike. A schema (from the job spec)
// says which columns to load and what each one is for; without a schema the
// kinds are inferred so that ad-hoc files can be inspected. Column-oriented
// storage suits the jobs, which scan one attribute at a time (split search,
// biclustering, generalisation).
//
// The files are the organisation's own, but they are often exported by hand,
// so every problem is reported as an error naming the file, line and column;
// nothing here panics on bad input.
package table

import (
	"errors"
	"fmt"
	"strings"
)

// Kind says what a column is for in a job.
type Kind string

// Column kinds, as written in job specs.
const (
	// Key is a join attribute (SJC): matched by equality, never split on.
	Key Kind = "key"
	// Numeric is a real-valued attribute.
	Numeric Kind = "numeric"
	// Categorical is a nominal attribute.
	Categorical Kind = "categorical"
	// Class is the label a classifier predicts.
	Class Kind = "class"
	// ID is a record identifier linking rows across parties.
	ID Kind = "id"
)

// Errors that callers may want to tell apart with errors.Is.
var (
	// ErrFormat marks malformed CSV content: ragged rows, bad numbers, bad headers.
	ErrFormat = errors.New("table: malformed data")
	// ErrSchema marks a mismatch between a schema and a file, or an invalid schema.
	ErrSchema = errors.New("table: schema mismatch")
	// ErrNoColumn is returned by Table.Column for an unknown name.
	ErrNoColumn = errors.New("table: no such column")
)

// ParseKind parses a kind as written in a spec. Surrounding space and case are
// ignored because specs are hand-written YAML.
func ParseKind(s string) (Kind, error) {
	k := Kind(strings.ToLower(strings.TrimSpace(s)))
	if !k.Valid() {
		return "", fmt.Errorf("%w: unknown column kind %q (want key, numeric, categorical, class or id)", ErrSchema, s)
	}
	return k, nil
}

// Valid reports whether k is one of the defined kinds.
func (k Kind) Valid() bool {
	switch k {
	case Key, Numeric, Categorical, Class, ID:
		return true
	}
	return false
}

// Column is one attribute of a table. Str holds every value as trimmed text
// (for numeric columns too, so that values can be echoed exactly as written);
// Num holds the parsed values of a numeric column and is nil otherwise.
type Column struct {
	Name string
	Kind Kind
	Num  []float64
	Str  []string
}

// Len is the number of values in the column.
func (c *Column) Len() int { return len(c.Str) }

// Table is a named set of equally long columns, in file order.
type Table struct {
	Name    string
	Columns []*Column
}

// NumRows is the number of rows, taken from the first column; a table without
// columns has none.
func (t *Table) NumRows() int {
	if len(t.Columns) == 0 {
		return 0
	}
	return t.Columns[0].Len()
}

// Column returns the column called name.
func (t *Table) Column(name string) (*Column, error) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("%w: table %q has no column %q", ErrNoColumn, t.Name, name)
}

// ColumnsOfKind returns the columns of kind k in table order.
func (t *Table) ColumnsOfKind(k Kind) []*Column {
	var out []*Column
	for _, c := range t.Columns {
		if c.Kind == k {
			out = append(out, c)
		}
	}
	return out
}

// WithClass returns t with its class column (if any) replaced by a class
// column that holds value on every row: new rows to classify carry no
// class, and a prediction needs one that every row shares.
func (t *Table) WithClass(class, value string) *Table {
	out := &Table{Name: t.Name}
	for _, c := range t.Columns {
		if c.Name != class {
			out.Columns = append(out.Columns, c)
		}
	}
	col := &Column{Name: class, Kind: Class, Str: make([]string, t.NumRows())}
	for r := range col.Str {
		col.Str[r] = value
	}
	out.Columns = append(out.Columns, col)
	return out
}
