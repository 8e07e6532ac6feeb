package sjc

import (
	"fmt"
	"math/bits"

	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// Split propagation (Xu, thesis §3.3.2): the winner splits its own rows,
// and every other table divides its rows' counts by the split summary it
// receives (formulas (3) and (4)).

// SplitOwn partitions the winning table's rows by its split (thesis §3.3.2:
// the winner splits locally); each row keeps its full Cls.
func (l *Local) SplitOwn(p Part, s tree.Split) (left, right Part, err error) {
	col, err := l.splitColumn(s)
	if err != nil {
		return Part{}, Part{}, err
	}
	u := l.u
	goesLeft := make([]bool, len(p.Rows))
	nl := 0
	for k, r := range p.Rows {
		if s.Op == tree.OpLE {
			goesLeft[k] = col.Num[r] <= s.Num
		} else {
			goesLeft[k] = s.Holds(0, col.Str[r])
		}
		if goesLeft[k] {
			nl++
		}
	}
	nr := len(p.Rows) - nl
	left = Part{Rows: make([]int32, 0, nl), Cls: make([]uint64, 0, nl*u)}
	right = Part{Rows: make([]int32, 0, nr), Cls: make([]uint64, 0, nr*u)}
	for k, r := range p.Rows {
		dst := &right
		if goesLeft[k] {
			dst = &left
		}
		dst.Rows = append(dst.Rows, r)
		dst.Cls = append(dst.Cls, p.Cls[k*u:(k+1)*u]...)
	}
	return left, right, nil
}

// splitColumn is the column split s tests, when the table has it with the
// kind s needs (numeric for <=, any other for ==). The error names the
// table alone: the column, operator and value are the party's predicate,
// which no other party may learn, even from a failure.
func (l *Local) splitColumn(s tree.Split) (*table.Column, error) {
	col, err := l.t.Column(s.Column)
	ok := err == nil && s.Table == l.info.Name &&
		(s.Op == tree.OpLE && col.Num != nil || s.Op == tree.OpEQ && col.Num == nil)
	if !ok {
		return nil, fmt.Errorf("%w: table %q does not hold the column, of the kind, that its split tests", ErrData, l.info.Name)
	}
	return col, nil
}

// SplitSummary is SS(T_i -> T_j) (Definition 4): for each join value of
// the edge, the summed Cls of the sender's rows in the left and in the
// right child.
type SplitSummary struct {
	Edge   int      `msgpack:"edge"`
	Values []string `msgpack:"values"`
	Left   []uint64 `msgpack:"left"`
	Right  []uint64 `msgpack:"right"`
}

// SplitSummary computes SS(this -> neighbour) on edge e from the table's
// two children.
func (l *Local) SplitSummary(left, right Part, e int) (SplitSummary, error) {
	ek := l.edge(e)
	if ek == nil {
		return SplitSummary{}, fmt.Errorf("%w: table %q is not on edge %d", ErrSummary, l.info.Name, e)
	}
	ls, lh, err := l.aggregate(left, e)
	if err != nil {
		return SplitSummary{}, err
	}
	rs, rh, err := l.aggregate(right, e)
	if err != nil {
		return SplitSummary{}, err
	}
	ss := SplitSummary{Edge: e}
	u := l.u
	for id, v := range ek.Vals {
		if !lh[id] && !rh[id] {
			continue
		}
		ss.Values = append(ss.Values, v)
		ss.Left = append(ss.Left, ls[id*u:(id+1)*u]...)
		ss.Right = append(ss.Right, rs[id*u:(id+1)*u]...)
	}
	return ss, nil
}

// ApplySplit splits the table's rows for the children from the
// neighbour's split summary (thesis formulas (3) and (4), per class):
// Cls1 = Cls·S1/(S1+S2) and Cls2 = Cls·S2/(S1+S2) with S1, S2 the
// summary's left and right sums for the row's join value. A row goes to
// every child where its counts are not all zero.
func (l *Local) ApplySplit(p Part, ss SplitSummary) (left, right Part, err error) {
	idx, err := l.lookup(ss.Edge, ss.Values, len(ss.Left))
	if err != nil {
		return Part{}, Part{}, err
	}
	return l.applySplit(p, ss, idx)
}

// applySplit is ApplySplit with the summary's entries already looked up.
// It classifies each summary entry once (entryKinds), counts the rows each
// child gets (route), then fills the children (divide), so the children's
// slices are allocated once at their size.
func (l *Local) applySplit(p Part, ss SplitSummary, idx []int32) (left, right Part, err error) {
	if len(ss.Right) != len(ss.Left) {
		return Part{}, Part{}, fmt.Errorf("%w: table %q edge %s: %d left and %d right counts", ErrSummary, l.info.Name, l.g.EdgeName(ss.Edge), len(ss.Left), len(ss.Right))
	}
	if l.u == 0 || len(ss.Left)%l.u != 0 {
		return Part{}, Part{}, fmt.Errorf("%w: table %q edge %s: %d counts for %d classes", ErrSummary, l.info.Name, l.g.EdgeName(ss.Edge), len(ss.Left), l.u)
	}
	kinds, err := l.entryKinds(ss)
	if err != nil {
		return Part{}, Part{}, err
	}
	ent, nl, nr, err := l.route(p, ss, idx, kinds)
	if err != nil {
		return Part{}, Part{}, err
	}
	return l.divide(p, ss, ent, kinds, nl, nr)
}

// Where a split summary entry's join rows went.
const (
	toNone  = iota // no join row at all: the entry's rows drop out
	toLeft         // every join row went left
	toRight        // every join row went right
	toBoth         // some each way
)

// entryKinds classifies each summary entry: all its join rows went left
// (every class's left sum is non-zero and every right sum zero, so
// x·S1/(S1+S2) = x exactly), all right, or some each way. Rows of an
// all-left or all-right value keep their counts whole; only a mixed
// value's rows need the 128-bit divisions of formulas (3), (4). A class
// with both sums zero gives 0 on both sides (0/0 = 0): such an entry is
// mixed unless every class is so.
func (l *Local) entryKinds(ss SplitSummary) ([]uint8, error) {
	u := l.u
	kinds := make([]uint8, len(ss.Left)/u)
	for k := range kinds {
		allL, allR, none := true, true, true
		for c := 0; c < u; c++ {
			s1, s2 := ss.Left[k*u+c], ss.Right[k*u+c]
			if _, carry := bits.Add64(s1, s2, 0); carry != 0 {
				return nil, fmt.Errorf("%w: table %q edge %s: split summary", ErrOverflow, l.info.Name, l.g.EdgeName(ss.Edge))
			}
			allL = allL && s1 != 0 && s2 == 0
			allR = allR && s2 != 0 && s1 == 0
			none = none && s1 == 0 && s2 == 0
		}
		switch {
		case none:
			kinds[k] = toNone
		case allL:
			kinds[k] = toLeft
		case allR:
			kinds[k] = toRight
		default:
			kinds[k] = toBoth
		}
	}
	return kinds, nil
}

// route finds each row's summary entry (ent, -1 for a row with no counts,
// which drops out) and how many rows each child gets. A mixed value's row
// goes to a child when some class has both a non-zero count and a non-zero
// sum on that side (the division is exact, so the quotient is then
// non-zero).
func (l *Local) route(p Part, ss SplitSummary, idx []int32, kinds []uint8) (ent []int32, nl, nr int, err error) {
	ek, u := l.edge(ss.Edge), l.u
	ent = make([]int32, len(p.Rows))
	for i, r := range p.Rows {
		k := idx[ek.Row[r]]
		if k < 0 {
			return nil, 0, 0, fmt.Errorf("%w: table %q edge %s: a row's join value is missing from the split summary", ErrSummary, l.info.Name, l.g.EdgeName(ss.Edge))
		}
		cls := p.Cls[i*u : (i+1)*u]
		nz := false
		for _, x := range cls {
			nz = nz || x != 0
		}
		if !nz {
			ent[i] = -1 // all its quotients are zero: it drops out
			continue
		}
		ent[i] = k
		switch kinds[k] {
		case toLeft:
			nl++
		case toRight:
			nr++
		case toBoth:
			var gl, gr bool
			for c, x := range cls {
				gl = gl || (x != 0 && ss.Left[int(k)*u+c] != 0)
				gr = gr || (x != 0 && ss.Right[int(k)*u+c] != 0)
			}
			if gl {
				nl++
			}
			if gr {
				nr++
			}
		}
	}
	return ent, nl, nr, nil
}

// divide fills the children: a row of an all-left or all-right value goes
// whole to its child; a mixed value's row goes to each child with
// Cls1 = Cls·S1/(S1+S2) and Cls2 = Cls·S2/(S1+S2) per class (formulas (3)
// and (4)), where its counts are not all zero.
func (l *Local) divide(p Part, ss SplitSummary, ent []int32, kinds []uint8, nl, nr int) (left, right Part, err error) {
	u := l.u
	left = Part{Rows: make([]int32, 0, nl), Cls: make([]uint64, 0, nl*u)}
	right = Part{Rows: make([]int32, 0, nr), Cls: make([]uint64, 0, nr*u)}
	c1, c2 := make([]uint64, u), make([]uint64, u)
	for i, r := range p.Rows {
		if ent[i] < 0 {
			continue
		}
		k := int(ent[i])
		cls := p.Cls[i*u : (i+1)*u]
		switch kinds[k] {
		case toLeft:
			left.Rows, left.Cls = append(left.Rows, r), append(left.Cls, cls...)
			continue
		case toRight:
			right.Rows, right.Cls = append(right.Rows, r), append(right.Cls, cls...)
			continue
		case toNone:
			continue
		}
		nz1, nz2 := false, false
		for c, x := range cls {
			s1, s2 := ss.Left[k*u+c], ss.Right[k*u+c]
			tot := s1 + s2 // checked by entryKinds
			if c1[c], err = mulDiv(x, s1, tot); err == nil {
				c2[c], err = mulDiv(x, s2, tot)
			}
			if err != nil {
				return Part{}, Part{}, fmt.Errorf("table %q edge %s: %w", l.info.Name, l.g.EdgeName(ss.Edge), err)
			}
			nz1 = nz1 || c1[c] != 0
			nz2 = nz2 || c2[c] != 0
		}
		if nz1 {
			left.Rows, left.Cls = append(left.Rows, r), append(left.Cls, c1...)
		}
		if nz2 {
			right.Rows, right.Cls = append(right.Rows, r), append(right.Cls, c2...)
		}
	}
	return left, right, nil
}
