package table

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// keyFold counts the distinct keys of the whole table and of each
// value of the by column, as DistinctCounts' readers hand the pairs over.
// In its first pass it keeps one entry per key and per by value: a key's
// pairs are counted once as long as each key's rows are adjacent (a
// transaction's rows in a tid,item table), which it checks; when a key
// comes back after another, the fold is redone keeping every distinct
// pair (pairs), so the answer is exact either way.
type keyFold struct {
	pairs  bool
	keys   map[string]int32
	bys    map[string]int32
	byVals []string
	counts []int
	last   []int32 // per by value, 1 + the key it last counted
	seen   map[uint64]struct{}
	apart  bool
}

func newKeyFold(pairs bool) *keyFold {
	return &keyFold{pairs: pairs, keys: map[string]int32{}, bys: map[string]int32{}, seen: map[uint64]struct{}{}}
}

func (f *keyFold) add(key, by string) {
	k, ok := f.keys[key]
	if !ok {
		k = int32(len(f.keys))
		f.keys[strings.Clone(key)] = k
	} else if k != int32(len(f.keys))-1 {
		f.apart = true // not the newest key: its rows are not adjacent
	}
	b, ok := f.bys[by]
	if !ok {
		b = int32(len(f.byVals))
		f.bys[strings.Clone(by)] = b
		f.byVals = append(f.byVals, strings.Clone(by))
		f.counts = append(f.counts, 0)
		f.last = append(f.last, 0)
	}
	if f.pairs {
		p := uint64(uint32(k))<<32 | uint64(uint32(b))
		if _, dup := f.seen[p]; dup {
			return
		}
		f.seen[p] = struct{}{}
	} else {
		if f.last[b] == k+1 {
			return
		}
		f.last[b] = k + 1
	}
	f.counts[b]++
}

// groups are the by values with their distinct keys, in value order.
func (f *keyFold) groups() []Group {
	out := make([]Group, len(f.byVals))
	for i, v := range f.byVals {
		out[i] = Group{Values: []string{v}, Count: f.counts[i]}
	}
	slices.SortFunc(out, func(a, b Group) int { return strings.Compare(a.Values[0], b.Values[0]) })
	return out
}

// keySink hands each row's key and by values to a keyFold.
type keySink struct {
	cols  [2]string
	found [2]bool
	row   [2]string
	fold  *keyFold
}

func (s *keySink) names() []string                       { return s.cols[:] }
func (s *keySink) bound(i int)                           { s.found[i] = true }
func (s *keySink) take(i int, _ Kind, _ float64, v cell) { s.row[i] = cellText(v) }
func (s *keySink) end() error                            { s.fold.add(s.row[0], s.row[1]); return nil }

// DistinctCounts streams the table once (twice when a key's rows are
// apart: keyFold), keeping an entry per key and per by value.
func (a *streamAgg) DistinctCounts(ctx context.Context, key, by string) (int, []Group, error) {
	f, err := a.foldDistinct(ctx, key, by, false)
	if err == nil && f.apart {
		f, err = a.foldDistinct(ctx, key, by, true)
	}
	if err != nil {
		return 0, nil, err
	}
	return len(f.keys), f.groups(), nil
}

func (a *streamAgg) foldDistinct(ctx context.Context, key, by string, pairs bool) (*keyFold, error) {
	s := &keySink{cols: [2]string{key, by}, fold: newKeyFold(pairs)}
	opts := a.opts
	opts.sink = s
	if _, err := Open(ctx, a.src, "", a.schema, opts); err != nil {
		return nil, err
	}
	for i, c := range s.cols {
		if !s.found[i] {
			return nil, a.noColumn(c)
		}
	}
	return s.fold, nil
}

// DistinctCounts pushes two queries down: one counting the distinct keys
// with the rows Open would refuse and the rows whose values the server
// may tell apart, or together, otherwise than Open's texts do (plainValue),
// and one SELECT by, COUNT(DISTINCT key) ... GROUP BY by. Where the first
// counts any such row, or a column is missing, or key and by are the same
// column, the table is streamed instead.
func (a *sqlAgg) DistinctCounts(ctx context.Context, key, by string) (int, []Group, error) {
	n, groups, ok, err := a.distinctQueries(ctx, key, by)
	if err != nil {
		return 0, nil, err
	}
	if !ok {
		return a.streamAgg.DistinctCounts(ctx, key, by)
	}
	return n, groups, nil
}

func (a *sqlAgg) distinctQueries(ctx context.Context, key, by string) (int, []Group, bool, error) {
	desc := a.opts.describe(a.src)
	from, _ := a.from()
	conn, err := a.conn(ctx, desc)
	if err != nil {
		return 0, nil, false, err
	}
	defer a.release(ctx, conn)
	h, err := a.loadedColumns(ctx, conn, desc)
	if err != nil {
		return 0, nil, false, err
	}
	at := [2]int{slices.Index(h.names, key), slices.Index(h.names, by)}
	if at[0] < 0 || at[1] < 0 || key == by {
		return 0, nil, false, nil // the stream gives Open's error, else ErrNoColumn
	}
	qk, qb := quoteIdent(key), quoteIdent(by)
	var plain []string
	for i, q := range []string{qk, qb} {
		j := at[i]
		p := a.db.plainValue(q, h.numeric[h.b.idx[j]], h.float[h.b.idx[j]])
		if p == "" {
			return 0, nil, false, nil
		}
		plain = append(plain, p)
	}
	list := []string{a.db.countIf(strings.Join(h.refused, " OR ")), a.db.countIf("NOT (" + strings.Join(plain, " AND ") + ")"),
		a.db.mixed(qk), a.db.mixed(qb), a.db.countDistinct(qk)}
	q := "SELECT " + strings.Join(list, ", ") + " FROM " + from
	a.logQuery(ctx, desc, q)
	out := make([]float64, len(list))
	dest := make([]*float64, len(list))
	for i := range out {
		dest[i] = &out[i]
	}
	if err := conn.row(ctx, q, nil, dest); err != nil {
		return 0, nil, false, err
	}
	if out[0] > 0 || out[1] > 0 || out[2] > 0 || out[3] > 0 {
		return 0, nil, false, nil // Open refuses a row, or its texts may group otherwise
	}
	q = "SELECT " + qb + ", " + a.db.countDistinct(qk) + " FROM " + from + " GROUP BY " + qb
	a.logQuery(ctx, desc, q)
	var groups []Group
	err = conn.scan(ctx, q, func(row []cell) error {
		c, err := cellNumber(row[1])
		if err != nil {
			return fmt.Errorf("%w: %s: a count: %w", ErrSource, desc, err)
		}
		groups = append(groups, Group{Values: []string{cellText(row[0])}, Count: int(c)})
		return nil
	})
	if err != nil {
		return 0, nil, false, err
	}
	slices.SortFunc(groups, func(a, b Group) int { return strings.Compare(a.Values[0], b.Values[0]) })
	for i := 1; i < len(groups); i++ {
		if groups[i].Values[0] == groups[i-1].Values[0] {
			return 0, nil, false, nil // plainValue rules it out; the stream is exact anyway
		}
	}
	if groups == nil {
		groups = []Group{}
	}
	return int(out[4]), groups, true, nil
}

// logQuery puts a pushed-down query in the node's own log at debug level.
func (a *sqlAgg) logQuery(ctx context.Context, desc, q string) {
	if a.opts.Log != nil {
		a.opts.Log.DebugContext(ctx, "table: query pushed down", "source", desc, "query", q)
	}
}
