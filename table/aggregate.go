package table

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
//
// An Aggregator over a database keeps one connection between its
// aggregates, so that a job's rounds do not each connect (a fresh
// PostgreSQL connection costs more than a small table's aggregate);
// whoever makes an Aggregator closes it. It is safe for concurrent use.
type Aggregator interface {
	// ColumnSum is the column's sum and the table's row count; with clamp,
	// each value is first clamped to [clamp[0], clamp[1]].
	ColumnSum(ctx context.Context, column string, clamp *[2]float64) (sum float64, rows int, err error)
	// ColumnSums is ColumnSum of each of columns, in their order, from one
	// query or one pass: a kind that needs every column's total (bicluster's
	// Σ max(x, 0)) reads the table once, not once per column. An infinite
	// bound of clamp leaves that side unclamped. The error is the first
	// ColumnSum would return over the columns in order, Open's first.
	ColumnSums(ctx context.Context, columns []string, clamp *[2]float64) (sums []float64, rows int, err error)
	// CountsAtMost is the row count and, for each threshold, how many of
	// the column's values are at most it.
	CountsAtMost(ctx context.Context, column string, thresholds []float64) (total int, counts []int, err error)
	// GroupCounts is the row count and, for each set of columns, every
	// combination of their values the rows hold, with how many hold it,
	// in the order of the values (memory: the combinations, not the rows).
	GroupCounts(ctx context.Context, sets [][]string) (rows int, groups [][]Group, err error)
	// DistinctCounts is the number of distinct values of column key and,
	// for each value of column by, how many distinct keys its rows hold
	// (a Group of one value), in the order of the values: a tid,item
	// table's transactions and its items' supports, a repeated pair
	// counted once. Values are the texts Open's Str holds. Memory: the
	// by values and the keys for a file, the by values for a database.
	DistinctCounts(ctx context.Context, key, by string) (keys int, groups []Group, err error)
	// Columns are the names of the columns Open would load.
	Columns(ctx context.Context) ([]string, error)
	// Close closes the connection kept between aggregates, if any. An
	// aggregate asked after Close still answers, on a connection of its
	// own that it closes. It returns nil.
	Close() error
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

// colSink folds columns' values as a reader hands them over.
type colSink struct {
	columns    []string
	folds      []func(x float64)
	found      []bool // the loaded columns include it
	notNumeric []bool
	rows       int
}

func newColSink(columns []string, folds []func(float64)) *colSink {
	return &colSink{columns: columns, folds: folds, found: make([]bool, len(columns)), notNumeric: make([]bool, len(columns))}
}

func (s *colSink) names() []string { return s.columns }
func (s *colSink) bound(i int)     { s.found[i] = true }
func (s *colSink) end() error      { s.rows++; return nil }

// take receives one checked value of column i, of kind k ("" while the
// kind is inferred: numeric as long as every value parses).
func (s *colSink) take(i int, k Kind, x float64, v cell) {
	switch {
	case s.notNumeric[i]:
	case k == Numeric:
		s.folds[i](x)
	case k == "":
		x, err := parseNumber(cellText(v))
		if err != nil {
			s.notNumeric[i] = true
			return
		}
		s.folds[i](x)
	default:
		s.notNumeric[i] = true
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
	return a.streamColumns(ctx, []string{column}, []func(float64){fold})
}

// streamColumns folds each column's values in one pass and returns the
// row count; its error is the first of the columns' in order. A column
// listed twice is read once (a reader hands a column to a sink once) and
// folded into both.
func (a *streamAgg) streamColumns(ctx context.Context, columns []string, folds []func(float64)) (int, error) {
	var uniq []string
	var into [][]func(float64)
	for i, c := range columns {
		at := slices.Index(uniq, c)
		if at < 0 {
			at = len(uniq)
			uniq, into = append(uniq, c), append(into, nil)
		}
		into[at] = append(into[at], folds[i])
	}
	one := make([]func(float64), len(uniq))
	for k := range uniq {
		fs := into[k]
		one[k] = func(x float64) {
			for _, f := range fs {
				f(x)
			}
		}
	}
	s := newColSink(uniq, one)
	opts := a.opts
	opts.sink = s
	if _, err := Open(ctx, a.src, "", a.schema, opts); err != nil {
		return 0, err
	}
	for _, column := range columns {
		i := slices.Index(uniq, column)
		switch {
		case !s.found[i]:
			return 0, a.noColumn(column)
		case s.notNumeric[i] && s.rows > 0:
			return 0, fmt.Errorf("%w: %s: column %q", ErrNotNumeric, a.opts.describe(a.src), column)
		}
	}
	return s.rows, nil
}

func (a *streamAgg) noColumn(column string) error {
	return fmt.Errorf("%w: %s has no column %q", ErrNoColumn, a.opts.describe(a.src), column)
}

func (a *streamAgg) ColumnSum(ctx context.Context, column string, clamp *[2]float64) (float64, int, error) {
	return firstSum(a.ColumnSums(ctx, []string{column}, clamp))
}

// firstSum is ColumnSum's answer from ColumnSums' over the one column:
// every source sums one column as it sums several.
func firstSum(sums []float64, rows int, err error) (float64, int, error) {
	if err != nil {
		return 0, 0, err
	}
	return sums[0], rows, nil
}

func (a *streamAgg) ColumnSums(ctx context.Context, columns []string, clamp *[2]float64) ([]float64, int, error) {
	fs := make([]sumFold, len(columns))
	folds := make([]func(float64), len(columns))
	for i := range fs {
		fs[i].clamp = clamp
		folds[i] = fs[i].add
	}
	n, err := a.streamColumns(ctx, columns, folds)
	if err != nil {
		return nil, 0, err
	}
	sums := make([]float64, len(fs))
	for i, f := range fs {
		sums[i] = f.sum
	}
	return sums, n, nil
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
	defer agg.Close()
	// No column has an empty name (the readers refuse one), so this
	// checks every row and folds nothing.
	_, _, err = agg.ColumnSum(ctx, "", nil)
	if errors.Is(err, ErrNoColumn) {
		return nil
	}
	return err
}
