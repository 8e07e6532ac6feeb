package sjc

import (
	"fmt"
	"math/bits"
)

// A table's share of a tree node (Part) and the sums over it that every
// round starts from.

// Part is a table's share of one tree node, T_i(n) of the thesis: the rows
// taking part in the node's join rows, each with its class-count vector
// Cls (row k's counts are Cls[k*u : (k+1)*u]). A row's Cls[c] is the number
// of join rows of class c at the node that the row takes part in; rows
// with an all-zero Cls are not kept.
type Part struct {
	Rows []int32
	Cls  []uint64
}

// Len is the number of rows.
func (p Part) Len() int { return len(p.Rows) }

// Initial is the table's Part before class propagation: every row; the
// target table's rows carry the unit vector of their class (times the
// row's weight), the others all zeros until a forward propagation sets
// them.
func (l *Local) Initial() Part {
	n := l.t.NumRows()
	p := Part{Rows: make([]int32, n), Cls: make([]uint64, n*l.u)}
	for r := range p.Rows {
		p.Rows[r] = int32(r)
		if l.class != nil {
			p.Cls[r*l.u+int(l.class[r])] = l.rowWeight(r)
		}
	}
	return p
}

// rowWeight is how many source rows row r stands for.
func (l *Local) rowWeight(r int) uint64 {
	if l.weight == nil {
		return 1
	}
	return l.weight[r]
}

// Counts is the node's class distribution as this table sees it: the sum
// of Cls over its rows. Every table of the join sees the same counts. Each
// count and their total must fit in 64 bits (ErrOverflow).
func (l *Local) Counts(p Part) ([]uint64, error) {
	out := make([]uint64, l.u)
	for k := range p.Rows {
		for c := 0; c < l.u; c++ {
			s, carry := bits.Add64(out[c], p.Cls[k*l.u+c], 0)
			if carry != 0 {
				return nil, fmt.Errorf("%w: table %q: node class counts", ErrOverflow, l.info.Name)
			}
			out[c] = s
		}
	}
	// The node's total must fit too: gains and stop rules use it.
	var n uint64
	for _, x := range out {
		var carry uint64
		if n, carry = bits.Add64(n, x, 0); carry != 0 {
			return nil, fmt.Errorf("%w: table %q: node total over all classes", ErrOverflow, l.info.Name)
		}
	}
	return out, nil
}

// aggregate sums p's Cls per join value of edge e, with overflow checks.
func (l *Local) aggregate(p Part, e int) ([]uint64, []bool, error) {
	ek := l.edge(e)
	u := l.u
	sum := make([]uint64, len(ek.Vals)*u)
	has := make([]bool, len(ek.Vals))
	for k, r := range p.Rows {
		id := int(ek.Row[r])
		has[id] = true
		for c := 0; c < u; c++ {
			s, carry := bits.Add64(sum[id*u+c], p.Cls[k*u+c], 0)
			if carry != 0 {
				return nil, nil, fmt.Errorf("%w: table %q, summing join value counts on edge %s", ErrOverflow, l.info.Name, l.g.EdgeName(e))
			}
			sum[id*u+c] = s
		}
	}
	return sum, has, nil
}
