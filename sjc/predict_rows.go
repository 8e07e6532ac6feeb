package sjc

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// router reduces a row of one of the party's tables to what routes it
// down the model: the texts of the table's join columns and, for each
// column the party's model part splits on, which side of each of those
// predicates its value falls (a numeric value: how many of the column's
// thresholds lie below it; a categorical one: which of the split values
// it is, if any). Rows with the same key take part in the same join rows
// and go the same way at every node, so sjc-predict classifies one row
// per key, weighted by how many rows have it (Local.weight, exact as in
// training), and holds the keys, not the rows: their number is at most
// the table's distinct join values times the cells its own predicates
// cut (the model's), however many rows the table has.
type router struct {
	name  string
	cols  []string // join columns, then split columns, each once
	kinds []table.Kind
	join  int                // cols[:join] are join columns
	thr   [][]float64        // per column, a numeric one's thresholds, sorted
	cats  []map[string]int32 // per column, a categorical one's split values
	key   []byte
}

// newRouter is table ti's router under the party's model splits, over
// the columns of schema (a split column the schema lacks is left out:
// checkSplits names it).
func newRouter(g *Graph, ti int, schema map[string]table.Kind, splits []ModelSplit) *router {
	r := &router{name: g.Tables[ti].Name}
	add := func(c string) {
		if _, ok := schema[c]; ok && !slices.Contains(r.cols, c) {
			r.cols = append(r.cols, c)
			r.kinds = append(r.kinds, schema[c])
		}
	}
	for _, in := range g.Neighbours(ti) {
		e := g.Edges[in.Edge]
		cols := e.ChildCols
		if in.ParentSide {
			cols = e.ParentCols
		}
		for _, c := range cols {
			add(c)
		}
	}
	r.join = len(r.cols)
	for _, m := range splits {
		if m.Table == r.name {
			add(m.Column)
		}
	}
	if len(r.cols) == 0 {
		// A table that joins nothing and that no predicate splits: every
		// row is alike. Any column serves to read the rows; with no
		// thresholds or split values its part of the key is constant.
		if cs := slices.Sorted(maps.Keys(schema)); len(cs) > 0 {
			r.cols, r.kinds = cs[:1], []table.Kind{schema[cs[0]]}
		}
	}
	r.thr, r.cats = make([][]float64, len(r.cols)), make([]map[string]int32, len(r.cols))
	for _, m := range splits {
		j := slices.Index(r.cols, m.Column)
		if m.Table != r.name || j < r.join {
			continue // a join column is routed by its text
		}
		if r.kinds[j] == table.Numeric {
			r.thr[j] = append(r.thr[j], m.Num)
			continue
		}
		if r.cats[j] == nil {
			r.cats[j] = map[string]int32{}
		}
		if _, ok := r.cats[j][m.Cat]; !ok {
			r.cats[j][m.Cat] = int32(len(r.cats[j]))
		}
	}
	for _, t := range r.thr {
		sort.Float64s(t)
	}
	return r
}

// keyOf is a row's key (valid until the next call).
func (r *router) keyOf(vals []string, nums []float64) []byte {
	r.key = r.key[:0]
	for j, v := range vals {
		switch {
		case j < r.join:
			r.key = strconv.AppendInt(r.key, int64(len(v)), 10)
			r.key = append(append(r.key, ':'), v...)
			continue
		case r.kinds[j] == table.Numeric:
			r.key = strconv.AppendInt(r.key, int64(sort.SearchFloat64s(r.thr[j], nums[j])), 10)
		default:
			at, ok := r.cats[j][v]
			if !ok {
				at = -1
			}
			r.key = strconv.AppendInt(r.key, int64(at), 10)
		}
		r.key = append(r.key, ';')
	}
	return r.key
}

// routed is a table's keys: one row per key (the first row that has it,
// as the table's loaded columns over the router's), how many rows have
// it, and each key's row number.
type routed struct {
	t      *table.Table
	counts []uint64
	at     map[string]int32
}

// scanRouted streams the table ts once and keeps its keys. The source's
// max_rows (the node's max_table_rows) bounds the keys, not the rows.
func scanRouted(ctx context.Context, p job.Participant, ts job.TableSpec, schema map[string]table.Kind, r *router) (*routed, error) {
	src, err := p.TableSource(ts)
	if err != nil {
		return nil, err
	}
	out := &routed{t: &table.Table{Name: r.name}, at: map[string]int32{}}
	for j, c := range r.cols {
		out.t.Columns = append(out.t.Columns, &table.Column{Name: c, Kind: r.kinds[j]})
	}
	err = table.Scan(ctx, src, schema, r.cols, table.ReadOptions{Label: table.Label(src)}, func(vals []string, nums []float64) error {
		k := r.keyOf(vals, nums)
		if at, ok := out.at[string(k)]; ok {
			out.counts[at]++
			return nil
		}
		if src.MaxRows > 0 && int64(len(out.counts)) >= src.MaxRows {
			return fmt.Errorf("kind sjc-predict holds one row per way its rows are routed: %w: more than this node loads into memory (max_table_rows or the table's max_rows)", table.ErrTooLarge)
		}
		out.at[string(k)] = int32(len(out.counts))
		out.counts = append(out.counts, 1)
		for j, c := range out.t.Columns {
			c.Str = append(c.Str, vals[j])
			if c.Kind == table.Numeric {
				c.Num = append(c.Num, nums[j])
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", ts.Name, err)
	}
	return out, nil
}

// errChanged: the target table holds, on its second read, a row whose key
// the first did not see.
var errChanged = errors.New("the table changed between its two reads")

// writePredictions streams the target table again and writes, through
// job.WriteSecretFrom, one line per row (in the order the reader gives
// them, numbered from 1): its join rows per predicted label, those of its
// key (perKey) over the key's rows, and the label most of them get (ties to the smallest;
// empty when the row joins nothing). Memory is one row's and the keys'.
func (ps *predictSession) writePredictions(ctx context.Context, labels []string, perKey []uint64) error {
	s, tg := ps.s, ps.target
	nl := len(labels)
	src, err := s.p.TableSource(tg.ts)
	if err != nil {
		return err
	}
	return job.WriteSecretFrom(s.p.Secrets(), PredictionsSecret(s.p.JobID()), func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(append(append([]string{"row"}, labels...), "predicted")); err != nil {
			return err
		}
		n := 0
		rec, c := make([]string, 0, nl+2), make([]uint64, nl)
		err := table.Scan(ctx, src, tg.schema, tg.router.cols, table.ReadOptions{Label: table.Label(src)}, func(vals []string, nums []float64) error {
			at, ok := tg.keys.at[string(tg.router.keyOf(vals, nums))]
			if !ok {
				return fmt.Errorf("%w: %w", ErrData, errChanged)
			}
			n++
			// Every row of a key takes part in as many join rows as each
			// other: the key's are w times one row's, w its rows.
			w := tg.keys.counts[at]
			for k, x := range perKey[int(at)*nl : (int(at)+1)*nl] {
				if x%w != 0 {
					return fmt.Errorf("%w: table %q: a key's join rows do not share out over its rows", ErrInexact, tg.ts.Name)
				}
				c[k] = x / w
			}
			rec = append(rec[:0], strconv.Itoa(n))
			for _, x := range c {
				rec = append(rec, strconv.FormatUint(x, 10))
			}
			pred := ""
			if slices.Max(c) > 0 {
				pred = labels[tree.Majority(c)]
			}
			return cw.Write(append(rec, pred))
		})
		if err != nil {
			return fmt.Errorf("table %s: %w", tg.ts.Name, err)
		}
		cw.Flush()
		return cw.Error()
	})
}
