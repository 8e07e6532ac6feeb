package sjc

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cohortdm/cohort/sjc/tree"
	"github.com/cohortdm/cohort/table"
)

// Local is one table's fixed private inputs for a job: its rows, its join
// value on each incident edge, and its candidate attributes with their
// values ranked. It never changes after NewLocal; the per-node state is a
// Part, and every protocol round is a method from (Local, Part, public
// inputs) to (new Part, message), so that a job.Session can run it as one
// step (STYLE.md habit 1).
type Local struct {
	g     *Graph
	ti    int // index in g.Tables
	info  TableInfo
	t     *table.Table
	u     int        // number of class labels
	edges []*edgeKey // by edge index; nil where the edge is not incident
	attrs []attr
	class []int32 // the target table: label index per row
}

// edgeKey is a table's join value on one edge, interned.
type edgeKey struct {
	vals []string // sorted distinct canonical join values
	row  []int32  // each row's value index
}

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
// not private (research report §2.3), so the target's party may publish
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
	l, err := newLocalBase(g, name, t, p)
	if err != nil {
		return nil, err
	}
	return l.withLabels(labels)
}

// newLocalBase is NewLocal without the class labels: the join values and
// ranked attributes, the costly part, which do not depend on them.
func newLocalBase(g *Graph, name string, t *table.Table, p Params) (*Local, error) {
	ti := g.Index(name)
	if ti < 0 {
		return nil, fmt.Errorf("%w: table %q is not in the join graph", ErrData, name)
	}
	l := &Local{g: g, ti: ti, info: g.Tables[ti], t: t, edges: make([]*edgeKey, len(g.Edges))}
	for _, ci := range l.info.Columns {
		c, err := t.Column(ci.Name)
		if err != nil {
			return nil, fmt.Errorf("%w: table %q column %q: not in the data", ErrData, name, ci.Name)
		}
		if c.Kind != ci.Kind || (ci.Kind == table.Numeric && c.Num == nil) {
			return nil, fmt.Errorf("%w: table %q column %q: loaded as %q, the schema says %q", ErrData, name, ci.Name, c.Kind, ci.Kind)
		}
	}
	for _, in := range g.neighbours(ti) {
		e := g.Edges[in.edge]
		cols := e.ChildCols
		if in.parentSide {
			cols = e.ParentCols
		}
		ek, err := newEdgeKey(t, cols)
		if err != nil {
			return nil, err
		}
		l.edges[in.edge] = ek
	}
	for _, ci := range l.info.Columns {
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
	// Dictionary-encode each key column once and combine the codes into
	// a dense tuple code per row, so that only the distinct join values
	// are text-encoded and sorted.
	n := t.NumRows()
	code := make([]int32, n)
	var tuples [][]string // the distinct key tuples, by code
	for i, c := range cols {
		col, err := t.Column(c)
		if err != nil {
			return nil, fmt.Errorf("%w: table %q column %q: not in the data", ErrData, t.Name, c)
		}
		if i == 0 {
			d := dictRank(col.Str, code)
			tuples = make([][]string, len(d))
			for k, v := range d {
				tuples[k] = []string{v}
			}
			continue
		}
		cc := make([]int32, n)
		d := dictRank(col.Str, cc)
		pair := make(map[uint64]int32)
		var next [][]string
		for r := range code {
			key := uint64(code[r])<<32 | uint64(uint32(cc[r]))
			id, ok := pair[key]
			if !ok {
				id = int32(len(next))
				pair[key] = id
				next = append(next, append(slices.Clip(tuples[code[r]]), d[cc[r]]))
			}
			code[r] = id
		}
		tuples = next
	}
	encs := make([]string, len(tuples))
	for k, tu := range tuples {
		encs[k] = keyEncode(tu)
	}
	pos := make([]int32, len(encs))
	ek := &edgeKey{vals: dictRank(encs, pos), row: code}
	for r, k := range code {
		code[r] = pos[k]
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

// Name is the table's name.
func (l *Local) Name() string { return l.info.Name }

// JoinValues returns the table's distinct canonical join values on edge e,
// sorted: its input to the private set intersection of that edge.
func (l *Local) JoinValues(e int) []string { return slices.Clone(l.edge(e).vals) }

func (l *Local) edge(e int) *edgeKey {
	if e < 0 || e >= len(l.edges) || l.edges[e] == nil {
		return nil
	}
	return l.edges[e]
}

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
// target table's rows carry the unit vector of their class, the others
// all zeros until a forward propagation sets them.
func (l *Local) Initial() Part {
	n := l.t.NumRows()
	p := Part{Rows: make([]int32, n), Cls: make([]uint64, n*l.u)}
	for r := range p.Rows {
		p.Rows[r] = int32(r)
		if l.class != nil {
			p.Cls[r*l.u+int(l.class[r])] = 1
		}
	}
	return p
}

// ClassSummary is CS(T_i -> T_j) of the thesis (Definition 3): for each
// shared join value v of the edge held by the sender, the sum of Cls over
// the sender's rows with value v. Values are sorted; Counts holds u counts
// per value. It discloses to the neighbour the shared values the sender's
// rows still hold and their class counts (research report §2.15).
type ClassSummary struct {
	Edge   int      `msgpack:"edge"`
	Values []string `msgpack:"values"`
	Counts []uint64 `msgpack:"counts"`
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

// aggregate sums p's Cls per join value of edge e, with overflow checks.
func (l *Local) aggregate(p Part, e int) ([]uint64, []bool, error) {
	ek := l.edge(e)
	u := l.u
	sum := make([]uint64, len(ek.vals)*u)
	has := make([]bool, len(ek.vals))
	for k, r := range p.Rows {
		id := int(ek.row[r])
		has[id] = true
		for c := 0; c < u; c++ {
			s, carry := bits.Add64(sum[id*u+c], p.Cls[k*u+c], 0)
			if carry != 0 {
				return nil, nil, fmt.Errorf("%w: table %q, summing join value counts on edge %s", ErrOverflow, l.info.Name, l.g.edgeName(e))
			}
			sum[id*u+c] = s
		}
	}
	return sum, has, nil
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
	for id, v := range ek.vals {
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
		return nil, fmt.Errorf("%w: table %q edge %s: %d counts for %d values and %d classes", ErrSummary, l.info.Name, l.g.edgeName(e), counts, len(values), l.u)
	}
	idx := make([]int32, len(ek.vals))
	for i := range idx {
		idx[i] = -1
	}
	j := 0 // ek.vals[:j] are below every value still to come
	for k, v := range values {
		if k > 0 && v <= values[k-1] {
			return nil, fmt.Errorf("%w: table %q edge %s: the summary repeats a join value or lists them out of order", ErrSummary, l.info.Name, l.g.edgeName(e))
		}
		j = gallop(ek.vals, j, v)
		if j >= len(ek.vals) || ek.vals[j] != v {
			return nil, fmt.Errorf("%w: table %q edge %s: the summary names a join value the table does not hold", ErrSummary, l.info.Name, l.g.edgeName(e))
		}
		idx[j] = int32(k)
		j++
	}
	return idx, nil
}

// gallop returns the first index i >= j with vals[i] >= v in the sorted
// vals: an exponential then a binary search from j, so O(log(i−j)) string
// comparisons, whether a summary names most of a table's values or few.
func gallop(vals []string, j int, v string) int {
	if j >= len(vals) || vals[j] >= v {
		return j
	}
	lo, step := j, 1 // vals[lo] < v
	for lo+step < len(vals) && vals[lo+step] < v {
		lo += step
		step *= 2
	}
	hi := min(lo+step, len(vals)) // vals[hi] >= v, or hi = len(vals)
	return lo + 1 + sort.SearchStrings(vals[lo+1:hi], v)
}

// Forward applies a forward propagation (thesis formula (1)): each row
// whose join value is in cs takes that entry's ClsSum as its Cls; the
// others are dangling and drop out.
func (l *Local) Forward(p Part, cs ClassSummary) (Part, error) {
	idx, err := l.lookup(cs.Edge, cs.Values, len(cs.Counts))
	if err != nil {
		return Part{}, err
	}
	return l.forward(p, cs, idx)
}

// propagate applies a class summary forward or backward.
func (l *Local) propagate(p Part, cs ClassSummary, forward bool) (Part, error) {
	if forward {
		return l.Forward(p, cs)
	}
	return l.Backward(p, cs)
}

// forward is Forward with the summary's entries already looked up (idx by
// the table's value index, as lookup gives it); cs.Values is not read.
func (l *Local) forward(p Part, cs ClassSummary, idx []int32) (Part, error) {
	ek, u := l.edge(cs.Edge), l.u
	n := 0
	for _, r := range p.Rows {
		if idx[ek.row[r]] >= 0 {
			n++
		}
	}
	out := Part{Rows: make([]int32, 0, n), Cls: make([]uint64, 0, n*u)}
	for _, r := range p.Rows {
		k := idx[ek.row[r]]
		if k < 0 {
			continue
		}
		out.Rows = append(out.Rows, r)
		out.Cls = append(out.Cls, cs.Counts[int(k)*u:(int(k)+1)*u]...)
	}
	return out, nil
}

// Backward applies a backward propagation (thesis formula (2)): each row
// with join value v rescales its Cls per class by cs[v] / old[v], where
// old[v] is the table's current sum of Cls over its rows with value v (the
// report's reading of ClsSum', §2.7), multiplying first in 128 bits. Rows
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
		id := int(ek.row[r])
		k := idx[id]
		if k < 0 {
			continue
		}
		nz := false
		for c := 0; c < u; c++ {
			v, err := mulDiv(p.Cls[i*u+c], cs.Counts[int(k)*u+c], old[id*u+c])
			if err != nil {
				return Part{}, fmt.Errorf("table %q edge %s: %w", l.info.Name, l.g.edgeName(cs.Edge), err)
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

// Candidate is one split of the table's attributes and its information
// gain at a node. The split stays with the table's party; only the gain
// goes to the coordinator.
type Candidate struct {
	Gain  float64
	Split tree.Split
}

// BestSplits computes the AVC set of every candidate attribute of the table
// over p (value -> summed Cls) and returns the table's frontier of
// candidates under DESIGN.md's tie rule, sorted by (column, threshold or
// value): the candidates within Eps of the table's best gain that no
// candidate with a smaller key matches or beats in gain. Gains strictly
// increase along the frontier, its last entry has the table's best gain,
// and it almost always holds that one candidate alone. Sending the
// frontier's gains (not just the best) lets the coordinator apply the tie
// rule exactly across tables (see Choose).
func (l *Local) BestSplits(p Part) ([]Candidate, error) {
	total, err := l.Counts(p)
	if err != nil {
		return nil, err
	}
	// Attributes are in column-name order and each one's candidates come
	// in threshold or value order, so candidates arrive in key order and
	// the frontier is kept on the fly: a candidate joins it when its gain
	// beats every earlier one.
	f := frontier{best: math.Inf(-1)}
	sc := &avcScratch{left: make([]uint64, l.u), right: make([]uint64, l.u), cur: make([]uint64, l.u)}
	for i := range l.attrs {
		if err = l.candidates(&l.attrs[i], p, total, sc, &f); err != nil {
			return nil, err
		}
	}
	// Entries below the table's best by more than Eps can never win (the
	// overall best is at least the table's best): drop them, so the
	// coordinator sees only gains within Eps of the table's best, almost
	// always one.
	first := 0
	for first < len(f.cands) && f.cands[first].Gain < f.best-Eps {
		first++
	}
	return f.cands[first:], nil
}

type frontier struct {
	best  float64
	cands []Candidate
}

func (f *frontier) offer(gain float64, l *Local, a *attr, op string, num float64, cat string) {
	if gain > f.best {
		f.best = gain
		// Entries below the new best by more than Eps can never be within
		// Eps of the table's final best (which is at least this one): drop
		// them now (BestSplits would at the end), keeping the frontier short.
		k := 0
		for k < len(f.cands) && f.cands[k].Gain < gain-Eps {
			k++
		}
		f.cands = append(f.cands[:copy(f.cands, f.cands[k:])], Candidate{Gain: gain, Split: tree.Split{Party: l.info.Party, Table: l.info.Name, Column: a.col.Name, Op: op, Num: num, Cat: cat}})
	}
}

// avcScratch is candidates' working memory, reused between the attributes
// of one BestSplits.
type avcScratch struct {
	avc              []uint64
	present          []bool
	keys             []uint64
	left, right, cur []uint64
}

// candidates offers f every binary split of attribute a at the node, in
// key order, from its AVC set (value -> summed Cls of p's rows).
func (l *Local) candidates(a *attr, p Part, total []uint64, sc *avcScratch, f *frontier) error {
	u := l.u
	var n uint64
	for _, x := range total {
		n += x
	}
	tab := gainTables()
	nhTotal := nEntropy(tab, total, n)
	left, right := sc.left, sc.right
	clear(left)
	prev := -1
	// visit is called for each value present at the node, in rank order,
	// with its AVC entry.
	visit := func(v int, counts []uint64) {
		if a.numeric {
			if prev >= 0 {
				for c := 0; c < u; c++ {
					right[c] = total[c] - left[c]
				}
				f.offer(gainFrom(tab, nhTotal, n, left, right), l, a, tree.OpLE, Midpoint(a.nums[prev], a.nums[v]), "")
			}
			for c := 0; c < u; c++ {
				left[c] += counts[c]
			}
			prev = v
			return
		}
		var nl, nr uint64
		for c := 0; c < u; c++ {
			left[c] = counts[c]
			right[c] = total[c] - left[c]
			nl += left[c]
			nr += right[c]
		}
		if nl != 0 && nr != 0 {
			f.offer(gainFrom(tab, nhTotal, n, left, right), l, a, tree.OpEQ, 0, a.strs[v])
		}
	}
	overflow := func() error {
		return fmt.Errorf("%w: table %q column %q: AVC counts", ErrOverflow, l.info.Name, a.col.Name)
	}
	nv := len(a.nums) + len(a.strs)
	if len(p.Rows)*8 < nv {
		// Few rows for the domain: sort the rows by value instead of
		// clearing a dense AVC array for every value of the domain.
		// Each key is the row's value rank above its position in p.
		keys := sc.keys[:0]
		for k, r := range p.Rows {
			keys = append(keys, uint64(a.rank[r])<<32|uint64(k))
		}
		sc.keys = keys
		slices.Sort(keys)
		cur := sc.cur
		for i := 0; i < len(keys); {
			v := keys[i] >> 32
			clear(cur)
			for ; i < len(keys) && keys[i]>>32 == v; i++ {
				k := int(uint32(keys[i]))
				for c := 0; c < u; c++ {
					s, carry := bits.Add64(cur[c], p.Cls[k*u+c], 0)
					if carry != 0 {
						return overflow()
					}
					cur[c] = s
				}
			}
			visit(int(v), cur)
		}
		return nil
	}
	if cap(sc.avc) < nv*u {
		sc.avc = make([]uint64, nv*u)
	}
	if cap(sc.present) < nv {
		sc.present = make([]bool, nv)
	}
	avc, present := sc.avc[:nv*u], sc.present[:nv]
	clear(avc)
	clear(present)
	for k, r := range p.Rows {
		v := int(a.rank[r])
		present[v] = true
		for c := 0; c < u; c++ {
			s, carry := bits.Add64(avc[v*u+c], p.Cls[k*u+c], 0)
			if carry != 0 {
				return overflow()
			}
			avc[v*u+c] = s
		}
	}
	for v := 0; v < nv; v++ {
		if present[v] {
			visit(v, avc[v*u:(v+1)*u])
		}
	}
	return nil
}

// Midpoint is DESIGN.md's numeric threshold between adjacent distinct
// values a < b present at a node: (a+b)/2 in float64; should rounding make
// it b (a and b adjacent floats), a, so that a goes left and b right.
func Midpoint(a, b float64) float64 {
	t := (a + b) / 2
	if math.IsInf(t, 0) {
		t = a/2 + b/2
	}
	if t >= b {
		t = a
	}
	return t
}

// xlogSmall is the number of counts whose x·log2(x) is tabulated.
const xlogSmall = 1 << 12

// logTables are the read-only tables of the gain function: x·log2(x) for
// counts x < xlogSmall, and for log2 of larger counts, per 256th of the
// mantissa range [1, 2), the centre c_j = 1 + (j+½)/256, 1/c_j and log2 c_j.
type logTables struct {
	xlog          [xlogSmall]float64
	inv, logCentr [256]float64
}

// gainTables is computed once on first use and never written after.
var gainTables = sync.OnceValue(func() *logTables {
	t := new(logTables)
	for x := 1; x < xlogSmall; x++ {
		f := float64(x)
		t.xlog[x] = f * math.Log2(f)
	}
	for j := range 256 {
		c := 1 + (float64(j)+0.5)/256
		t.inv[j] = 1 / c
		t.logCentr[j] = math.Log2(c)
	}
	return t
})

// log2 is log2(x) for a count x >= 1: with x = 2^e·m, m in [1, 2), and c
// the tabulated centre of m's 256th, log2 x = e + log2 c + log2(1 + r)
// with r = m/c − 1, |r| < 1/512, by its series to r⁶ (the next term is
// below 1e-19). Within a few ulp of math.Log2, about three times faster;
// the gain is only ever computed with it, in the protocol and in the
// reference alike.
func (t *logTables) log2(x uint64) float64 {
	b := math.Float64bits(float64(x))
	e := float64(int(b>>52) - 1023)
	j := (b >> 44) & 0xff
	m := math.Float64frombits(b&(1<<52-1) | 1023<<52)
	r := m*t.inv[j] - 1
	// ln(1+r) = r − r²/2 + r³/3 − r⁴/4 + r⁵/5 − r⁶/6, by Horner.
	ln := r * (1 + r*(-1.0/2+r*(1.0/3+r*(-1.0/4+r*(1.0/5+r*(-1.0/6))))))
	return e + t.logCentr[j] + ln*math.Log2E
}

// xlog2x is x·log2(x), 0 for 0.
func (t *logTables) xlog2x(x uint64) float64 {
	if x < xlogSmall {
		return t.xlog[x]
	}
	return float64(x) * t.log2(x)
}

// nEntropy is N·H(c) for the class counts c with total n, as
// n·log2(n) − Σ c·log2(c): no division, and for small counts no
// logarithm at all.
func nEntropy(tab *logTables, c []uint64, n uint64) float64 {
	h := tab.xlog2x(n)
	for _, x := range c {
		h -= tab.xlog2x(x)
	}
	return h
}

// Gain is the information gain of splitting the counts total into left and
// right: H(total) − N_L/N·H(left) − N_R/N·H(right), computed as
// (N·H(total) − N_L·H(left) − N_R·H(right)) / N with each N·H as
// n·log2(n) − Σ c·log2(c). It is the one gain function of the package and
// of the join-then-build reference (so that both break DESIGN.md's ties
// alike); its float may differ from the textbook form, Σ −q·log2 q, in the
// last bits (TestGainAgainstTextbook holds it to within 1e-12).
func Gain(total, left, right []uint64) float64 {
	var n uint64
	for _, x := range total {
		n += x
	}
	tab := gainTables()
	return gainFrom(tab, nEntropy(tab, total, n), n, left, right)
}

// gainFrom is Gain with N·H(total) and N computed once per node; the
// arithmetic is Gain's, operation for operation, so the float is the same.
func gainFrom(tab *logTables, nhTotal float64, n uint64, left, right []uint64) float64 {
	var nl, nr uint64
	for c := range left {
		nl += left[c]
		nr += right[c]
	}
	return (nhTotal - nEntropy(tab, left, nl) - nEntropy(tab, right, nr)) / float64(n)
}

// Offer is what a table sends the coordinator at a node: the gains of its
// frontier (BestSplits), in key order. It holds no attribute, value or
// threshold.
type Offer struct {
	Gains []float64 `msgpack:"gains"`
}

// OfferOf strips a frontier to its gains.
func OfferOf(front []Candidate) Offer {
	o := Offer{Gains: make([]float64, len(front))}
	for i, c := range front {
		o.Gains[i] = c.Gain
	}
	return o
}

// Choose is the coordinator's pick at a node from every table's offer
// (offers[i] from g.Tables[i]): with g* the best gain offered, the winner
// is the smallest (party, table, frontier position) among entries with
// gain >= g* − Eps. As each table's frontier keeps, in key order, every
// candidate not matched by a smaller key, this is exactly DESIGN.md's rule
// over all candidates of all tables. ok is false when nothing is offered.
func Choose(g *Graph, offers []Offer) (tbl, idx int, gain float64, ok bool) {
	best := math.Inf(-1)
	for _, o := range offers {
		for _, x := range o.Gains {
			best = max(best, x)
		}
	}
	if math.IsInf(best, -1) {
		return 0, 0, 0, false
	}
	order := make([]int, len(g.Tables))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if x := strings.Compare(g.Tables[a].Party, g.Tables[b].Party); x != 0 {
			return x
		}
		return strings.Compare(g.Tables[a].Name, g.Tables[b].Name)
	})
	for _, t := range order {
		if t >= len(offers) {
			continue
		}
		for i, x := range offers[t].Gains {
			if x >= best-Eps {
				return t, i, x, true
			}
		}
	}
	return 0, 0, 0, false // unreachable: best was offered
}

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
	for id, v := range ek.vals {
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
func (l *Local) applySplit(p Part, ss SplitSummary, idx []int32) (left, right Part, err error) {
	if len(ss.Right) != len(ss.Left) {
		return Part{}, Part{}, fmt.Errorf("%w: table %q edge %s: %d left and %d right counts", ErrSummary, l.info.Name, l.g.edgeName(ss.Edge), len(ss.Left), len(ss.Right))
	}
	ek, u := l.edge(ss.Edge), l.u
	if u == 0 || len(ss.Left)%u != 0 {
		return Part{}, Part{}, fmt.Errorf("%w: table %q edge %s: %d counts for %d classes", ErrSummary, l.info.Name, l.g.edgeName(ss.Edge), len(ss.Left), u)
	}
	// Classify each summary entry once: all its join rows went left (the
	// right sums are all zero), all right, or some each way (mixed). Rows
	// of an all-left or all-right value keep their counts whole; only a
	// mixed value's rows need the 128-bit divisions of formulas (3), (4).
	const (
		toLeft  = 1
		toRight = 2
		mixed   = 3
	)
	kind := make([]uint8, len(ss.Left)/u)
	for k := range kind {
		// allL: every class's left sum is non-zero and every right sum
		// zero, so x·S1/(S1+S2) = x exactly; allR likewise. A class with
		// both sums zero gives 0 on both sides (0/0 = 0): such an entry is
		// mixed unless every class is so (then its rows drop out).
		allL, allR, none := true, true, true
		for c := 0; c < u; c++ {
			s1, s2 := ss.Left[k*u+c], ss.Right[k*u+c]
			if _, carry := bits.Add64(s1, s2, 0); carry != 0 {
				return Part{}, Part{}, fmt.Errorf("%w: table %q edge %s: split summary", ErrOverflow, l.info.Name, l.g.edgeName(ss.Edge))
			}
			allL = allL && s1 != 0 && s2 == 0
			allR = allR && s2 != 0 && s1 == 0
			none = none && s1 == 0 && s2 == 0
		}
		switch {
		case none:
		case allL:
			kind[k] = toLeft
		case allR:
			kind[k] = toRight
		default:
			kind[k] = mixed
		}
	}
	// First pass: each row's entry, and how many rows each child gets.
	// A mixed value's row goes to a child when some class has both a
	// non-zero count and a non-zero sum on that side (the division is
	// exact, so the quotient is then non-zero).
	ent := make([]int32, len(p.Rows))
	nl, nr := 0, 0
	for i, r := range p.Rows {
		k := idx[ek.row[r]]
		if k < 0 {
			return Part{}, Part{}, fmt.Errorf("%w: table %q edge %s: a row's join value is missing from the split summary", ErrSummary, l.info.Name, l.g.edgeName(ss.Edge))
		}
		ent[i] = k
		nz := false
		for _, x := range p.Cls[i*u : (i+1)*u] {
			nz = nz || x != 0
		}
		if !nz {
			ent[i] = -1 // all its quotients are zero: it drops out
			continue
		}
		switch kind[k] {
		case toLeft:
			nl++
		case toRight:
			nr++
		case mixed:
			var gl, gr bool
			for c := 0; c < u; c++ {
				x := p.Cls[i*u+c]
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
	left = Part{Rows: make([]int32, 0, nl), Cls: make([]uint64, 0, nl*u)}
	right = Part{Rows: make([]int32, 0, nr), Cls: make([]uint64, 0, nr*u)}
	c1 := make([]uint64, u)
	c2 := make([]uint64, u)
	for i, r := range p.Rows {
		k := int(ent[i])
		if k < 0 {
			continue
		}
		switch kind[k] {
		case toLeft:
			left.Rows = append(left.Rows, r)
			left.Cls = append(left.Cls, p.Cls[i*u:(i+1)*u]...)
			continue
		case toRight:
			right.Rows = append(right.Rows, r)
			right.Cls = append(right.Cls, p.Cls[i*u:(i+1)*u]...)
			continue
		case 0:
			continue
		}
		nz1, nz2 := false, false
		for c := 0; c < u; c++ {
			s1, s2 := ss.Left[k*u+c], ss.Right[k*u+c]
			tot := s1 + s2 // checked above
			x := p.Cls[i*u+c]
			if c1[c], err = mulDiv(x, s1, tot); err == nil {
				c2[c], err = mulDiv(x, s2, tot)
			}
			if err != nil {
				return Part{}, Part{}, fmt.Errorf("table %q edge %s: %w", l.info.Name, l.g.edgeName(ss.Edge), err)
			}
			nz1 = nz1 || c1[c] != 0
			nz2 = nz2 || c2[c] != 0
		}
		if nz1 {
			left.Rows = append(left.Rows, r)
			left.Cls = append(left.Cls, c1...)
		}
		if nz2 {
			right.Rows = append(right.Rows, r)
			right.Cls = append(right.Cls, c2...)
		}
	}
	return left, right, nil
}

// edgeName is "T.a = U.b" for edge e.
func (g *Graph) edgeName(e int) string {
	if e < 0 || e >= len(g.Edges) {
		return fmt.Sprintf("#%d", e)
	}
	ed := g.Edges[e]
	var parts []string
	for i := range ed.ParentCols {
		parts = append(parts, fmt.Sprintf("%s.%s = %s.%s", ed.Parent, ed.ParentCols[i], ed.Child, ed.ChildCols[i]))
	}
	return strings.Join(parts, " AND ")
}
