package sjc

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/table"
)

// Local is one table's fixed private inputs for a job: its rows, its join
// value on each incident edge, and its candidate attributes with their
// values ranked. It never changes after NewLocal; the per-node state is a
// Part, and every protocol round is a method from (Local, Part, public
// inputs) to (new Part, message), so that a job.Session can run it as one
// step.
type Local struct {
	g     *Graph
	ti    int // index in g.Tables
	info  TableInfo
	t     *table.Table
	u     int        // number of class labels
	edges []*edgeKey // by edge index; nil where the edge is not incident
	attrs []attr
	class []int32 // the target table: label index per row
	// weight is, per row, how many source rows it stands for (nil: one
	// each): a table loaded as its distinct rows (table.OpenDistinct)
	// holds each once with its multiplicity. Rows with the same join
	// values, attributes and class take part in the same join rows and
	// go the same way at every split, so a row of weight w carries w
	// times one row's Cls, and every sum and summary is the same.
	weight []uint64
}

// edgeKey is a table's join value on one edge, interned.
type edgeKey = joinprop.EdgeKey

// attr is a candidate attribute with its values ranked.
type attr struct {
	col     *table.Column
	numeric bool
	nums    []float64 // sorted distinct values (numeric)
	strs    []string  // sorted distinct values (categorical)
	rank    []int32   // each row's value rank
}

// Labels returns the class labels of a job: the sorted distinct values of
// the target table's class column (over all its rows). The class column is
// not private (Xu, thesis §3.3.4), so the target's party may publish
// them.
func Labels(g *Graph, target *table.Table) ([]string, error) {
	col, err := target.Column(g.Class)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	ls := dictRank(col.Str, make([]int32, len(col.Str)))
	if len(ls) == 0 {
		return nil, fmt.Errorf("%w: target table %q has no rows", ErrData, target.Name)
	}
	return ls, nil
}

// NewLocal prepares the named table of g for a job with the given class
// labels. The table must have every schema column with its kind.
func NewLocal(g *Graph, name string, t *table.Table, labels []string, p Params) (*Local, error) {
	l, err := newLocalBase(g, name, t, nil, p)
	if err != nil {
		return nil, err
	}
	return l.withLabels(labels)
}

// newLocalBase is NewLocal without the class labels: the join values and
// ranked attributes, the costly part, which do not depend on them. weight
// is each row's multiplicity (Local.weight; nil: one each). An id column
// need not be loaded: no round reads it.
func newLocalBase(g *Graph, name string, t *table.Table, weight []uint64, p Params) (*Local, error) {
	return newLocalOver(g, name, t, weight, p, nil)
}

// newLocalOver is newLocalBase over the schema's columns in only (nil:
// every one): a Local that only routes rows (sjc-predict's) needs its
// join and split columns, not every attribute.
func newLocalOver(g *Graph, name string, t *table.Table, weight []uint64, p Params, only map[string]bool) (*Local, error) {
	ti := g.Index(name)
	if ti < 0 {
		return nil, fmt.Errorf("%w: table %q is not in the join graph", ErrData, name)
	}
	if weight != nil && len(weight) != t.NumRows() {
		return nil, fmt.Errorf("%w: table %q: %d row weights for %d rows", ErrData, name, len(weight), t.NumRows())
	}
	l := &Local{g: g, ti: ti, info: g.Tables[ti], t: t, edges: make([]*edgeKey, len(g.Edges)), weight: weight}
	for _, ci := range l.info.Columns {
		if ci.Kind == table.ID || only != nil && !only[ci.Name] {
			continue
		}
		c, err := t.Column(ci.Name)
		if err != nil {
			return nil, fmt.Errorf("%w: table %q column %q: not in the data", ErrData, name, ci.Name)
		}
		if c.Kind != ci.Kind || (ci.Kind == table.Numeric && c.Num == nil) {
			return nil, fmt.Errorf("%w: table %q column %q: loaded as %q, the schema says %q", ErrData, name, ci.Name, c.Kind, ci.Kind)
		}
	}
	for _, in := range g.Neighbours(ti) {
		e := g.Edges[in.Edge]
		cols := e.ChildCols
		if in.ParentSide {
			cols = e.ParentCols
		}
		ek, err := newEdgeKey(t, cols)
		if err != nil {
			return nil, err
		}
		l.edges[in.Edge] = ek
	}
	for _, ci := range l.info.Columns {
		if only != nil && !only[ci.Name] {
			continue
		}
		kind := ci.Kind
		if kind == table.Key && p.JoinSplits {
			kind = table.Categorical
		}
		if kind != table.Numeric && kind != table.Categorical {
			continue
		}
		c, _ := t.Column(ci.Name)
		l.attrs = append(l.attrs, newAttr(c, kind == table.Numeric))
	}
	return l, nil
}

// withLabels returns a copy of the label-free Local l0 (newLocalBase) for a
// job with the given class labels; l0 itself is not changed.
func (l0 *Local) withLabels(labels []string) (*Local, error) {
	l := *l0
	l.u = len(labels)
	l.class = nil
	g, t, name := l.g, l.t, l.info.Name
	if l.ti == 0 {
		col, _ := t.Column(g.Class)
		l.class = make([]int32, t.NumRows())
		vals := dictRank(col.Str, l.class)
		label := make([]int32, len(vals))
		for i, v := range vals {
			k, ok := slices.BinarySearch(labels, v)
			if !ok {
				return nil, fmt.Errorf("%w: table %q column %q: a class value is not a label of the job", ErrData, name, g.Class)
			}
			label[i] = int32(k)
		}
		for r, i := range l.class {
			l.class[r] = label[i]
		}
	}
	return &l, nil
}

func newEdgeKey(t *table.Table, cols []string) (*edgeKey, error) {
	ek, err := joinprop.NewEdgeKey(t, cols)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrData, strings.TrimSuffix(err.Error(), ": "+joinprop.ErrColumn.Error()))
	}
	return ek, nil
}

func newAttr(c *table.Column, numeric bool) attr {
	a := attr{col: c, numeric: numeric, rank: make([]int32, c.Len())}
	if numeric {
		a.nums = dictRank(c.Num, a.rank)
	} else {
		a.strs = dictRank(c.Str, a.rank)
	}
	return a
}

// GroupColumns are the columns of a table of g whose distinct rows a party
// loads (table.OpenDistinct): every column of the schema but its ids, which
// no round reads and which would make every row distinct.
func GroupColumns(schema map[string]table.Kind) []string {
	var out []string
	for c, k := range schema {
		if k != table.ID {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// Name is the table's name.
func (l *Local) Name() string { return l.info.Name }

// JoinValues returns the table's distinct canonical join values on edge e,
// sorted: its input to the private set intersection of that edge.
func (l *Local) JoinValues(e int) []string { return slices.Clone(l.edge(e).Vals) }

func (l *Local) edge(e int) *edgeKey {
	if e < 0 || e >= len(l.edges) || l.edges[e] == nil {
		return nil
	}
	return l.edges[e]
}
