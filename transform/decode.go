package transform

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// ErrDecode marks a tree that does not decode with the key: a split on a
// column the key does not know, or one that no gini or entropy miner
// would make on the recoded table.
var ErrDecode = errors.New("transform: cannot decode the tree")

// DecodeTree maps a tree grown on a recoded table back to the original
// domain with the key alone (Bu et al., Theorem 2, with the research
// notes' DecodeSplit, which handles permuted pieces and midpoints).
//
// A split "A' <= t'" sends left the recoded values up to t'. If t' falls
// inside the image range of a Mono piece, the whole piece goes left: by
// the spacing rule check enforces, a midpoint between values present at a
// node never falls there unless the node holds no value of that piece,
// and a threshold equal to a present value (C4.5's style) is on its left.
// The original values going left then form a prefix of the active domain
// (a suffix under AntiMonotone, where the children are swapped), and the
// split decodes to "A <= midpoint of the prefix's last value and the next
// value". It sends every training row where the miner's split sent it.
// The thresholds are those of the tree grown on the original table when,
// at each split, the two neighbouring values of the active domain are
// present at the node; DecodeTreeWithTable gives them exactly always.
// Counts, categorical splits and leaves are copied.
func DecodeTree(t *tree.Tree, k *Key) (*tree.Tree, error) {
	d := &decoder{key: k}
	root, err := d.node(t.Root, "root", nil)
	if err != nil {
		return nil, err
	}
	return &tree.Tree{Labels: slices.Clone(t.Labels), Root: root}, nil
}

// DecodeTreeWithTable decodes like DecodeTree, but routes the rows of the
// original table raw (the one the key was made from) down the tree, and
// decodes each numeric split to the midpoint of the largest original value
// sent left and the smallest sent right at that node: the threshold the
// tree grown on raw itself has (midpoint of adjacent values present at the
// node). It checks every node's counts against the rows that reach it, so
// a tree grown on another table is refused, and refuses a split whose left
// and right original values interleave (one no gini or entropy miner
// makes: Bu et al., Lemma 2).
func DecodeTreeWithTable(t *tree.Tree, k *Key, raw *table.Table) (*tree.Tree, error) {
	rt, err := newRouter(t, k, raw)
	if err != nil {
		return nil, err
	}
	d := &decoder{key: k, rows: rt}
	all := make([]int32, raw.NumRows())
	for r := range all {
		all[r] = int32(r)
	}
	root, err := d.node(t.Root, "root", all)
	if err != nil {
		return nil, err
	}
	return &tree.Tree{Labels: slices.Clone(t.Labels), Root: root}, nil
}

type decoder struct {
	key  *Key
	rows *router // nil: key alone
}

// node decodes n (at path) and its subtree; rows are the table rows at n
// when a table is routed.
func (d *decoder) node(n *tree.Node, path string, rows []int32) (*tree.Node, error) {
	if n == nil {
		return nil, fmt.Errorf("%w: %s: missing node", ErrDecode, path)
	}
	out := &tree.Node{Counts: slices.Clone(n.Counts)}
	if d.rows != nil {
		if err := d.rows.checkCounts(n, path, rows); err != nil {
			return nil, err
		}
	}
	if n.IsLeaf() {
		return out, nil
	}
	s := *n.Split
	c := d.key.Column(s.Column)
	switch {
	case c == nil || c.Kind == table.Class:
		return nil, fmt.Errorf("%w: %s: split on column %q, which is not a column the key transformed or kept", ErrDecode, path, s.Column)
	case c.Recoded() != (s.Op == tree.OpLE):
		return nil, fmt.Errorf("%w: %s: split on column %q with op %s, which its kind does not allow", ErrDecode, path, s.Column, s.Op)
	}
	var left, right []int32
	swap := false
	if d.rows != nil {
		left, right = d.rows.split(&s, rows)
	}
	if c.Recoded() {
		var err error
		if d.rows != nil {
			s.Num, swap, err = c.thresholdOnRows(d.rows.values[s.Column], left, right)
		} else {
			s.Num, swap, err = c.threshold(s.Num)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: split on column %q: %w", ErrDecode, path, s.Column, err)
		}
	}
	out.Split = &s
	l, err := d.node(n.Left, path+".left", left)
	if err != nil {
		return nil, err
	}
	r, err := d.node(n.Right, path+".right", right)
	if err != nil {
		return nil, err
	}
	out.Left, out.Right = l, r
	if swap {
		out.Left, out.Right = r, l
	}
	return out, nil
}

// threshold decodes recoded threshold t with the key alone (DecodeTree):
// the original threshold, and whether the children swap.
func (c *ColumnKey) threshold(t float64) (float64, bool, error) {
	n := len(c.byImage)
	j := sort.Search(n, func(j int) bool { return c.Images[c.byImage[j]] > t }) // images <= t go left
	if j > 0 && j < n {
		p := c.pieceOf[c.byImage[j-1]]
		if p == c.pieceOf[c.byImage[j]] && c.Pieces[p].Mono {
			for j < n && c.pieceOf[c.byImage[j]] == p {
				j++
			}
		}
	}
	if j == 0 || j == n {
		return 0, false, errors.New("the threshold leaves every value of the key on one side")
	}
	if c.Direction == AntiMonotone {
		return tree.Midpoint(c.Values[n-j-1], c.Values[n-j]), true, nil
	}
	return tree.Midpoint(c.Values[j-1], c.Values[j]), false, nil
}

// thresholdOnRows decodes a split from the rows it sends left and right
// (value indices in vals): the midpoint of the original values on either
// side of the cut, and whether the children swap.
func (c *ColumnKey) thresholdOnRows(vals []int32, left, right []int32) (float64, bool, error) {
	if len(left) == 0 || len(right) == 0 {
		return 0, false, errors.New("the split sends every row of the node one way")
	}
	span := func(rows []int32) (lo, hi int32) {
		lo, hi = vals[rows[0]], vals[rows[0]]
		for _, r := range rows {
			lo, hi = min(lo, vals[r]), max(hi, vals[r])
		}
		return lo, hi
	}
	llo, lhi := span(left)
	rlo, rhi := span(right)
	switch {
	case lhi < rlo && c.Direction == Monotone:
		return tree.Midpoint(c.Values[lhi], c.Values[rlo]), false, nil
	case rhi < llo && c.Direction == AntiMonotone:
		return tree.Midpoint(c.Values[rhi], c.Values[llo]), true, nil
	}
	return 0, false, errors.New("the original values of the rows it sends left and right interleave (not a split a gini or entropy miner makes)")
}
