package anonymize

import (
	"fmt"
	"slices"
)

// LocalClass is one class of a local recoding: its records and the node of
// every attribute they are published as.
type LocalClass struct {
	Rows []int32
	Node []int32

	fixed []bool // attributes not to specialise again (nil: none)
}

// LocalResult is a local recoding: its classes and the generalisation they
// make (every record's node per attribute).
type LocalResult struct {
	Classes []LocalClass
	Gen     *Generalisation
	Rounds  int
}

// LocalRecoding is the top-down local-recoding algorithm of Sun's thesis
// (§3.6, Alg. 1, "Localpk"), for k and a sensitive model (sens nil: k only):
//
//  1. every record starts fully generalised, in one class P;
//  2. each round, every class P of the frontier is specialised one level
//     down on one attribute, forming one child per child node;
//  3. children that do not satisfy the model give their records back to P
//     ("move back");
//  4. if what P keeps does not satisfy the model, records are moved up from
//     the satisfying children until it does ("parent repair"), or, when no
//     child can spare one, the specialisation is undone;
//  5. satisfying children join the next frontier; what P keeps is published
//     at P's level (on the attribute specialised; see below).
//
// The thesis states the algorithm for one quasi-identifier, where what P
// keeps is final. With several, we fill its gaps so: each class is
// specialised on the attribute whose satisfying children shed the most
// NCP (ties to the attribute order); when P cannot be repaired on that
// attribute the next one is tried; and what P keeps goes back to the
// frontier with that attribute fixed, so its records still go down on the
// others. Publishing it at P's level on every attribute (our first
// reading) lost three times the NCP on Adult, more than the stricter
// models' publications did. Records moved up in step 4 are chosen
// greedily: the one that adds most to P (a new value, a new category,
// weight) among the records a child can spare, ties to the earlier child
// and the later record (which reproduces the thesis's Table 3.6 example).
func LocalRecoding(ds *Dataset, k int, sens *Coded) (*LocalResult, error) {
	if k < 1 || k > ds.N {
		return nil, fmt.Errorf("%w: k = %d with %d records", ErrRequirement, k, ds.N)
	}
	if sens != nil && len(sens.Code) != ds.N {
		return nil, fmt.Errorf("%w: %d sensitive values for %d records", ErrRequirement, len(sens.Code), ds.N)
	}
	lr := &localRecoder{ds: ds, k: k, sens: sens}
	all := make([]int32, ds.N)
	for i := range all {
		all[i] = int32(i)
	}
	if !lr.ok(all) {
		return nil, fmt.Errorf("%w: the whole table does not satisfy k = %d and %s", ErrRequirement, k, sens.modelName())
	}
	res := &LocalResult{}
	frontier := []LocalClass{{Rows: all, Node: make([]int32, len(ds.Attrs))}}
	for len(frontier) > 0 {
		res.Rounds++
		var next []LocalClass
		for _, p := range frontier {
			kids, rest, again := lr.specialise(p)
			next = append(next, kids...)
			switch {
			case again:
				next = append(next, rest)
			case len(rest.Rows) > 0:
				res.Classes = append(res.Classes, rest)
			}
		}
		frontier = next
	}
	res.Gen = &Generalisation{Node: make([][]int32, len(ds.Attrs))}
	for a := range ds.Attrs {
		res.Gen.Node[a] = make([]int32, ds.N)
	}
	for _, c := range res.Classes {
		for a := range ds.Attrs {
			for _, r := range c.Rows {
				res.Gen.Node[a][r] = c.Node[a]
			}
		}
	}
	return res, nil
}

func (c *Coded) modelName() string {
	if c == nil {
		return "no sensitive model"
	}
	return c.Model.String()
}

type localRecoder struct {
	ds   *Dataset
	k    int
	sens *Coded
}

func (lr *localRecoder) ok(rows []int32) bool {
	return len(rows) >= lr.k && lr.sens.Diverse(rows)
}

// split groups p's records by the child of p's node on attribute a, in the
// taxonomy's child order.
func (lr *localRecoder) split(p LocalClass, a int) [][]int32 {
	t := lr.ds.Attrs[a].Tax
	node := int(p.Node[a])
	kids := t.Nodes[node].Children
	pos := make(map[int]int, len(kids))
	for i, c := range kids {
		pos[c] = i
	}
	parts := make([][]int32, len(kids))
	for _, r := range p.Rows {
		i := pos[childUnder(t, int(lr.ds.Attrs[a].Leaf[r]), node)]
		parts[i] = append(parts[i], r)
	}
	return parts
}

// specialise runs one round on class p: the satisfying children (next
// frontier) and what p keeps, at p's level (empty when every record went
// down). It specialises the attribute of p's whose satisfying children
// gain the most NCP; when what p keeps cannot be repaired, it tries the
// next attribute. What p keeps returns to the frontier with that
// attribute fixed, so that its other attributes can still go down; it is
// published when none can.
func (lr *localRecoder) specialise(p LocalClass) ([]LocalClass, LocalClass, bool) {
	for {
		a := lr.bestAttribute(p)
		if a < 0 {
			return nil, p, false
		}
		kids := lr.ds.Attrs[a].Tax.Nodes[p.Node[a]].Children
		var good [][]int32
		var goodNode []int
		var rest []int32
		for i, part := range lr.split(p, a) {
			switch {
			case len(part) == 0:
			case lr.ok(part):
				good, goodNode = append(good, part), append(goodNode, kids[i])
			default:
				rest = append(rest, part...) // move back
			}
		}
		if len(rest) > 0 && !lr.ok(rest) {
			var ok bool
			if rest, ok = lr.repair(rest, good); !ok {
				p.fixed = fix(p.fixed, a, len(p.Node)) // no child can spare what p needs
				continue
			}
		}
		var out []LocalClass
		for i, part := range good {
			node := slices.Clone(p.Node)
			node[a] = int32(goodNode[i])
			out = append(out, LocalClass{Rows: part, Node: node})
		}
		return out, LocalClass{Rows: rest, Node: p.Node, fixed: fix(p.fixed, a, len(p.Node))}, len(rest) > 0
	}
}

// bestAttribute is the attribute of p, neither a leaf nor fixed, whose
// satisfying children gain the most NCP (records times the penalty they
// shed; ties to the attribute order), or −1 when no child of any
// attribute satisfies the model.
func (lr *localRecoder) bestAttribute(p LocalClass) int {
	best, bestGain := -1, 0.0
	for a, at := range lr.ds.Attrs {
		if at.Tax.IsLeaf(int(p.Node[a])) || (p.fixed != nil && p.fixed[a]) {
			continue
		}
		kids := at.Tax.Nodes[p.Node[a]].Children
		pen := at.NodePenalty(int(p.Node[a]))
		gain, down := 0.0, false
		for i, part := range lr.split(p, a) {
			if len(part) > 0 && lr.ok(part) {
				gain += float64(len(part)) * (pen - at.NodePenalty(kids[i]))
				down = true
			}
		}
		if down && (best < 0 || gain > bestGain) {
			best, bestGain = a, gain
		}
	}
	return best
}

// fix returns a copy of fixed (of n attributes) with attribute a set.
func fix(fixed []bool, a, n int) []bool {
	out := make([]bool, n)
	copy(out, fixed)
	out[a] = true
	return out
}

// repair moves records up from the children in good into rest until rest
// satisfies the model; good's slices are shortened in place. It fails when
// no child can give a record and still satisfy the model.
func (lr *localRecoder) repair(rest []int32, good [][]int32) ([]int32, bool) {
	for !lr.ok(rest) {
		g := lr.gains(rest)
		bestC, bestI, bestGain := -1, -1, -1.0
		for c, part := range good {
			if len(part) <= lr.k {
				continue
			}
			var h *Hist
			if lr.sens != nil {
				h = lr.sens.NewHist()
				for _, r := range part {
					lr.sens.Add(h, r)
				}
			}
			for i := len(part) - 1; i >= 0; i-- { // ties to the later record
				if gi := g(part[i]); gi > bestGain && lr.canGive(h, part[i]) {
					bestC, bestI, bestGain = c, i, gi
				}
			}
		}
		if bestC < 0 {
			return nil, false
		}
		rest = append(rest, good[bestC][bestI])
		good[bestC] = without(good[bestC], bestI)
	}
	return rest, true
}

// canGive reports whether a child with sensitive histogram h (nil: no
// model) still satisfies the model without record r.
func (lr *localRecoder) canGive(h *Hist, r int32) bool {
	if h == nil {
		return true
	}
	code := lr.sens.Code[r]
	lr.sens.RemoveCode(h, code)
	ok := lr.sens.OK(h)
	lr.sens.AddCode(h, code, 1)
	return ok
}

// gains returns what a record would add to the class rows: 1 (towards k),
// plus 1 for a new sensitive value, 1 for a new category, and its weight.
func (lr *localRecoder) gains(rows []int32) func(r int32) float64 {
	if lr.sens == nil {
		return func(int32) float64 { return 1 }
	}
	hasVal := make([]bool, lr.sens.NumCodes())
	hasCat := make([]bool, max(lr.sens.ncat, 0))
	for _, x := range rows {
		c := lr.sens.Code[x]
		hasVal[c] = true
		if ci := lr.sens.cat[c]; ci >= 0 {
			hasCat[ci] = true
		}
	}
	return func(r int32) float64 {
		c := lr.sens.Code[r]
		g := 1 + lr.sens.weight[c]
		if !hasVal[c] {
			g++
		}
		if ci := lr.sens.cat[c]; ci >= 0 && !hasCat[ci] {
			g++
		}
		return g
	}
}

// without returns rows without its i-th element (a new slice).
func without(rows []int32, i int) []int32 {
	out := make([]int32, 0, len(rows)-1)
	out = append(out, rows[:i]...)
	return append(out, rows[i+1:]...)
}
