package table

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrNoGroups is returned for a GroupCounts call without a set of columns,
// or with an empty set.
var ErrNoGroups = errors.New("table: group counts need sets of one or more columns")

// Group is one combination of values of a set of columns (each value as
// the loaded column's Str holds it) and the number of rows that hold it.
type Group struct {
	Values []string
	Count  int
}

// groupKey appends a set's values to key, each prefixed by its length,
// so that no two combinations share a key.
func groupKey(key []byte, vals []string) []byte {
	for _, v := range vals {
		key = strconv.AppendInt(key, int64(len(v)), 10)
		key = append(key, ':')
		key = append(key, v...)
	}
	return key
}

// folder counts the rows of each combination of one set's values, as
// GroupCounts' readers hand them over (vals is reused after add returns;
// its strings may be kept).
type folder interface {
	add(vals []string, n int)
}

// grouper is a folder that takes a query's groups (each combination
// once, but for values whose texts coincide) without merging them itself.
type grouper interface {
	addGroup(vals []string, n int)
}

// groupFold is GroupCounts' folder; its memory is one entry per
// combination, the result's.
type groupFold struct {
	counts map[string]*Group
	key    []byte
}

func (f *groupFold) add(vals []string, n int) {
	if f.counts == nil {
		f.counts = map[string]*Group{}
	}
	f.key = groupKey(f.key[:0], vals)
	g, ok := f.counts[string(f.key)]
	if !ok {
		g = &Group{Values: slices.Clone(vals)}
		f.counts[string(f.key)] = g
	}
	g.Count += n
}

func (f *groupFold) fresh() folder { return &groupFold{} }

// groups are the combinations in the order of their values.
func (f *groupFold) groups() []Group {
	out := make([]Group, 0, len(f.counts))
	for _, g := range f.counts {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b Group) int {
		for i := range min(len(a.Values), len(b.Values)) {
			if c := strings.Compare(a.Values[i], b.Values[i]); c != 0 {
				return c
			}
		}
		return len(a.Values) - len(b.Values)
	})
	return out
}

// groupSink counts, row by row, the combinations of each set's values.
type groupSink struct {
	cols  []string // every set's columns, once each
	found []bool
	sets  [][]int // each set's columns, by index in cols
	row   []string
	vals  []string
	folds []folder
}

func newGroupSink(sets [][]string, folds []folder) *groupSink {
	s := &groupSink{sets: make([][]int, len(sets)), folds: folds}
	for i, set := range sets {
		for _, c := range set {
			at := slices.Index(s.cols, c)
			if at < 0 {
				at = len(s.cols)
				s.cols = append(s.cols, c)
			}
			s.sets[i] = append(s.sets[i], at)
		}
	}
	s.found, s.row = make([]bool, len(s.cols)), make([]string, len(s.cols))
	return s
}

func (s *groupSink) names() []string { return s.cols }
func (s *groupSink) bound(i int)     { s.found[i] = true }

// take keeps the value's text, as Open's Str keeps it; the kind does not
// matter to a group.
func (s *groupSink) take(i int, _ Kind, _ float64, v cell) { s.row[i] = cellText(v) }

func (s *groupSink) end() error {
	for i, set := range s.sets {
		s.vals = s.vals[:0]
		for _, at := range set {
			s.vals = append(s.vals, s.row[at])
		}
		s.folds[i].add(s.vals, 1)
	}
	return nil
}

// checkSets refuses no set or an empty one.
func checkSets(sets [][]string) error {
	if len(sets) == 0 || slices.ContainsFunc(sets, func(s []string) bool { return len(s) == 0 }) {
		return ErrNoGroups
	}
	return nil
}

// GroupCounts streams the table once, counting every set's combinations.
func (a *streamAgg) GroupCounts(ctx context.Context, sets [][]string) (int, [][]Group, error) {
	if err := checkSets(sets); err != nil {
		return 0, nil, err
	}
	folds := groupFolds(len(sets))
	if err := a.foldGroups(ctx, sets, folds); err != nil {
		return 0, nil, err
	}
	return foldedGroups(folds)
}

// foldGroups streams the table once into one folder per set.
func (a *streamAgg) foldGroups(ctx context.Context, sets [][]string, folds []folder) error {
	s := newGroupSink(sets, folds)
	opts := a.opts
	opts.sink = s
	if _, err := Open(ctx, a.src, "", a.schema, opts); err != nil {
		return err
	}
	if at := slices.Index(s.found, false); at >= 0 {
		return a.noColumn(s.cols[at])
	}
	return nil
}

func groupFolds(n int) []folder {
	out := make([]folder, n)
	for i := range out {
		out[i] = &groupFold{}
	}
	return out
}

// foldedGroups is GroupCounts' answer from its folders.
func foldedGroups(folds []folder) (int, [][]Group, error) {
	out := make([][]Group, len(folds))
	for i, f := range folds {
		out[i] = f.(*groupFold).groups()
	}
	rows := 0
	for _, g := range out[0] {
		rows += g.Count
	}
	return rows, out, nil
}

// Columns are the names of the columns Open would load, in its order,
// from the file's header alone.
func (a *streamAgg) Columns(ctx context.Context) ([]string, error) {
	s := &headerSink{}
	opts := a.opts
	opts.sink = s
	_, err := Open(ctx, a.src, "", a.schema, opts)
	if errors.Is(err, errHeaderRead) {
		return s.cols, nil
	}
	if err == nil {
		err = fmt.Errorf("%w: %s: no header", ErrFormat, a.opts.describe(a.src))
	}
	return nil, err
}

// errHeaderRead stops a reader once a headerSink has the columns.
var errHeaderRead = errors.New("table: header read")

// headerSink keeps the names of the columns Open would load and stops the
// reader before the first row (builder.bindSink).
type headerSink struct{ cols []string }

func (*headerSink) names() []string               { return nil }
func (*headerSink) bound(int)                     {}
func (*headerSink) take(int, Kind, float64, cell) {}
func (*headerSink) end() error                    { return nil }

func columnNames(cols []*Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// loadedCols is what a LIMIT 0 query tells of the columns Open would load,
// for a query pushed down over them: b, and which result columns are
// numeric, their names, and refused, the conditions of which any holding
// makes Open refuse the row (a NULL anywhere, a value that is not a
// number in a numeric column). Every grouping query counts its rows.
type loadedCols struct {
	b       *builder
	numeric []bool
	float   []bool
	names   []string
	refused []string
}

// loadedColumns runs the LIMIT 0 query on conn and builds loadedCols.
func (a *sqlAgg) loadedColumns(ctx context.Context, conn sqlConn, desc string) (*loadedCols, error) {
	from, cols := a.from()
	b, numeric, float, err := conn.header(ctx, "SELECT "+cols+" FROM "+from+" LIMIT 0", desc, a.schema)
	if err != nil {
		return nil, err
	}
	h := &loadedCols{b: b, numeric: numeric, float: float, names: columnNames(b.cols)}
	for j, c := range b.cols {
		q := quoteIdent(c.Name)
		h.refused = append(h.refused, q+" IS NULL")
		if c.Kind == Numeric {
			h.refused = append(h.refused, a.db.notNumber(q, float[b.idx[j]]))
		}
	}
	return h, nil
}

// Columns are the result's columns the schema selects, from a LIMIT 0
// query; rows Open would refuse are found by the aggregates.
func (a *sqlAgg) Columns(ctx context.Context) ([]string, error) {
	desc := a.opts.describe(a.src)
	from, cols := a.from()
	conn, err := a.conn(ctx, desc)
	if err != nil {
		return nil, err
	}
	defer a.release(ctx, conn)
	b, _, _, err := conn.header(ctx, "SELECT "+cols+" FROM "+from+" LIMIT 0", desc, a.schema)
	if err != nil {
		return nil, err
	}
	return columnNames(b.cols), nil
}

// GroupCounts pushes one query per set down:
// SELECT <set's values>, COUNT(*), <rows Open refuses> ... GROUP BY <values>.
// The server groups by each value and by its text, so that values it
// holds equal but Open reads as different texts stay apart; the values
// come back as the reader converts them, and groups whose texts coincide
// (spaces Open trims) are merged. Where a set's query counts rows Open
// refuses, or a column is missing, the table is streamed instead.
func (a *sqlAgg) GroupCounts(ctx context.Context, sets [][]string) (int, [][]Group, error) {
	if err := checkSets(sets); err != nil {
		return 0, nil, err
	}
	folds := groupFolds(len(sets))
	if err := a.foldGroups(ctx, sets, folds); err != nil {
		return 0, nil, err
	}
	return foldedGroups(folds)
}

// foldGroups folds each set's query into its folder, or, where a query
// counts rows Open refuses or a column is missing, streams the table into
// fresh ones in their place (each folder's fresh()).
func (a *sqlAgg) foldGroups(ctx context.Context, sets [][]string, folds []folder) error {
	ok, err := a.groupQueries(ctx, sets, folds)
	if err != nil || ok {
		return err
	}
	for i := range folds {
		folds[i] = folds[i].(interface{ fresh() folder }).fresh()
	}
	return a.streamAgg.foldGroups(ctx, sets, folds)
}

// groupCounts is the pushed-down answer alone (false: the stream must
// answer), for tests.
func (a *sqlAgg) groupCounts(ctx context.Context, sets [][]string) ([][]Group, bool, error) {
	folds := groupFolds(len(sets))
	ok, err := a.groupQueries(ctx, sets, folds)
	if err != nil || !ok {
		return nil, ok, err
	}
	_, out, err := foldedGroups(folds)
	return out, true, err
}

func (a *sqlAgg) groupQueries(ctx context.Context, sets [][]string, folds []folder) (bool, error) {
	desc := a.opts.describe(a.src)
	from, _ := a.from()
	conn, err := a.conn(ctx, desc)
	if err != nil {
		return false, err
	}
	defer a.release(ctx, conn)
	h, err := a.loadedColumns(ctx, conn, desc)
	if err != nil {
		return false, err
	}
	loaded, bad := h.names, h.refused
	for _, set := range sets {
		for _, c := range set {
			if !slices.Contains(loaded, c) {
				return false, nil // the stream gives Open's error, else ErrNoColumn
			}
		}
	}
	for i, set := range sets {
		var sel, by []string
		for _, c := range set {
			q := quoteIdent(c)
			sel = append(sel, q)
			by = append(by, q, a.db.text(q))
		}
		q := "SELECT " + strings.Join(sel, ", ") + ", " + a.db.countIf("1 = 1") + ", " + a.db.countIf(strings.Join(bad, " OR ")) +
			" FROM " + from + " GROUP BY " + strings.Join(by, ", ")
		if a.opts.Log != nil {
			a.opts.Log.DebugContext(ctx, "table: query pushed down", "source", desc, "query", q)
		}
		f := folds[i]
		refused := false
		vals := make([]string, len(set))
		err := conn.scan(ctx, q, func(row []cell) error {
			n, err1 := cellNumber(row[len(set)])
			m, err2 := cellNumber(row[len(set)+1])
			if err := errors.Join(err1, err2); err != nil {
				return fmt.Errorf("%w: %s: a count: %w", ErrSource, desc, err)
			}
			if m > 0 {
				refused = true
			}
			for k := range set {
				vals[k] = cellText(row[k])
			}
			if g, ok := f.(grouper); ok {
				g.addGroup(vals, int(n))
			} else {
				f.add(vals, int(n))
			}
			return nil
		})
		if err != nil {
			return false, err
		}
		if refused {
			return false, nil // Open would refuse a row: the stream says which
		}
	}
	return true, nil
}
