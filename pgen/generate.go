package pgen

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/cohortdm/cohort/tree"
)

// Other is the value pseudo-data gives a categorical attribute where a
// path only excludes values (value != v): any value no published tree
// names. A row to classify whose value no split names goes where Other
// goes.
const Other = "(other)"

// Generate is PGEN (Sharkey, Tian, Zhang, Xu, "Privacy-Preserving Data
// Mining through Knowledge Model Sharing", PinKDD 2007, §2.2, Fig. 3):
// pseudo-rows from the paths of the published trees, pooled into one
// table. Each path gives exactly as many rows of each class as its leaf
// counts (the paper draws the class from hit and miss; a tree here
// publishes every class's count, so the counts are kept exactly, as
// Proposition 1 wants). An attribute on the path takes a value that
// satisfies it: a categorical one the value it equals, or one drawn
// uniformly from the values it may still take; a numeric one a value drawn
// uniformly from its interval. An attribute off the path takes a value
// drawn uniformly from its domain.
//
// The domains are the spec's where it gives them (Schema.Ranges and
// Values, public knowledge as the paper assumes dom(A) known), widened to
// take in every value the trees name. Otherwise they are what the trees
// publish, nothing more: a numeric attribute's is the span of every tree's
// thresholds on it, widened on each side by that span (by 1 when there is
// one threshold); a categorical attribute's is the values the splits name,
// and Other. An attribute no tree splits on and the spec gives no domain
// takes one constant value (0, or Other), so the global tree cannot split
// on it.
func Generate(trees []*tree.Tree, s *Schema, rng *rand.Rand) *tree.Data {
	d, doms := pseudoTable(trees, s)
	for _, t := range trees {
		classOf := classIndex(t, d.Labels)
		forPaths(t.Root, map[string]*bound{}, func(leaf *tree.Node, bounds map[string]*bound) {
			for c, n := range leaf.Counts {
				for range n {
					for i, at := range d.Attrs {
						doms[i].draw(at, bounds[at.Name], rng)
					}
					d.Class = append(d.Class, classOf[c])
				}
			}
		})
	}
	return d
}

// pseudoTable is an empty table of the schema's attributes (in name
// order) and the trees' labels, with each attribute's domain (newDomain).
func pseudoTable(trees []*tree.Tree, s *Schema) (*tree.Data, []domain) {
	names := s.attrNames()
	doms := make([]domain, len(names))
	for i, a := range names {
		doms[i] = newDomain(a, s, trees)
	}
	var labels []string
	for _, t := range trees {
		labels = append(labels, t.Labels...)
	}
	slices.Sort(labels)
	labels = slices.Compact(labels)
	d := &tree.Data{Labels: labels}
	for i, a := range names {
		at := &tree.Attr{Name: a, Numeric: doms[i].numeric}
		if !at.Numeric {
			at.Values = doms[i].values
		}
		d.Attrs = append(d.Attrs, at)
	}
	return d, doms
}

// classIndex maps t's class indexes to indexes into labels.
func classIndex(t *tree.Tree, labels []string) []int32 {
	classOf := make([]int32, len(t.Labels))
	for c, l := range t.Labels {
		classOf[c] = int32(slices.Index(labels, l))
	}
	return classOf
}

// bound is what a path says of one attribute: lo < x <= hi for a numeric
// one; x == eq (when set), x among in (when not nil: a multiway branch's
// values) and x not in not for a categorical one.
type bound struct {
	lo, hi float64
	eq     *string
	in     []string
	not    []string
}

// forPaths calls f at every leaf with the bounds of its path.
func forPaths(n *tree.Node, bounds map[string]*bound, f func(*tree.Node, map[string]*bound)) {
	if n.IsLeaf() {
		f(n, bounds)
		return
	}
	s := n.Split
	old := bounds[s.Column]
	b := bound{lo: math.Inf(-1), hi: math.Inf(1)}
	if old != nil {
		b = *old
	}
	if s.Op == tree.OpIn {
		for _, br := range n.Branches {
			in := b
			in.in = slices.DeleteFunc(slices.Clone(br.Values), func(v string) bool { return !b.allows(v) })
			bounds[s.Column] = &in
			forPaths(br.Child, bounds, f)
		}
		bounds[s.Column] = old
		if old == nil {
			delete(bounds, s.Column)
		}
		return
	}
	left, right := b, b
	if s.Op == tree.OpLE {
		left.hi = min(b.hi, s.Num)
		right.lo = max(b.lo, s.Num)
	} else {
		v := s.Cat
		left.eq = &v
		right.not = append(slices.Clip(b.not), v)
	}
	bounds[s.Column] = &left
	forPaths(n.Left, bounds, f)
	bounds[s.Column] = &right
	forPaths(n.Right, bounds, f)
	bounds[s.Column] = old
	if old == nil {
		delete(bounds, s.Column)
	}
}

// allows reports whether categorical value v satisfies b.
func (b *bound) allows(v string) bool {
	return (b.eq == nil || *b.eq == v) && (b.in == nil || slices.Contains(b.in, v)) && !slices.Contains(b.not, v)
}

// domain is one attribute's domain as the published trees show it.
type domain struct {
	numeric  bool
	used     bool     // some tree splits on it
	min, max float64  // numeric
	values   []string // categorical, sorted (Other among them unless the spec lists the values)
}

func newDomain(name string, s *Schema, trees []*tree.Tree) domain {
	numeric := s.Numeric[name]
	d := domain{numeric: numeric, min: math.Inf(1), max: math.Inf(-1)}
	for _, t := range trees {
		forSplits(t.Root, func(sp *tree.Split, values []string) {
			if sp.Column != name {
				return
			}
			d.used = true
			if numeric {
				d.min, d.max = min(d.min, sp.Num), max(d.max, sp.Num)
			} else {
				d.values = append(d.values, values...)
			}
		})
	}
	r, ranged := s.Ranges[name]
	vals, listed := s.Values[name]
	switch {
	case numeric && ranged:
		d.used, d.min, d.max = true, min(d.min, r[0]), max(d.max, r[1])
	case numeric && d.used:
		w := d.max - d.min
		if w == 0 {
			w = 1
		}
		d.min, d.max = d.min-w, d.max+w
	case listed:
		d.used, d.values = true, append(d.values, vals...)
	case !numeric:
		d.values = append(d.values, Other)
	}
	if !numeric {
		slices.Sort(d.values)
		d.values = slices.Compact(d.values)
	}
	return d
}

// forSplits calls f on every split with the categorical values it names
// (a multiway split's branches' values).
func forSplits(n *tree.Node, f func(*tree.Split, []string)) {
	if n.IsLeaf() {
		return
	}
	values := []string{n.Split.Cat}
	switch n.Split.Op {
	case tree.OpLE:
		values = nil
	case tree.OpIn:
		values = nil
		for _, br := range n.Branches {
			values = append(values, br.Values...)
		}
	}
	f(n.Split, values)
	for _, c := range n.Children() {
		forSplits(c, f)
	}
}

// draw appends one value of the attribute within bound b (nil: the whole
// domain).
func (d *domain) draw(a *tree.Attr, b *bound, rng *rand.Rand) {
	if d.numeric {
		x := 0.0
		if d.used {
			lo, hi := d.min, d.max
			if b != nil {
				lo, hi = max(lo, b.lo), min(hi, b.hi)
			}
			x = hi - (hi-lo)*rng.Float64() // in (lo, hi]
			if lo >= hi {
				x = hi // an empty interval: a path no row takes
			}
		}
		a.Num = append(a.Num, x)
		return
	}
	v := Other
	switch {
	case b != nil && b.eq != nil:
		v = *b.eq
	case b != nil && b.in != nil:
		if len(b.in) > 0 {
			v = b.in[rng.IntN(len(b.in))]
		}
	case d.used:
		free := d.values
		if b != nil && len(b.not) > 0 {
			free = slices.DeleteFunc(slices.Clone(d.values), func(x string) bool { return slices.Contains(b.not, x) })
		}
		if len(free) > 0 {
			v = free[rng.IntN(len(free))]
		}
	}
	i, _ := slices.BinarySearch(d.values, v)
	a.Code = append(a.Code, int32(i))
}
