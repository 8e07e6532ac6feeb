// Package reftree is the plaintext join-then-build reference of secure join
// classification: it materialises the equi-join of all tables along the
// join tree and grows a decision tree on its rows with the tree semantics
// package sjc documents (gain, candidates, tie rule, stopping, pruning). It shares no code with the join-aware algorithm of package
// sjc except the validated join graph, the parameters and the tree type
// (with its pruning), so that tests and benchmarks can hold sjc to it.
// It is used only by tests and benchmarks.
package reftree

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// Join is a materialised join: Rows[t][r] is the row of table t (in
// graph order) that join row r is made of.
type Join struct {
	Graph  *sjc.Graph
	Tables []*table.Table
	Rows   [][]int32
}

// Len is the number of join rows.
func (j *Join) Len() int { return len(j.Rows[0]) }

// Materialise computes the equi-join of data along g: every combination of
// rows, one per table, that agrees on every join predicate. Dangling rows
// join nothing and drop out.
func Materialise(g *sjc.Graph, data map[string]*table.Table) (*Join, error) {
	j := &Join{Graph: g, Tables: make([]*table.Table, len(g.Tables)), Rows: make([][]int32, len(g.Tables))}
	for i, ti := range g.Tables {
		t, ok := data[ti.Name]
		if !ok {
			return nil, fmt.Errorf("reftree: no data for table %q", ti.Name)
		}
		j.Tables[i] = t
	}
	for r := 0; r < j.Tables[0].NumRows(); r++ {
		j.Rows[0] = append(j.Rows[0], int32(r))
	}
	for e, ed := range g.Edges {
		p, c := g.Index(ed.Parent), e+1
		pk, err := keys(j.Tables[p], ed.ParentCols)
		if err != nil {
			return nil, err
		}
		ck, err := keys(j.Tables[c], ed.ChildCols)
		if err != nil {
			return nil, err
		}
		byKey := map[string][]int32{}
		for r, k := range ck {
			byKey[k] = append(byKey[k], int32(r))
		}
		next := make([][]int32, len(g.Tables))
		for r := range j.Rows[0] {
			for _, cr := range byKey[pk[j.Rows[p][r]]] {
				for t := 0; t < c; t++ {
					next[t] = append(next[t], j.Rows[t][r])
				}
				next[c] = append(next[c], cr)
			}
		}
		for t := 0; t <= c; t++ {
			j.Rows[t] = next[t]
		}
	}
	return j, nil
}

func keys(t *table.Table, cols []string) ([]string, error) {
	parts := make([][]string, len(cols))
	for i, c := range cols {
		col, err := t.Column(c)
		if err != nil {
			return nil, fmt.Errorf("reftree: %w", err)
		}
		parts[i] = col.Str
	}
	out := make([]string, t.NumRows())
	buf := make([]string, len(cols))
	for r := range out {
		for i := range cols {
			buf[i] = parts[i][r]
		}
		out[r] = sjc.KeyEncode(buf)
	}
	return out, nil
}

// attr is one candidate attribute with its values ranked.
type attr struct {
	party, table, column string
	tbl                  int // table index in graph order
	numeric              bool
	nums                 []float64 // sorted distinct values (numeric)
	strs                 []string  // sorted distinct values (categorical)
	rank                 []int32   // rank of each source row's value
}

// Labels returns the sorted distinct values of the class column of the
// target table (all its rows, dangling ones too).
func Labels(g *sjc.Graph, target *table.Table) ([]string, error) {
	col, err := target.Column(g.Class)
	if err != nil {
		return nil, fmt.Errorf("reftree: %w", err)
	}
	ls := slices.Clone(col.Str)
	slices.Sort(ls)
	return slices.Compact(ls), nil
}

// Build grows the reference tree on the join of data along g.
func Build(g *sjc.Graph, data map[string]*table.Table, p sjc.Params) (*tree.Tree, error) {
	j, err := Materialise(g, data)
	if err != nil {
		return nil, err
	}
	return BuildOn(j, p)
}

// BuildOn grows the reference tree on a materialised join.
func BuildOn(j *Join, p sjc.Params) (*tree.Tree, error) {
	g := j.Graph
	labels, err := Labels(g, j.Tables[0])
	if err != nil {
		return nil, err
	}
	if j.Len() == 0 {
		return nil, fmt.Errorf("reftree: the join of %d tables is empty", len(g.Tables))
	}
	u := len(labels)
	clsCol, _ := j.Tables[0].Column(g.Class)
	cls := make([]int32, j.Len())
	for r := range cls {
		k, _ := slices.BinarySearch(labels, clsCol.Str[j.Rows[0][r]])
		cls[r] = int32(k)
	}
	var attrs []attr
	for ti, info := range g.Tables {
		for _, ci := range info.Columns {
			kind := ci.Kind
			if kind == table.Key && p.JoinSplits {
				kind = table.Categorical
			}
			if kind != table.Numeric && kind != table.Categorical {
				continue
			}
			col, err := j.Tables[ti].Column(ci.Name)
			if err != nil {
				return nil, fmt.Errorf("reftree: %w", err)
			}
			a := attr{party: info.Party, table: info.Name, column: ci.Name, tbl: ti, numeric: kind == table.Numeric}
			a.rank = make([]int32, col.Len())
			if a.numeric {
				if col.Num == nil {
					return nil, fmt.Errorf("reftree: table %q column %q: not loaded as numeric", info.Name, ci.Name)
				}
				a.nums = slices.Clone(col.Num)
				slices.Sort(a.nums)
				a.nums = slices.Compact(a.nums)
				for r, x := range col.Num {
					k, _ := slices.BinarySearch(a.nums, x)
					a.rank[r] = int32(k)
				}
			} else {
				a.strs = slices.Clone(col.Str)
				slices.Sort(a.strs)
				a.strs = slices.Compact(a.strs)
				for r, s := range col.Str {
					k, _ := slices.BinarySearch(a.strs, s)
					a.rank[r] = int32(k)
				}
			}
			attrs = append(attrs, a)
		}
	}
	b := &builder{j: j, p: p, u: u, cls: cls, attrs: attrs}
	all := make([]int32, j.Len())
	for r := range all {
		all[r] = int32(r)
	}
	root, err := b.grow(all, 0)
	if err != nil {
		return nil, err
	}
	t := &tree.Tree{Labels: labels, Root: root}
	if _, _, err := p.PruneTree(t); err != nil {
		return nil, err
	}
	return t, nil
}

type builder struct {
	j     *Join
	p     sjc.Params
	u     int
	cls   []int32
	attrs []attr
}

type cand struct {
	gain  float64
	split tree.Split
	a     *attr
	rank  int32 // numeric: values of rank <= rank go left; categorical: value rank
}

func (b *builder) grow(rows []int32, depth int) (*tree.Node, error) {
	counts := make([]uint64, b.u)
	for _, r := range rows {
		counts[b.cls[r]]++
	}
	n := &tree.Node{Counts: counts}
	nz := 0
	for _, c := range counts {
		if c > 0 {
			nz++
		}
	}
	if nz <= 1 || uint64(len(rows)) < b.p.MinSplit || depth >= b.p.MaxDepth {
		return n, nil
	}
	var cands []cand
	for i := range b.attrs {
		cands = append(cands, b.candidates(&b.attrs[i], rows, counts)...)
	}
	best, ok := choose(cands)
	if !ok || best.gain <= sjc.Eps {
		return n, nil
	}
	var left, right []int32
	a := best.a
	for _, r := range rows {
		v := a.rank[b.j.Rows[a.tbl][r]]
		if (a.numeric && v <= best.rank) || (!a.numeric && v == best.rank) {
			left = append(left, r)
		} else {
			right = append(right, r)
		}
	}
	split := best.split
	n.Split = &split
	var err error
	if n.Left, err = b.grow(left, depth+1); err != nil {
		return nil, err
	}
	if n.Right, err = b.grow(right, depth+1); err != nil {
		return nil, err
	}
	return n, nil
}

// candidates lists every binary split of attribute a at the node, from its
// AVC set (value -> class counts over the node's join rows).
func (b *builder) candidates(a *attr, rows []int32, total []uint64) []cand {
	u := b.u
	nv := len(a.nums) + len(a.strs)
	avc := make([]uint64, nv*u)
	src := b.j.Rows[a.tbl]
	for _, r := range rows {
		avc[int(a.rank[src[r]])*u+int(b.cls[r])]++
	}
	var out []cand
	left := make([]uint64, u)
	right := make([]uint64, u)
	present := func(v int) bool {
		for c := 0; c < u; c++ {
			if avc[v*u+c] > 0 {
				return true
			}
		}
		return false
	}
	base := tree.Split{Party: a.party, Table: a.table, Column: a.column}
	if a.numeric {
		prev := -1
		for v := 0; v < nv; v++ {
			if !present(v) {
				continue
			}
			if prev >= 0 {
				for c := 0; c < u; c++ {
					right[c] = total[c] - left[c]
				}
				s := base
				s.Op = tree.OpLE
				s.Num = midpoint(a.nums[prev], a.nums[v])
				out = append(out, cand{gain: gain(total, left, right), split: s, a: a, rank: int32(prev)})
			}
			for c := 0; c < u; c++ {
				left[c] += avc[v*u+c]
			}
			prev = v
		}
		return out
	}
	for v := 0; v < nv; v++ {
		if !present(v) {
			continue
		}
		var nl, nr uint64
		for c := 0; c < u; c++ {
			left[c] = avc[v*u+c]
			right[c] = total[c] - left[c]
			nl += left[c]
			nr += right[c]
		}
		if nl == 0 || nr == 0 {
			continue
		}
		s := base
		s.Op = tree.OpEQ
		s.Cat = a.strs[v]
		out = append(out, cand{gain: gain(total, left, right), split: s, a: a, rank: int32(v)})
	}
	return out
}

// midpoint of adjacent distinct values a < b, as a float64; when rounding
// would make it b (adjacent floats), a.
func midpoint(a, b float64) float64 {
	t := (a + b) / 2
	if math.IsInf(t, 0) {
		t = a/2 + b/2
	}
	if t >= b {
		t = a
	}
	return t
}

// gain is the information gain of splitting total into left and right:
// sjc.Gain, the one gain function, so that the reference and the protocol
// resolve ties (gains within 1e-12) alike. Everything around
// it (AVC sets over join rows, candidates, the tie rule, the split) is the
// reference's own.
func gain(total, left, right []uint64) float64 { return sjc.Gain(total, left, right) }

// choose applies the tie rule: among the candidates whose gain is
// within Eps of the best, the smallest (party, table, column, threshold or
// value).
func choose(cs []cand) (cand, bool) {
	if len(cs) == 0 {
		return cand{}, false
	}
	best := math.Inf(-1)
	for _, c := range cs {
		best = max(best, c.gain)
	}
	var win *cand
	for i := range cs {
		c := &cs[i]
		if c.gain < best-sjc.Eps {
			continue
		}
		if win == nil || less(&c.split, &win.split) {
			win = c
		}
	}
	return *win, true
}

func less(a, b *tree.Split) bool {
	if x := strings.Compare(a.Party, b.Party); x != 0 {
		return x < 0
	}
	if x := strings.Compare(a.Table, b.Table); x != 0 {
		return x < 0
	}
	if x := strings.Compare(a.Column, b.Column); x != 0 {
		return x < 0
	}
	if a.Op == tree.OpLE {
		return a.Num < b.Num
	}
	return a.Cat < b.Cat
}

// Accuracy classifies every join row of the test tables along g with t and
// returns how many got their own class and how many there were.
func Accuracy(t *tree.Tree, g *sjc.Graph, test map[string]*table.Table) (correct, total int, err error) {
	j, err := Materialise(g, test)
	if err != nil {
		return 0, 0, err
	}
	clsCol, err := j.Tables[0].Column(g.Class)
	if err != nil {
		return 0, 0, fmt.Errorf("reftree: %w", err)
	}
	cols := map[[2]string]*table.Column{}
	for ti, info := range g.Tables {
		for _, ci := range info.Columns {
			c, err := j.Tables[ti].Column(ci.Name)
			if err != nil {
				return 0, 0, fmt.Errorf("reftree: %w", err)
			}
			cols[[2]string{info.Name, ci.Name}] = c
		}
	}
	for r := 0; r < j.Len(); r++ {
		leaf := t.Leaf(func(s *tree.Split) bool {
			ti := g.Index(s.Table)
			c := cols[[2]string{s.Table, s.Column}]
			row := j.Rows[ti][r]
			x := 0.0
			if c.Num != nil {
				x = c.Num[row]
			}
			return s.Holds(x, c.Str[row])
		})
		if t.Labels[leaf.Label()] == clsCol.Str[j.Rows[0][r]] {
			correct++
		}
		total++
	}
	return correct, total, nil
}
