package tree

import (
	"cmp"
	"errors"
	"math"
	"slices"
)

// The anonymity of a released tree, after Sharkey, Tian, Zhang and Xu,
// "Privacy-Preserving Data Mining through Knowledge Model Sharing"
// (PinKDD 2007, LNCS 4890, pp. 97–115), §4: the path from the root to a
// leaf is a conjunction of predicates, and the training rows that reach
// the leaf are the group that path describes, as a quasi-identifier group
// is in a published table. A released tree (sjc's public skeleton with its
// counts, or a whole tree) tells whoever holds it how many rows of each
// class each path holds.

// PathK is the tree's path k-anonymity: the fewest training rows at a
// leaf. The tree is k-anonymous (every path's group holds at least k rows)
// for every k <= PathK.
func (t *Tree) PathK() uint64 {
	k := uint64(math.MaxUint64)
	t.leaves(func(n *Node) {
		var rows uint64
		for _, c := range n.Counts {
			rows += c
		}
		k = min(k, rows)
	})
	return k
}

// DiversityC is the tree's recursive (c, l)-diversity (Machanavajjhala et
// al., ℓ-diversity, ICDE 2006, as the paper uses it): a leaf whose class
// counts, sorted in decreasing order, are d1 >= d2 >= … >= dm is
// (c, l)-diverse when d1 < c·(d_l + … + d_m). DiversityC is the largest
// d1/(d_l + … + d_m) over the leaves, so the tree is (c, l)-diverse for
// every c above it; +Inf when some leaf has fewer than l classes present
// (no c makes it diverse). The paper's path version (l <= miss + 1 and
// hit < c·miss/(l − 1)) assumes a published leaf gives only its majority
// count (hit) and the rest (miss), spread evenly; a tree here has every
// class's count, so the exact form applies. l must be at least 2.
func (t *Tree) DiversityC(l int) float64 {
	worst := 0.0
	t.leaves(func(n *Node) {
		d := slices.Clone(n.Counts)
		slices.SortFunc(d, func(a, b uint64) int { return -cmp.Compare(a, b) })
		var tail uint64
		if l-1 < len(d) {
			for _, x := range d[l-1:] {
				tail += x
			}
		}
		if tail == 0 {
			worst = math.Inf(1)
			return
		}
		worst = max(worst, float64(d[0])/float64(tail))
	})
	return worst
}

// PathDiverse is the paper's (c, l)-diversity of one path when a tree
// publishes only its leaf's majority count (hit) and the rest (miss):
// l <= miss + 1 and hit < c·miss/(l − 1), the misses assumed spread evenly
// over l − 1 other classes (§3.1). l must be at least 2.
func PathDiverse(hit, miss uint64, c float64, l int) bool {
	if l < 2 || uint64(l) > miss+1 {
		return false
	}
	return float64(hit) < c*float64(miss)/float64(l-1)
}

// leaves calls f on every leaf, left to right.
func (t *Tree) leaves(f func(*Node)) {
	var walk func(*Node)
	walk = func(n *Node) {
		if n.IsLeaf() {
			f(n)
			return
		}
		walk(n.Left)
		walk(n.Right)
	}
	walk(t.Root)
}

// ErrAnonymity: no pruning makes the tree k-anonymous: its root holds
// fewer than k rows.
var ErrAnonymity = errors.New("tree: fewer training rows than the anonymity requirement")

// ReleasePrune prunes the tree until every leaf holds at least k training
// rows: the paper's anonymity-based tree pruning (ATP, its Figure 4) for k.
// ATP goes up the tree level by level from the deepest, and at each node
// merges a child that fails the requirement with its siblings into one
// child, then replaces a node left with a single child by that child. In a
// binary tree a failing leaf's only sibling is merged with it, so its
// parent becomes a leaf holding both children's rows (a node's counts are
// its children's sums); a node becomes a leaf at most once, after its
// subtree is done, so this is a post-order walk. A tree whose root alone
// remains is released as that one leaf when the root holds k rows (it tells
// only the majority class of all rows; ATP would release no tree), and is
// ErrAnonymity when it holds fewer. ReleasePrune returns the number of
// internal nodes it turned into leaves.
func (t *Tree) ReleasePrune(k uint64) (int, error) {
	pruned := 0
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.IsLeaf() {
			return
		}
		walk(n.Left)
		walk(n.Right)
		if fails(n.Left, k) || fails(n.Right, k) {
			n.Split, n.Left, n.Right = nil, nil, nil
			pruned++
		}
	}
	walk(t.Root)
	if fails(t.Root, k) {
		return pruned, ErrAnonymity
	}
	return pruned, nil
}

// fails reports whether n is a leaf with fewer than k rows.
func fails(n *Node, k uint64) bool {
	if !n.IsLeaf() {
		return false
	}
	var rows uint64
	for _, c := range n.Counts {
		rows += c
	}
	return rows < k
}
