// Package dtree grows a binary decision tree on one plain table with the
// gini index or information gain, under the tree semantics Cohort's
// secure join classification fixes (numeric split "attr <= t" with t the
// midpoint of two adjacent distinct values present at the node,
// categorical split "attr == v" against the rest, ties within Eps to the
// smallest (party, table, column, threshold or value), stop on purity,
// min_split, max_depth or a best gain <= Eps, majority leaf with ties to
// the smallest label). It is the reference miner of package transform's
// invariance tests and disclosure figures.
//
// It shares no code with package transform, whose output it checks, nor
// with the join-aware builder of package sjc except sjc.Midpoint, the
// threshold rule itself; the tests hold the two builders to the same
// entropy trees on single tables.
package dtree

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// Criterion is the split quality measure.
type Criterion int

const (
	// Entropy is information gain with log2 entropy.
	Entropy Criterion = iota
	// Gini is the decrease of the gini index.
	Gini
)

// String names the criterion as the figures and test names do.
func (c Criterion) String() string {
	if c == Gini {
		return "gini"
	}
	return "entropy"
}

// Eps is the gain tolerance: gains within Eps are equal, a best gain <= Eps
// stops growth.
const Eps = 1e-12

// Params are the growing parameters.
type Params struct {
	Criterion Criterion
	// MaxDepth: a node at this depth (the root has depth 0) is a leaf; 0
	// means 10.
	MaxDepth int
	// MinSplit: a node with fewer rows is a leaf; 0 means 2.
	MinSplit int
	// Prune applies C4.5 pessimistic pruning (tree.Prune, CF 0.25).
	Prune bool
	// Party names the owner in every split.
	Party string
	// LargestFirst lists numeric columns whose tied thresholds resolve to
	// the largest instead of the smallest: the tie rule of a miner that
	// sees the column through an order-reversing recoding.
	LargestFirst map[string]bool
}

// ErrInput marks a table the builder cannot grow a tree on.
var ErrInput = errors.New("dtree: bad input")

// attr is one candidate column with its values ranked.
type attr struct {
	column  string
	numeric bool
	nums    []float64 // sorted distinct values (numeric)
	strs    []string  // sorted distinct values (categorical)
	rank    []int32   // rank of each row's value
	largest bool      // numeric ties resolve to the largest threshold
}

type builder struct {
	p      Params
	labels []string
	cls    []int32
	attrs  []attr
	table  string
	gain   func(total, left, right []uint64) float64
}

// Build grows a tree on t with class column class. Numeric columns give
// numeric splits, categorical ones categorical splits; key, id and class
// columns are never split on.
func Build(t *table.Table, class string, p Params) (*tree.Tree, error) {
	if p.MaxDepth == 0 {
		p.MaxDepth = 10
	}
	if p.MinSplit == 0 {
		p.MinSplit = 2
	}
	if p.MaxDepth < 0 || p.MinSplit < 0 {
		return nil, fmt.Errorf("%w: max_depth and min_split must not be negative", ErrInput)
	}
	b := &builder{p: p, table: t.Name, gain: entropyGain}
	if p.Criterion == Gini {
		b.gain = giniGain
	}
	clsCol, err := t.Column(class)
	if err != nil {
		return nil, fmt.Errorf("%w: class column %q: %w", ErrInput, class, err)
	}
	if clsCol.Len() == 0 {
		return nil, fmt.Errorf("%w: table %q has no rows", ErrInput, t.Name)
	}
	b.labels, b.cls = rank(clsCol.Str)
	for _, c := range t.Columns {
		if c.Name == class {
			continue
		}
		switch {
		case c.Kind == table.Numeric && c.Num != nil:
			a := attr{column: c.Name, numeric: true, largest: p.LargestFirst[c.Name]}
			a.nums, a.rank = rank(c.Num)
			b.attrs = append(b.attrs, a)
		case c.Kind == table.Categorical:
			a := attr{column: c.Name}
			a.strs, a.rank = rank(c.Str)
			b.attrs = append(b.attrs, a)
		}
	}
	rows := make([]int32, len(b.cls))
	for r := range rows {
		rows[r] = int32(r)
	}
	out := &tree.Tree{Labels: b.labels, Root: b.grow(rows, 0)}
	if p.Prune {
		out.Prune(tree.DefaultCF)
	}
	return out, nil
}

// rank returns the sorted distinct values of x and each element's index
// among them.
func rank[T cmp.Ordered](x []T) (sorted []T, ranks []int32) {
	sorted = slices.Clone(x)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	ranks = make([]int32, len(x))
	for r, v := range x {
		k, _ := slices.BinarySearch(sorted, v)
		ranks[r] = int32(k)
	}
	return sorted, ranks
}

// cand is one candidate split.
type cand struct {
	gain  float64
	split tree.Split
	a     *attr
	rank  int32 // numeric: ranks <= rank go left; categorical: the value's rank
}

func (b *builder) grow(rows []int32, depth int) *tree.Node {
	counts := make([]uint64, len(b.labels))
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
	if nz <= 1 || len(rows) < b.p.MinSplit || depth >= b.p.MaxDepth {
		return n
	}
	var cands []cand
	for i := range b.attrs {
		cands = b.candidates(cands, &b.attrs[i], rows, counts)
	}
	best := b.choose(cands)
	if best == nil || best.gain <= Eps {
		return n
	}
	var left, right []int32
	a := best.a
	for _, r := range rows {
		v := a.rank[r]
		if (a.numeric && v <= best.rank) || (!a.numeric && v == best.rank) {
			left = append(left, r)
		} else {
			right = append(right, r)
		}
	}
	split := best.split
	n.Split = &split
	n.Left = b.grow(left, depth+1)
	n.Right = b.grow(right, depth+1)
	return n
}

// choose applies the tie rule: among the candidates whose gain is within
// Eps of the largest, the smallest key (less). Nil when there is none.
func (b *builder) choose(cs []cand) *cand {
	best := math.Inf(-1)
	for _, c := range cs {
		best = max(best, c.gain)
	}
	var win *cand
	for i := range cs {
		c := &cs[i]
		if c.gain >= best-Eps && (win == nil || b.less(c, win)) {
			win = c
		}
	}
	return win
}

// less orders tied candidates by (party, table, column, threshold or
// value); party and table are the same for every candidate here.
func (b *builder) less(x, y *cand) bool {
	if c := strings.Compare(x.split.Column, y.split.Column); c != 0 {
		return c < 0
	}
	if x.split.Op == tree.OpLE {
		if x.a.largest {
			return x.split.Num > y.split.Num
		}
		return x.split.Num < y.split.Num
	}
	return x.split.Cat < y.split.Cat
}

// candidates appends every binary split of a at the node, from its AVC set
// (value -> class counts over the node's rows).
func (b *builder) candidates(out []cand, a *attr, rows []int32, total []uint64) []cand {
	u := len(b.labels)
	nv := len(a.nums) + len(a.strs)
	avc := make([]uint64, nv*u)
	present := make([]bool, nv)
	for _, r := range rows {
		v := int(a.rank[r])
		avc[v*u+int(b.cls[r])]++
		present[v] = true
	}
	left := make([]uint64, u)
	right := make([]uint64, u)
	base := tree.Split{Party: b.p.Party, Table: b.table, Column: a.column}
	if a.numeric {
		prev := -1
		for v := range nv {
			if !present[v] {
				continue
			}
			if prev >= 0 {
				for c := range u {
					right[c] = total[c] - left[c]
				}
				s := base
				s.Op, s.Num = tree.OpLE, tree.Midpoint(a.nums[prev], a.nums[v])
				out = append(out, cand{gain: b.gain(total, left, right), split: s, a: a, rank: int32(prev)})
			}
			for c := range u {
				left[c] += avc[v*u+c]
			}
			prev = v
		}
		return out
	}
	for v := range nv {
		if !present[v] {
			continue
		}
		var nr uint64
		for c := range u {
			left[c] = avc[v*u+c]
			right[c] = total[c] - left[c]
			nr += right[c]
		}
		if nr == 0 {
			continue
		}
		s := base
		s.Op, s.Cat = tree.OpEQ, a.strs[v]
		out = append(out, cand{gain: b.gain(total, left, right), split: s, a: a, rank: int32(v)})
	}
	return out
}

// entropyGain is H(total) − (|L|/N)·H(left) − (|R|/N)·H(right), log2,
// written as (N·H(total) − |L|·H(left) − |R|·H(right)) / N with
// n·H(c) = n·log2 n − Σ c_i·log2 c_i.
func entropyGain(total, left, right []uint64) float64 {
	nh := func(c []uint64) (float64, uint64) {
		var n uint64
		var s float64
		for _, x := range c {
			if x > 0 {
				n += x
				s += float64(x) * math.Log2(float64(x))
			}
		}
		if n == 0 {
			return 0, 0
		}
		return float64(n)*math.Log2(float64(n)) - s, n
	}
	ht, n := nh(total)
	hl, _ := nh(left)
	hr, _ := nh(right)
	return (ht - hl - hr) / float64(n)
}

// giniGain is gini(total) − (|L|/N)·gini(left) − (|R|/N)·gini(right),
// gini(c) = 1 − Σ (c_i/n)², written as (Σ L_i²/|L| + Σ R_i²/|R| − Σ T_i²/N) / N.
func giniGain(total, left, right []uint64) float64 {
	sq := func(c []uint64) (float64, uint64) {
		var n uint64
		var s float64
		for _, x := range c {
			n += x
			s += float64(x) * float64(x)
		}
		if n == 0 {
			return 0, 0
		}
		return s / float64(n), n
	}
	st, n := sq(total)
	sl, _ := sq(left)
	sr, _ := sq(right)
	return (sl + sr - st) / float64(n)
}
