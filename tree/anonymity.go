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
		top, tail := split(n.Counts, l)
		if tail == 0 {
			worst = math.Inf(1)
			return
		}
		worst = max(worst, float64(top)/float64(tail))
	})
	return worst
}

// split sorts a leaf's class counts in decreasing order, d1 >= d2 >= …,
// and returns d1 and d_l + … + d_m (0 when fewer than l classes).
func split(counts []uint64, l int) (top, tail uint64) {
	d := slices.Clone(counts)
	slices.SortFunc(d, func(a, b uint64) int { return cmp.Compare(b, a) })
	if l-1 < len(d) {
		for _, x := range d[l-1:] {
			tail += x
		}
	}
	if len(d) > 0 {
		top = d[0]
	}
	return top, tail
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

// SpreadMisses replaces every node's class counts by what a publication
// of its majority class, hit and miss alone tells (§3.1): hit on the
// majority class and the miss spread evenly over the other classes, the
// remainder of the division one row each to the classes after the
// majority's in label order, then to those before it (so that none ties
// with it ahead of it and the majority class stays). PGEN then draws a
// path's other classes uniformly, as the paper's does. A node's counts
// are then no longer its children's sums.
func (t *Tree) SpreadMisses() {
	var walk func(*Node)
	walk = func(n *Node) {
		if k := len(n.Counts); k > 1 {
			m := Majority(n.Counts)
			hit := n.Counts[m]
			miss := rows(n.Counts) - hit
			others := uint64(k - 1)
			extra := miss % others
			for j := 1; j < k; j++ {
				i := (m + j) % k
				n.Counts[i] = miss / others
				if extra > 0 {
					n.Counts[i]++
					extra--
				}
			}
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(t.Root)
}

// leaves calls f on every leaf, left to right.
func (t *Tree) leaves(f func(*Node)) {
	var walk func(*Node)
	walk = func(n *Node) {
		if n.IsLeaf() {
			f(n)
			return
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(t.Root)
}

// ErrAnonymity: no pruning makes the tree meet the requirement: its root
// alone fails it.
var ErrAnonymity = errors.New("tree: the training rows as a whole do not meet the anonymity requirement")

// Requirement is an anonymity requirement on every leaf (path) of a
// released tree: at least K training rows and, when L >= 2, recursive
// (C, L)-diversity (d1 < C·(d_L + … + d_m), DiversityC's form).
//
// HitMiss checks the diversity as the paper does (§3.1, PathDiverse), by
// the leaf's majority count (hit) and the rest (miss) assumed spread
// evenly over L − 1 other classes. That is sound only for a tree that
// publishes hit and miss alone (SpreadMisses gives the counts such a
// publication implies): a tree that publishes every class's count shows
// the uneven spread the check assumes away.
type Requirement struct {
	K       uint64
	C       float64
	L       int
	HitMiss bool
}

// Check says what is wrong with r as a job's params give it (release_k,
// release_l, release_c): the param's name and why, or "" when r is fine.
// L is 0 (no diversity) or at least 2, and C is above 0 exactly when L is.
func (r Requirement) Check() (param, why string) {
	switch {
	case r.L == 1 || r.L < 0:
		return "release_l", "must be 0 (no diversity) or at least 2"
	case r.L >= 2 && !(r.C > 0):
		return "release_c", "must be above 0 with release_l"
	case r.L == 0 && r.C != 0:
		return "release_c", "needs release_l"
	}
	return "", ""
}

// Holds reports whether a leaf with these class counts meets r.
func (r Requirement) Holds(counts []uint64) bool {
	var rows uint64
	for _, c := range counts {
		rows += c
	}
	if rows < r.K {
		return false
	}
	if r.L < 2 {
		return true
	}
	if r.HitMiss {
		hit := counts[Majority(counts)]
		return PathDiverse(hit, rows-hit, r.C, r.L)
	}
	top, tail := split(counts, r.L)
	return float64(top) < r.C*float64(tail)
}

// ReleasePrune prunes the tree until every leaf holds at least k training
// rows (PruneTo with Requirement{K: k}).
func (t *Tree) ReleasePrune(k uint64) (int, error) { return t.PruneTo(Requirement{K: k}) }

// PruneTo prunes the tree until every leaf meets r: the paper's
// anonymity-based tree pruning (ATP, its Figure 4). ATP goes up the tree
// level by level from the deepest, and at each node merges a child that
// fails the requirement with its siblings into one child, then replaces a
// node left with a single child by that child. In a binary tree a failing
// leaf's only sibling is merged with it, so its parent becomes a leaf
// holding both children's rows (a node's counts are its children's sums);
// a node becomes a leaf at most once, after its subtree is done, so this
// is a post-order walk. On a multiway split a failing child is merged with
// siblings one at a time until it passes, and the node keeps its other
// children (atp.go has the rule for which siblings). A tree whose root
// alone remains is released as that one leaf when the root meets r (it
// tells only the class counts of all rows; ATP would release no tree), and
// is ErrAnonymity when it does not. PruneTo returns the number of internal
// nodes it turned into leaves or merged away.
func (t *Tree) PruneTo(r Requirement) (int, error) {
	pruned := 0
	fails := func(n *Node) bool { return n.IsLeaf() && !r.Holds(n.Counts) }
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.IsLeaf() {
			return
		}
		for _, c := range n.Children() {
			walk(c)
		}
		switch {
		case n.Split.Op == OpIn:
			pruned += n.mergeFailing(r.Holds)
		case fails(n.Left) || fails(n.Right):
			n.makeLeaf()
			pruned++
		}
	}
	walk(t.Root)
	if fails(t.Root) {
		return pruned, ErrAnonymity
	}
	return pruned, nil
}
