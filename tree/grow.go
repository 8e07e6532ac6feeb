package tree

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// eps is the gain tolerance: gains within eps are equal (the first
// candidate in attribute order, then threshold or value order, wins), and
// a best gain <= eps makes a leaf.
const eps = 1e-12

// GrowParams are the tree-growing parameters: binary splits by information
// gain (numeric attributes at the midpoint between adjacent distinct
// values, categorical ones as value == v), growth stopping at a pure node,
// a node of fewer than MinSplit rows or depth MaxDepth, then C4.5
// pessimistic pruning when Prune is set. NoSplit, when set, is a
// categorical value never split on (pgen's Other: a row whose value no
// split names goes where Other goes, which an == Other split would send
// the other way).
//
// Features, when above 0 with Rand set, makes the tree a random forest's
// (Breiman, "Random Forests", Machine Learning 45, 2001): at each node the
// attributes are tried in an order drawn from Rand, and the best split is
// taken among the first Features of them, or among more, one at a time,
// until one splits with a gain (as Weka's RandomTree does, so that a node
// is not made a leaf by an unlucky draw). Rand is consumed in a fixed
// order (depth first, left before right), so one seed grows one tree.
//
// Multiway grows C4.5's tree instead (growmulti.go): a nominal attribute
// splits into one branch per value, the split chosen by gain ratio;
// NoSplit, Features and Rand are then unused.
type GrowParams struct {
	MaxDepth int
	MinSplit uint64
	Prune    bool
	NoSplit  string
	Features int
	Rand     *rand.Rand
	Multiway bool
}

// Grow grows a tree over every row of d, in one process (pgen's parties
// and coordinator, kde's evaluation); its splits name party and table.
func Grow(d *Data, p GrowParams, party, table string) *Tree {
	g := &grower{d: d, p: p, party: party, table: table}
	rows := make([]int32, d.Rows())
	for i := range rows {
		rows[i] = int32(i)
	}
	var root *Node
	if p.Multiway {
		root = g.growMulti(rows, 0)
	} else {
		root = g.grow(rows, 0)
	}
	t := &Tree{Labels: d.Labels, Root: root}
	if p.Prune {
		t.Prune(DefaultCF)
	}
	return t
}

type grower struct {
	d            *Data
	p            GrowParams
	party, table string
}

// candidate is a split and its gain.
type candidate struct {
	gain  float64
	split *Split
	attr  *Attr
	left  uint64 // the rows a numeric split sends left
}

func (g *grower) grow(rows []int32, depth int) *Node {
	counts := g.counts(rows)
	n := &Node{Counts: counts}
	nz := 0
	for _, c := range counts {
		if c > 0 {
			nz++
		}
	}
	if nz <= 1 || uint64(len(rows)) < g.p.MinSplit || depth >= g.p.MaxDepth {
		return n
	}
	best := g.best(rows, counts)
	if best.split == nil {
		return n
	}
	left, right := partition(rows, best.split, best.attr)
	n.Split = best.split
	n.Left, n.Right = g.grow(left, depth+1), g.grow(right, depth+1)
	return n
}

// partition splits rows into those where s holds on a and the others.
func partition(rows []int32, s *Split, a *Attr) (left, right []int32) {
	for _, r := range rows {
		if s.Holds(a.row(int(r))) {
			left = append(left, r)
		} else {
			right = append(right, r)
		}
	}
	return left, right
}

// best is the best split of rows: over every attribute, or over the
// random sample GrowParams.Features asks for.
func (g *grower) best(rows []int32, counts []uint64) candidate {
	attrs := g.d.Attrs
	sample := g.p.Features > 0 && g.p.Rand != nil && g.p.Features < len(attrs)
	if sample {
		attrs = slices.Clone(attrs)
		g.p.Rand.Shuffle(len(attrs), func(i, j int) { attrs[i], attrs[j] = attrs[j], attrs[i] })
	}
	best := candidate{gain: eps}
	for i, a := range attrs {
		if sample && i >= g.p.Features && best.split != nil {
			break
		}
		var c candidate
		if a.Numeric {
			c = g.bestNumeric(a, rows, counts, 0)
		} else {
			c = g.bestCategorical(a, rows, counts)
		}
		if c.split != nil && c.gain > best.gain+eps {
			best = c
		}
	}
	return best
}

func (g *grower) counts(rows []int32) []uint64 {
	c := make([]uint64, len(g.d.Labels))
	for _, r := range rows {
		c[g.d.Class[r]]++
	}
	return c
}

// bestNumeric sweeps the rows in value order and scores each threshold
// between adjacent distinct values that leaves at least minSide rows on
// each side.
func (g *grower) bestNumeric(a *Attr, rows []int32, total []uint64, minSide int) candidate {
	sorted := slices.Clone(rows)
	slices.SortFunc(sorted, func(x, y int32) int {
		if c := cmp.Compare(a.Num[x], a.Num[y]); c != 0 {
			return c
		}
		return int(x - y)
	})
	left := make([]uint64, len(total))
	right := slices.Clone(total)
	best := candidate{gain: math.Inf(-1)}
	for i := 0; i+1 < len(sorted); i++ {
		cl := g.d.Class[sorted[i]]
		left[cl]++
		right[cl]--
		lo, hi := a.Num[sorted[i]], a.Num[sorted[i+1]]
		if lo == hi || i+1 < minSide || len(sorted)-i-1 < minSide {
			continue
		}
		if gain := infoGain(total, left, right); gain > best.gain+eps {
			t := lo + (hi-lo)/2
			if t >= hi { // adjacent floats
				t = lo
			}
			best = candidate{gain: gain, attr: a, left: uint64(i + 1), split: &Split{Party: g.party, Table: g.table, Column: a.Name, Op: OpLE, Num: t}}
		}
	}
	return best
}

// bestCategorical scores value == v for every value present at the node.
func (g *grower) bestCategorical(a *Attr, rows []int32, total []uint64) candidate {
	k := len(total)
	per := make([]uint64, len(a.Values)*k)
	for _, r := range rows {
		per[int(a.Code[r])*k+int(g.d.Class[r])]++
	}
	best := candidate{gain: math.Inf(-1)}
	right := make([]uint64, k)
	for v := range a.Values {
		left := per[v*k : (v+1)*k]
		var n uint64
		for c := range k {
			n += left[c]
			right[c] = total[c] - left[c]
		}
		if n == 0 || n == uint64(len(rows)) || (g.p.NoSplit != "" && a.Values[v] == g.p.NoSplit) {
			continue
		}
		if gain := infoGain(total, left, right); gain > best.gain+eps {
			best = candidate{gain: gain, attr: a, split: &Split{Party: g.party, Table: g.table, Column: a.Name, Op: OpEQ, Cat: a.Values[v]}}
		}
	}
	return best
}

// infoGain is H(total) − (|left|·H(left) + |right|·H(right))/|total|, in
// bits, computed as (N·H(total) − NL·H(left) − NR·H(right))/N with
// N·H(c) = N·log2 N − Σ c·log2 c.
func infoGain(total, left, right []uint64) float64 {
	var n float64
	for _, c := range total {
		n += float64(c)
	}
	return (nEntropy(total) - nEntropy(left) - nEntropy(right)) / n
}

func nEntropy(c []uint64) float64 {
	var n, s float64
	for _, x := range c {
		n += float64(x)
		s += xlog2x(float64(x))
	}
	return xlog2x(n) - s
}

func xlog2x(x float64) float64 {
	if x <= 0 {
		return 0
	}
	return x * math.Log2(x)
}
