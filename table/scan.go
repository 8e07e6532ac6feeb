package table

import (
	"context"
	"fmt"
	"slices"
)

// Scan streams the table Open(src, schema) would load, row by row in the
// order the reader gives them, handing each the texts of cols (as Open's
// Str keeps them) and, for a numeric column, its number (nums[i], as
// Open's Num; 0 for another kind); vals and nums are reused once each
// returns. Rows are checked as
// Open checks them (a NULL or a non-number in any schema column fails,
// naming the row), and memory is one row's, not the table's: a kind that
// needs each row once (sjc-predict's per-row output) streams it rather
// than loading it. An error from each stops the scan and is returned.
// A column of cols that the loaded columns lack is ErrNoColumn.
func Scan(ctx context.Context, src Source, schema map[string]Kind, cols []string, opts ReadOptions, each func(vals []string, nums []float64) error) error {
	if len(cols) == 0 {
		return fmt.Errorf("%w: %s: a scan needs one or more columns", ErrNoColumn, opts.describe(src))
	}
	if err := src.Validate(); err != nil {
		return err
	}
	if schema != nil {
		if err := checkSchema(opts.describe(src), schema); err != nil {
			return err
		}
	}
	s := &scanSink{cols: cols, found: make([]bool, len(cols)), row: make([]string, len(cols)), nums: make([]float64, len(cols)), each: each}
	s.missing = func(c string) error { return fmt.Errorf("%w: %s has no column %q", ErrNoColumn, opts.describe(src), c) }
	opts.sink = s
	if _, err := Open(ctx, src, "", schema, opts); err != nil {
		return err
	}
	return s.check() // a table without rows
}

// scanSink hands each checked row's values of cols to each, once it has
// checked, before the first row, that the loaded columns have them all.
type scanSink struct {
	cols    []string
	found   []bool
	row     []string
	nums    []float64
	each    func([]string, []float64) error
	missing func(col string) error
	checked bool
}

func (s *scanSink) check() error {
	s.checked = true
	if at := slices.Index(s.found, false); at >= 0 {
		return s.missing(s.cols[at])
	}
	return nil
}

func (s *scanSink) names() []string                       { return s.cols }
func (s *scanSink) bound(i int)                           { s.found[i] = true }
func (s *scanSink) take(i int, _ Kind, x float64, v cell) { s.row[i], s.nums[i] = cellText(v), x }

func (s *scanSink) end() error {
	if !s.checked {
		if err := s.check(); err != nil {
			return err
		}
	}
	return s.each(s.row, s.nums)
}
