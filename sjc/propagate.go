package sjc

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/cohortdm/cohort/joinprop"
)

// Class propagation (Xu, thesis §3.3.1): class summaries and how a table
// takes one forward (formula (1)) or backward (formula (2)).

// ClassSummary is CS(T_i -> T_j) of the thesis (Definition 3): for each
// shared join value v of the edge held by the sender, the sum of Cls over
// the sender's rows with value v. Values are sorted; Counts holds u counts
// per value. It discloses to the neighbour the shared values the sender's
// rows still hold and their class counts (thesis §3.3.4).
type ClassSummary struct {
	Edge   int      `msgpack:"edge"`
	Values []string `msgpack:"values"`
	Counts []uint64 `msgpack:"counts"`
}

// Summary computes CS(this -> neighbour) on edge e over p, restricted to
// shared, the sorted join values the edge's private set intersection found
// in common.
func (l *Local) Summary(p Part, e int, shared []string) (ClassSummary, error) {
	ek := l.edge(e)
	if ek == nil {
		return ClassSummary{}, fmt.Errorf("%w: table %q is not on edge %d", ErrSummary, l.info.Name, e)
	}
	sum, has, err := l.aggregate(p, e)
	if err != nil {
		return ClassSummary{}, err
	}
	cs := ClassSummary{Edge: e}
	for id, v := range ek.Vals {
		if !has[id] {
			continue
		}
		if _, ok := slices.BinarySearch(shared, v); !ok {
			continue
		}
		cs.Values = append(cs.Values, v)
		cs.Counts = append(cs.Counts, sum[id*l.u:(id+1)*l.u]...)
	}
	return cs, nil
}

// lookup maps the values of a summary on edge e to the table's value
// indexes: idx[valueIndex] = entry number, or -1. A summary lists its
// values sorted and distinct (Summary and SplitSummary write them in the
// table's sorted order), so they are matched against the table's sorted
// values in one merge (gallop), without hashing.
func (l *Local) lookup(e int, values []string, counts int) ([]int32, error) {
	ek := l.edge(e)
	if ek == nil {
		return nil, fmt.Errorf("%w: table %q is not on edge %d", ErrSummary, l.info.Name, e)
	}
	if counts != len(values)*l.u {
		return nil, fmt.Errorf("%w: table %q edge %s: %d counts for %d values and %d classes", ErrSummary, l.info.Name, l.g.EdgeName(e), counts, len(values), l.u)
	}
	idx := make([]int32, len(ek.Vals))
	for i := range idx {
		idx[i] = -1
	}
	j := 0 // ek.Vals[:j] are below every value still to come
	for k, v := range values {
		if k > 0 && v <= values[k-1] {
			return nil, fmt.Errorf("%w: table %q edge %s: the summary repeats a join value or lists them out of order", ErrSummary, l.info.Name, l.g.EdgeName(e))
		}
		j = gallop(ek.Vals, j, v)
		if j >= len(ek.Vals) || ek.Vals[j] != v {
			return nil, fmt.Errorf("%w: table %q edge %s: the summary names a join value the table does not hold", ErrSummary, l.info.Name, l.g.EdgeName(e))
		}
		idx[j] = int32(k)
		j++
	}
	return idx, nil
}

// gallop is joinprop.Gallop.
func gallop(vals []string, j int, v string) int { return joinprop.Gallop(vals, j, v) }

// propagate applies a class summary forward or backward.
func (l *Local) propagate(p Part, cs ClassSummary, forward bool) (Part, error) {
	if forward {
		return l.Forward(p, cs)
	}
	return l.Backward(p, cs)
}

// Forward applies a forward propagation (thesis formula (1)): each row
// whose join value is in cs takes that entry's ClsSum as its Cls (times
// its weight); the others are dangling and drop out.
func (l *Local) Forward(p Part, cs ClassSummary) (Part, error) {
	idx, err := l.lookup(cs.Edge, cs.Values, len(cs.Counts))
	if err != nil {
		return Part{}, err
	}
	return l.forward(p, cs, idx)
}

// forward is Forward with the summary's entries already looked up (idx by
// the table's value index, as lookup gives it); cs.Values is not read.
func (l *Local) forward(p Part, cs ClassSummary, idx []int32) (Part, error) {
	ek, u := l.edge(cs.Edge), l.u
	n := 0
	for _, r := range p.Rows {
		if idx[ek.Row[r]] >= 0 {
			n++
		}
	}
	out := Part{Rows: make([]int32, 0, n), Cls: make([]uint64, 0, n*u)}
	for _, r := range p.Rows {
		k := idx[ek.Row[r]]
		if k < 0 {
			continue
		}
		out.Rows = append(out.Rows, r)
		cls := cs.Counts[int(k)*u : (int(k)+1)*u]
		if l.weight == nil {
			out.Cls = append(out.Cls, cls...)
			continue
		}
		// A row standing for w source rows takes part in w times the
		// join rows of one.
		w := l.weight[r]
		for _, c := range cls {
			hi, lo := bits.Mul64(c, w)
			if hi != 0 {
				return Part{}, fmt.Errorf("%w: table %q, taking class counts on edge %s", ErrOverflow, l.info.Name, l.g.EdgeName(cs.Edge))
			}
			out.Cls = append(out.Cls, lo)
		}
	}
	return out, nil
}

// Backward applies a backward propagation (thesis formula (2)): each row
// with join value v rescales its Cls per class by cs[v] / old[v], where
// old[v] is the table's current sum of Cls over its rows with value v,
// multiplying first in 128 bits. The thesis takes ClsSum' from the summary
// "computed previously in the forward propagation"; when the receiver was
// the DFT's child that summary is not its own, and the receiver's current
// sum is the reading that makes the counts exact (the tests hold every
// count to the materialised join's). Rows
// whose value is not in cs, or whose Cls becomes zero, drop out.
func (l *Local) Backward(p Part, cs ClassSummary) (Part, error) {
	idx, err := l.lookup(cs.Edge, cs.Values, len(cs.Counts))
	if err != nil {
		return Part{}, err
	}
	return l.backward(p, cs, idx)
}

// backward is Backward with the summary's entries already looked up.
func (l *Local) backward(p Part, cs ClassSummary, idx []int32) (Part, error) {
	old, _, err := l.aggregate(p, cs.Edge)
	if err != nil {
		return Part{}, err
	}
	ek, u := l.edge(cs.Edge), l.u
	out := Part{Rows: make([]int32, 0, len(p.Rows)), Cls: make([]uint64, 0, len(p.Cls))}
	row := make([]uint64, u)
	for i, r := range p.Rows {
		id := int(ek.Row[r])
		k := idx[id]
		if k < 0 {
			continue
		}
		nz := false
		for c := 0; c < u; c++ {
			v, err := mulDiv(p.Cls[i*u+c], cs.Counts[int(k)*u+c], old[id*u+c])
			if err != nil {
				return Part{}, fmt.Errorf("table %q edge %s: %w", l.info.Name, l.g.EdgeName(cs.Edge), err)
			}
			row[c] = v
			nz = nz || v != 0
		}
		if nz {
			out.Rows = append(out.Rows, r)
			out.Cls = append(out.Cls, row...)
		}
	}
	return out, nil
}

// mulDiv is a*b/d with a 128-bit product, 0 when d is 0 (the thesis's
// 0/0 = 0). The quotient must fit in 64 bits and the division be exact.
func mulDiv(a, b, d uint64) (uint64, error) {
	if d == 0 {
		return 0, nil
	}
	hi, lo := bits.Mul64(a, b)
	if hi >= d {
		return 0, ErrOverflow
	}
	q, rem := bits.Div64(hi, lo, d)
	if rem != 0 {
		return 0, ErrInexact
	}
	return q, nil
}
