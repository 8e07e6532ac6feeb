package boost

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// ErrData: a party's table does not match the spec's schema.
var ErrData = errors.New("boost: table does not match the schema")

// ErrLabels: the class column does not fit the loss (logistic needs
// exactly two labels, squared numbers).
var ErrLabels = errors.New("boost: class column does not fit the loss")

// Local is one table's private inputs and training state: its join
// values per incident edge, its numeric columns binned, and each row's
// signature, the outcomes of the table's own splits so far ('0' left, '1'
// right, one byte per split of the table, in the order they were made).
type Local struct {
	g     *joinprop.Graph
	ti    int
	name  string
	n     int
	edges []*joinprop.EdgeKey // by edge index; nil where not incident
	feats []Feature
	sig   [][]byte
	w     []uint64     // each row's weight: the table's rows it stands for (nil: 1 each; grouped.go)
	y     []float64    // the target table: each row's label (0/1) or value
	made  [][2]int     // the table's splits so far: feature and bin, by ordinal
	first *DownSummary // the tree's first-level down message (reuse.go)
	kept  *keptWeights // the lattice path's kept Ws (sumGroups), memory only; nil: none
	wcol  int          // the number of the table's first group of columns in kept
}

// Feature is a numeric column binned by its cuts (Cuts).
type Feature struct {
	Column string
	Cuts   []float64
	bin    []int32
}

// NewLocal prepares table name of g. loss and bins are the params'; the
// target table's class column is read as 0/1 (positive: pos) for
// logistic loss, as a number for squared.
func NewLocal(g *joinprop.Graph, name string, t *table.Table, bins int, loss, pos string) (*Local, error) {
	ti := g.Index(name)
	if ti < 0 {
		return nil, fmt.Errorf("%w: table %q is not in the join graph", ErrData, name)
	}
	l := &Local{g: g, ti: ti, name: name, n: t.NumRows(), edges: make([]*joinprop.EdgeKey, len(g.Edges)), sig: make([][]byte, t.NumRows())}
	for _, ci := range g.Tables[ti].Columns {
		c, err := t.Column(ci.Name)
		if err != nil || c.Kind != ci.Kind || (ci.Kind == table.Numeric && c.Num == nil) {
			return nil, fmt.Errorf("%w: table %q column %q: not in the data with kind %s", ErrData, name, ci.Name, ci.Kind)
		}
		if ci.Kind == table.Numeric {
			f := Feature{Column: ci.Name, Cuts: Cuts(c.Num, bins), bin: make([]int32, l.n)}
			for r, x := range c.Num {
				f.bin[r] = int32(Bin(f.Cuts, x))
			}
			l.feats = append(l.feats, f)
		}
	}
	return l, l.keys(t, loss, pos)
}

// keys fills the table's join values on each incident edge and, at the
// class holder, the labels, from t (the table, or its groups' kept
// columns).
func (l *Local) keys(t *table.Table, loss, pos string) error {
	g, ti := l.g, l.ti
	for _, in := range g.Neighbours(ti) {
		ek, err := joinprop.NewEdgeKey(t, g.EdgeCols(in))
		if err != nil {
			return fmt.Errorf("%w: %w", ErrData, err)
		}
		l.edges[in.Edge] = ek
	}
	if ti == 0 {
		y, err := labels(t, g.Class, loss, pos)
		if err != nil {
			return err
		}
		l.y = y
	}
	return nil
}

// PositiveClass returns the positive label of a logistic job: the larger
// of the class column's two distinct values.
func PositiveClass(t *table.Table, class string) (string, error) {
	c, err := t.Column(class)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrData, err)
	}
	d := slices.Compact(slices.Sorted(slices.Values(c.Str)))
	if len(d) != 2 {
		return "", fmt.Errorf("%w: logistic loss needs exactly two class labels in column %q", ErrLabels, class)
	}
	return d[1], nil
}

func labels(t *table.Table, class, loss, pos string) ([]float64, error) {
	c, err := t.Column(class)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	y := make([]float64, len(c.Str))
	for r, s := range c.Str {
		if loss == LossLogistic {
			if s == pos {
				y[r] = 1
			}
			continue
		}
		if _, err := fmt.Sscan(s, &y[r]); err != nil {
			return nil, fmt.Errorf("%w: squared loss needs a numeric class column %q", ErrLabels, class)
		}
	}
	return y, nil
}

// Features returns the table's binned numeric columns, by column name.
func (l *Local) Features() []Feature { return l.feats }

// Split records the table's split of feature f at bin b: every row's
// signature gains one byte, '0' where the row's value is at most
// Cuts[b]. It returns the split's ordinal in the signatures.
func (l *Local) Split(f, b int) int {
	k := 0
	for r := range l.sig {
		k = len(l.sig[r])
		bit := byte('1')
		if int(l.feats[f].bin[r]) <= b {
			bit = '0'
		}
		l.sig[r] = append(l.sig[r], bit)
	}
	l.made = append(l.made, [2]int{f, b})
	return k
}

// Predicate is the table's split of the given ordinal, as the model
// writes it: column <= the bin's upper cut.
func (l *Local) Predicate(ordinal int) tree.Split {
	m := l.made[ordinal]
	f := l.feats[m[0]]
	return tree.Split{Party: l.g.Tables[l.ti].Party, Table: l.name, Column: f.Column, Op: tree.OpLE, Num: f.Cuts[m[1]]}
}

// Labels returns the class holder's labels (nil for other tables).
func (l *Local) Labels() []float64 { return l.y }

// JoinValues returns the table's distinct join values on edge e, sorted:
// its input to the edge's private set intersection.
func (l *Local) JoinValues(e int) []string { return slices.Clone(l.edges[e].Vals) }

// splits is the number of splits the table has made.
func (l *Local) splits() int { return len(l.made) }

// truncate takes back the table's splits after the first k (a level step
// re-run from its start).
func (l *Local) truncate(k int) {
	for r := range l.sig {
		l.sig[r] = l.sig[r][:k]
	}
	l.made = l.made[:k]
}
