package tree

import (
	"cmp"
	"slices"
)

// ATP on a multiway split (Sharkey, Tian, Zhang, Xu, "Privacy-Preserving
// Data Mining through Knowledge Model Sharing", PinKDD 2007, §3.2, Fig. 4,
// lines 9–13): while the node has a child b that fails the requirement, b
// is merged with "suitable siblings" into one new child, a leaf holding
// their rows (the siblings' subtrees removed), reached by the union of
// their values; a node left with one child becomes that child, a leaf.
// The paper leaves "suitable" open and gives two examples, every sibling
// (which makes the node a leaf at once, as on a binary split) or the
// siblings whose value descends from b's in a taxonomy (C4.5's branches
// are single values, so none). mergeFailing merges one sibling at a time,
// until the merged child passes, choosing
//
//  1. another failing child, the one with the fewest rows: both must be
//     merged away, and merging them together loses no passing subtree;
//  2. else a sibling whose merge with b passes, the one with the fewest
//     rows: one merge suffices, and it removes the smallest subtree;
//  3. else the sibling with the fewest rows;
//
// ties to the first in branch order. The merged child takes the place of
// the first of the two. Only leaves fail here: PruneTo walks in
// post-order, so a child that is still internal met the requirement
// everywhere below it.

// mergeFailing applies that rule at multiway node n, with ok the
// requirement on a leaf's counts, and returns the number of internal
// nodes it removed or turned into leaves (n itself among them when it
// becomes a leaf).
func (n *Node) mergeFailing(ok func([]uint64) bool) int {
	removed := 0
	for {
		b := slices.IndexFunc(n.Branches, func(br Branch) bool { return br.Child.IsLeaf() && !ok(br.Child.Counts) })
		if b < 0 {
			return removed
		}
		s := n.mergePartner(b, ok)
		if !n.Branches[s].Child.IsLeaf() {
			removed++
		}
		n.mergeBranches(b, s)
		if len(n.Branches) == 1 {
			n.makeLeaf()
			return removed + 1
		}
	}
}

// mergePartner is the sibling failing branch b is merged with (rules 1
// to 3 above).
func (n *Node) mergePartner(b int, ok func([]uint64) bool) int {
	best, bestRank, bestRows := -1, 4, uint64(0)
	for i, br := range n.Branches {
		if i == b {
			continue
		}
		c := br.Child
		rank := 3
		switch {
		case c.IsLeaf() && !ok(c.Counts):
			rank = 1
		case ok(addCounts(n.Branches[b].Child.Counts, c.Counts)):
			rank = 2
		}
		r := rows(c.Counts)
		if rank < bestRank || rank == bestRank && r < bestRows {
			best, bestRank, bestRows = i, rank, r
		}
	}
	return best
}

// mergeBranches replaces branches i and j by one leaf holding both
// children's rows, reached by both branches' values, at the place of the
// first.
func (n *Node) mergeBranches(i, j int) {
	i, j = min(i, j), max(i, j)
	a, b := n.Branches[i], n.Branches[j]
	vals := append(slices.Clone(a.Values), b.Values...)
	slices.SortFunc(vals, cmp.Compare[string])
	n.Branches[i] = Branch{Values: vals, Child: &Node{Counts: addCounts(a.Child.Counts, b.Child.Counts)}}
	n.Branches = slices.Delete(n.Branches, j, j+1)
}

func addCounts(a, b []uint64) []uint64 {
	s := slices.Clone(a)
	for i, c := range b {
		s[i] += c
	}
	return s
}

// rows is the number of rows of a node's counts.
func rows(counts []uint64) uint64 {
	var n uint64
	for _, c := range counts {
		n += c
	}
	return n
}
