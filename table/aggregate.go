package table

import (
	"context"
	"errors"
	"fmt"
	"sort"
)

// ErrNotNumeric is returned by an Aggregator for a column that has rows
// but is not numeric (by the schema, or, without one, by its values).
var ErrNotNumeric = errors.New("table: column is not numeric")

// Aggregator computes what a job needs from one column where the data
// lives, instead of loading the table: a database source answers with one
// query, a file is streamed and only the result is kept. Its answers and
// errors are those of folding the column of the table Open would load
// with the same schema: a NULL, a non-number in a numeric column or a
// missing schema column fails as it does there. A column the schema does
// not list, or the source lacks, is ErrNoColumn; one that is not numeric
// is ErrNotNumeric, unless the table has no rows.
type Aggregator interface {
	// ColumnSum is the column's sum and the table's row count; with clamp,
	// each value is first clamped to [clamp[0], clamp[1]].
	ColumnSum(ctx context.Context, column string, clamp *[2]float64) (sum float64, rows int, err error)
	// CountsAtMost is the row count and, for each threshold, how many of
	// the column's values are at most it.
	CountsAtMost(ctx context.Context, column string, thresholds []float64) (total int, counts []int, err error)
	// GroupCounts is the row count and, for each set of columns, every
	// combination of their values the rows hold, with how many hold it,
	// in the order of the values (memory: the combinations, not the rows).
	GroupCounts(ctx context.Context, sets [][]string) (rows int, groups [][]Group, err error)
	// Columns are the names of the columns Open would load.
	Columns(ctx context.Context) ([]string, error)
}

// NewAggregator returns src's Aggregator for the table Open(src, schema)
// would load; opts as for Open (Label names the source in errors).
func NewAggregator(src Source, schema map[string]Kind, opts ReadOptions) (Aggregator, error) {
	if err := src.Validate(); err != nil {
		return nil, err
	}
	if schema != nil {
		if err := checkSchema(opts.describe(src), schema); err != nil {
			return nil, err
		}
	}
	st := streamAgg{src: src, schema: schema, opts: opts}
	switch src.Type() {
	case Postgres:
		return &sqlAgg{streamAgg: st, db: pgDB{}}, nil
	case SQLite:
		return &sqlAgg{streamAgg: st, db: sqliteDB{}}, nil
	case ClickHouse:
		return &sqlAgg{streamAgg: st, db: chDB{}}, nil
	default:
		return &st, nil
	}
}

// colSink folds one column's values as a reader hands them over.
type colSink struct {
	column     string
	fold       func(x float64)
	found      bool // the loaded columns include it
	rows       int
	notNumeric bool
}

func (s *colSink) names() []string { return []string{s.column} }
func (s *colSink) bound(int)       { s.found = true }
func (s *colSink) end() error      { return nil }

// take receives one checked value of the column, of kind k ("" while the
// kind is inferred: numeric as long as every value parses).
func (s *colSink) take(_ int, k Kind, x float64, v cell) {
	s.rows++
	switch {
	case s.notNumeric:
	case k == Numeric:
		s.fold(x)
	case k == "":
		x, err := parseNumber(cellText(v))
		if err != nil {
			s.notNumeric = true
			return
		}
		s.fold(x)
	default:
		s.notNumeric = true
	}
}

// streamAgg reads the table through its source's reader with a sink, so
// rows are checked as Open checks them and only the result is kept.
type streamAgg struct {
	src    Source
	schema map[string]Kind
	opts   ReadOptions
}

// stream folds the column's values and returns the row count.
func (a *streamAgg) stream(ctx context.Context, column string, fold func(float64)) (int, error) {
	s := &colSink{column: column, fold: fold}
	opts := a.opts
	opts.sink = s
	if _, err := Open(ctx, a.src, "", a.schema, opts); err != nil {
		return 0, err
	}
	switch {
	case !s.found:
		return 0, a.noColumn(column)
	case s.notNumeric && s.rows > 0:
		return 0, fmt.Errorf("%w: %s: column %q", ErrNotNumeric, a.opts.describe(a.src), column)
	}
	return s.rows, nil
}

func (a *streamAgg) noColumn(column string) error {
	return fmt.Errorf("%w: %s has no column %q", ErrNoColumn, a.opts.describe(a.src), column)
}

func (a *streamAgg) ColumnSum(ctx context.Context, column string, clamp *[2]float64) (float64, int, error) {
	f := sumFold{clamp: clamp}
	n, err := a.stream(ctx, column, f.add)
	if err != nil {
		return 0, 0, err
	}
	return f.sum, n, nil
}

func (a *streamAgg) CountsAtMost(ctx context.Context, column string, thresholds []float64) (int, []int, error) {
	f := newCountFold(thresholds)
	n, err := a.stream(ctx, column, f.add)
	if err != nil {
		return 0, nil, err
	}
	return n, f.counts(), nil
}

// sumFold adds values in reading order, as a loop over a loaded column.
type sumFold struct {
	clamp *[2]float64
	sum   float64
}

func (f *sumFold) add(x float64) {
	if f.clamp != nil {
		x = min(max(x, f.clamp[0]), f.clamp[1])
	}
	f.sum += x
}

// countFold counts values between consecutive thresholds, so memory is
// the thresholds', and cumulates them at the end.
type countFold struct {
	order  []int     // thresholds' indices by value
	sorted []float64 // thresholds by value
	bins   []int     // bins[i]: values in (sorted[i-1], sorted[i]]
}

func newCountFold(thresholds []float64) *countFold {
	f := &countFold{order: make([]int, len(thresholds)), bins: make([]int, len(thresholds)+1)}
	for i := range f.order {
		f.order[i] = i
	}
	sort.SliceStable(f.order, func(i, j int) bool { return thresholds[f.order[i]] < thresholds[f.order[j]] })
	for _, i := range f.order {
		f.sorted = append(f.sorted, thresholds[i])
	}
	return f
}

func (f *countFold) add(x float64) {
	f.bins[sort.SearchFloat64s(f.sorted, x)]++
}

func (f *countFold) counts() []int {
	out := make([]int, len(f.order))
	c := 0
	for k, i := range f.order {
		c += f.bins[k]
		out[i] = c
	}
	return out
}

// Check reports the error Open would return for src with schema, without
// keeping the table: a database counts the rows Open would refuse in one
// query, and only when there are any is the table streamed to name the
// first; a file is streamed.
func Check(ctx context.Context, src Source, schema map[string]Kind, opts ReadOptions) error {
	agg, err := NewAggregator(src, schema, opts)
	if err != nil {
		return err
	}
	// No column has an empty name (the readers refuse one), so this
	// checks every row and folds nothing.
	_, _, err = agg.ColumnSum(ctx, "", nil)
	if errors.Is(err, ErrNoColumn) {
		return nil
	}
	return err
}
