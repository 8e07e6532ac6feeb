package boost

import (
	"errors"
	"slices"

	"github.com/cohortdm/cohort/tree"
)

// ErrEmptyJoin: the join of the tables has no row.
var ErrEmptyJoin = errors.New("boost: the join is empty")

// Holder is the class holder's booster: it keeps the trees (their
// skeletons and leaf weights), turns the groups of each level into
// per-join-row gradient sums, and picks every open node's split from the
// bin sums. It holds no table; Local does.
type Holder struct {
	p     Params
	base  float64
	trees []*node
	cur   *node
	open  []*node
}

// NewHolder starts a booster.
func NewHolder(p Params) *Holder { return &Holder{p: p} }

// Done reports whether every tree is grown.
func (h *Holder) Done() bool { return len(h.trees) == h.p.Trees && h.cur == nil }

// Base is the base score.
func (h *Holder) Base() float64 { return h.base }

// Depth is the depth of the level's open nodes.
func (h *Holder) Depth() int {
	if len(h.open) == 0 {
		return 0
	}
	return h.open[0].depth
}

// Open is the number of open nodes of the level.
func (h *Holder) Open() int { return len(h.open) }

// Decision is a split to make: open node Node splits on table Table's
// feature Feature at bin Bin.
type Decision struct {
	Node, Table, Feature, Bin int
}

// Level starts a level: from the groups and the labels of the class
// holder's rows it returns each group's sums per join row (nil for a
// group in no open node: zeros), or nil when the level closes the tree (every
// open node at max_depth: they become leaves).
func (h *Holder) Level(groups []Group, y []float64) ([]Vec, error) {
	if h.cur == nil {
		if len(h.trees) == 0 {
			wy, n := labelSum(groups, y)
			if n == 0 {
				return nil, ErrEmptyJoin
			}
			h.base = BaseScore(wy, n, h.p.Loss)
		}
		h.cur = &node{}
		h.open = []*node{h.cur}
	}
	slot := map[*node]int{}
	for i, nd := range h.open {
		slot[nd] = i
		nd.g, nd.h = 0, 0
	}
	gv := make([]Vec, len(groups))
	for k, gr := range groups {
		sigs := sigsOf(gr.Combo)
		i, ok := slot[leafOf(h.cur, sigs)]
		if !ok { // in a closed leaf: zeros, so that no message shows it
			gv[k] = make(Vec, 2*len(h.open))
			continue
		}
		m := h.base
		for _, t := range h.trees {
			m += leafOf(t, sigs).weight
		}
		gf, hf := GradHess(m, y[gr.Row], h.p.Loss)
		v := make(Vec, 2*len(h.open))
		v[2*i], v[2*i+1] = Fixed(gf), Fixed(hf)
		gv[k] = v
		h.open[i].g += v[2*i] * int64(gr.Count)
		h.open[i].h += v[2*i+1] * int64(gr.Count)
	}
	if h.open[0].depth >= h.p.MaxDepth {
		h.close()
		return nil, nil
	}
	return gv, nil
}

// Totals is open node i's gradient and hessian sums over its join rows
// (fixed point), as Level computed them.
func (h *Holder) Totals(i int) (g, hs int64) { return h.open[i].g, h.open[i].h }

// Choose picks each open node's split from every table's bin sums (by
// graph index; nil for a table without features); nodes without a split
// become leaves.
func (h *Holder) Choose(sums []BinSums) []Decision {
	var out []Decision
	for i, nd := range h.open {
		if s := best(sums, i, nd, h.p); s != nil {
			nd.split = s
			out = append(out, Decision{Node: i, Table: s.Table, Feature: s.Feature, Bin: s.Bin})
		} else {
			nd.weight = LeafWeight(nd.g, nd.h, h.p)
		}
	}
	if len(out) == 0 {
		h.close()
	}
	return out
}

// Apply records the ordinals the winning tables gave the splits (in
// Choose's order) and opens the children.
func (h *Holder) Apply(ds []Decision, ordinals []int) {
	var next []*node
	for k, d := range ds {
		nd := h.open[d.Node]
		nd.split.Ordinal = ordinals[k]
		nd.left, nd.right = &node{depth: nd.depth + 1}, &node{depth: nd.depth + 1}
		next = append(next, nd.left, nd.right)
	}
	h.open = next
}

// close makes every open node a leaf and finishes the tree.
func (h *Holder) close() {
	for _, nd := range h.open {
		nd.weight = LeafWeight(nd.g, nd.h, h.p)
	}
	h.trees = append(h.trees, h.cur)
	h.cur, h.open = nil, nil
}

// Trees returns the finished trees as regression trees, with split(t,
// ordinal) giving each split's predicate (its owner's knowledge).
func (h *Holder) Trees(split func(table, ordinal int) tree.Split) []*tree.RegNode {
	out := make([]*tree.RegNode, len(h.trees))
	for i, t := range h.trees {
		out[i] = regTree(t, split)
	}
	return out
}

func regTree(n *node, split func(table, ordinal int) tree.Split) *tree.RegNode {
	if n.split == nil {
		return &tree.RegNode{Weight: n.weight}
	}
	s := split(n.split.Table, n.split.Ordinal)
	return &tree.RegNode{Split: &s, Left: regTree(n.left, split), Right: regTree(n.right, split)}
}

// clone is a copy of the booster that later levels do not change: the
// finished trees are shared (nothing changes them), the tree being grown
// is copied with its open nodes.
func (h *Holder) clone() *Holder {
	c := &Holder{p: h.p, base: h.base, trees: slices.Clone(h.trees)}
	if h.cur == nil {
		return c
	}
	copies := map[*node]*node{}
	var walk func(n *node) *node
	walk = func(n *node) *node {
		if n == nil {
			return nil
		}
		cp := *n
		if n.split != nil {
			s := *n.split
			cp.split = &s
		}
		cp.left, cp.right = walk(n.left), walk(n.right)
		copies[n] = &cp
		return &cp
	}
	c.cur = walk(h.cur)
	for _, n := range h.open {
		c.open = append(c.open, copies[n])
	}
	return c
}
