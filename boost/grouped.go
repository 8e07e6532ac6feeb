package boost

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/table"
)

// Grouped tables. Every split is "column <= cuts[b]", that is "bin <= b",
// so a row's signature at every level is a function of its bins: rows
// alike in their join values, the bin of every numeric column and, at
// the class holder, the label are alike in every round. A party may
// therefore read a table as its binned groups (table.OpenBinned: one
// query per column for the cuts, the table's own rows ranked exactly as
// Cuts ranks them, and one GROUP BY computing the bins where the data
// lives, or a streamed fold for a file) and hold one row per group, of
// weight its rows: a combo's count starts at the group's weight (combo),
// what reaches a group going down is multiplied by it (spread), and the
// class holder's groups carry it into G, H and the base score. Every sum
// is the same integer sum of fixed-point gradients, so the model and
// every message's plaintext are those of the row-by-row load; the weights
// stay in the party. The kept training state (state.go) records splits as
// (feature, bin), which both loads cut alike, so a session reopened after
// a restart goes on whichever way it loads its tables.

// GroupMode is how a party loads its boost tables (Kind.GroupRows):
// under GroupAuto a table is grouped when its groups are estimated at
// most a groupRatio-th of its rows.
type GroupMode = job.GroupMode

// The modes, as job names them.
const (
	GroupAuto = job.GroupAuto
	GroupOn   = job.GroupOn
	GroupOff  = job.GroupOff
)

// groupRatio: under GroupAuto a table is grouped when its groups are
// estimated at most 1/groupRatio of its rows, sjc's threshold
// (docs/sources.md, "Choosing per table"): a group costs the server's
// GROUP BY and its transfer about what ten rows read one by one cost.
const groupRatio = 10

// weight is row r's weight.
func (l *Local) weight(r int) uint64 {
	if l.w == nil {
		return 1
	}
	return l.w[r]
}

// groupColumns are what the rounds read of table ti: the join columns of
// its edges and, at the class holder, the class (kept by value), and its
// numeric columns (binned), in the order NewLocal takes them.
func groupColumns(g *joinprop.Graph, ti int) (keep, binned []string) {
	for _, in := range g.Neighbours(ti) {
		keep = append(keep, g.EdgeCols(in)...)
	}
	if ti == 0 {
		keep = append(keep, g.Class)
	}
	slices.Sort(keep)
	keep = slices.Compact(keep)
	for _, ci := range g.Tables[ti].Columns {
		if ci.Kind == table.Numeric {
			binned = append(binned, ci.Name)
		}
	}
	return keep, binned
}

// NewGroupedLocal is NewLocal over a table's binned groups
// (table.OpenBinned with groupColumns and the params' bins): one row per
// group, weighted by its rows.
func NewGroupedLocal(g *joinprop.Graph, name string, b *table.Binned, loss, pos string) (*Local, error) {
	ti := g.Index(name)
	if ti < 0 {
		return nil, fmt.Errorf("%w: table %q is not in the join graph", ErrData, name)
	}
	_, binned := groupColumns(g, ti)
	if !slices.Equal(b.Columns, binned) {
		return nil, fmt.Errorf("%w: table %q: its groups are not binned by its numeric columns", ErrData, name)
	}
	n := len(b.Counts)
	l := &Local{g: g, ti: ti, name: name, n: n, edges: make([]*joinprop.EdgeKey, len(g.Edges)), sig: make([][]byte, n), w: make([]uint64, n)}
	for r, c := range b.Counts {
		l.w[r] = uint64(c)
	}
	for j, c := range b.Columns {
		l.feats = append(l.feats, Feature{Column: c, Cuts: b.Cuts[j], bin: b.Bins[j]})
	}
	return l, l.keys(b.Table, loss, pos)
}

// grouping says whether the party groups table ts (name in the graph): as
// the mode fixes it, or, under GroupAuto, when the groups are estimated
// at most 1/groupRatio of the rows. The groups are at most the distinct
// rows over the columns read, and at most the distinct kept values times
// bins per binned column; each is estimated (job.EstimateDistinct: the
// database's statistics, a hash sample, or a sketch of a streamed file),
// the smaller bound wins. An estimate that fails loads rows, whose load
// then names the problem. The choice is in the party's own log (info),
// never in a message: nothing sent depends on it.
func (s *session) grouping(ctx context.Context, ts job.TableSpec, ti int, schema map[string]table.Kind, mode GroupMode) bool {
	switch {
	case mode == GroupOn:
		return true
	case mode == GroupOff || schema == nil:
		return false
	}
	keep, binned := groupColumns(s.g, ti)
	e, err := job.EstimateDistinct(ctx, s.p, ts, schema, append(slices.Clone(keep), binned...))
	if err != nil {
		s.p.Log().InfoContext(ctx, "boost: no estimate of groups; rows loaded one by one", "table", ts.Name)
		return false
	}
	groups := e.Distinct
	if len(keep) > 0 && groups*groupRatio > e.Rows {
		if k, err := job.EstimateDistinct(ctx, s.p, ts, schema, keep); err == nil {
			bound := k.Distinct
			for range binned {
				bound *= float64(s.prm.Bins)
			}
			groups = min(groups, bound)
		}
	}
	group := groups*groupRatio <= e.Rows
	s.p.Log().InfoContext(ctx, "boost: groups estimated", "table", ts.Name, "rows", e.Rows, "groups", groups, "how", e.How, "grouped", group)
	return group
}

// openBinned reads the party's table ts as its binned groups, from the
// source the participant resolves for it (the node's column rules already
// applied: only the schema's kept and binned columns are selected), each
// pushed-down query in the party's log at debug level.
func (s *session) openBinned(ctx context.Context, ts job.TableSpec, ti int, schema map[string]table.Kind) (*table.Binned, error) {
	src, err := s.p.TableSource(ts)
	if err != nil {
		return nil, err
	}
	keep, binned := groupColumns(s.g, ti)
	b, err := table.OpenBinned(ctx, src, ts.Name, schema, keep, binned, s.prm.Bins, table.ReadOptions{Label: table.Label(src), Log: s.p.Log()})
	if err != nil {
		return nil, fmt.Errorf("table %s: kind boost loads a table's binned groups into memory: %w", ts.Name, err)
	}
	s.p.Log().InfoContext(ctx, "boost: table read as binned groups", "table", ts.Name, "groups", len(b.Counts))
	return b, nil
}

// loadTables reads each of the party's tables, grouped (s.binned) or row
// by row (s.tables), as mode and the estimates choose.
func (s *session) loadTables(ctx context.Context, mode GroupMode) error {
	spec := s.p.Spec()
	ps, ok := spec.Party(s.p.Self())
	if !ok {
		return fmt.Errorf("party %q is not in the job spec", s.p.Self())
	}
	for _, ts := range ps.Tables {
		schema, err := spec.TableSchema(ts.Name)
		if err != nil {
			return err
		}
		ti := s.g.Index(ts.Name)
		if ti >= 0 && s.grouping(ctx, ts, ti, schema, mode) {
			b, err := s.openBinned(ctx, ts, ti, schema)
			if err != nil {
				return fmt.Errorf("party %s: %w", s.p.Self(), err)
			}
			s.binned[ts.Name] = b
			continue
		}
		t, err := job.OpenTable(ctx, s.p, ts, ts.Name, schema)
		if err != nil {
			return fmt.Errorf("party %s: %w", s.p.Self(), err)
		}
		s.tables[ts.Name] = t
	}
	return nil
}

// labelSum is the sum of the join rows' labels and their number. It adds
// each distinct label once, times its join rows, in the labels' order, so
// that the sum does not depend on how the rows are grouped (a squared
// loss's labels are not integers, and a float sum's rounding depends on
// its order).
func labelSum(groups []Group, y []float64) (float64, uint64) {
	per := map[float64]uint64{}
	var n uint64
	for _, gr := range groups {
		per[y[gr.Row]] += gr.Count
		n += gr.Count
	}
	var wy float64
	for _, v := range slices.Sorted(maps.Keys(per)) {
		wy += float64(per[v]) * v
	}
	return wy, n
}
