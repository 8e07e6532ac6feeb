package rating

import (
	"math/bits"
	"slices"
)

// k-decomposability (§6.3.2): a connected component is k-decomposable if
// its nodes split into disjoint k-cliques (cliques of at least k nodes;
// the thesis's "⋃ Vᵢ = E" reads V, erratum E28); a graph is if all its
// components are. Corollary 6.1: a k-decomposable graph's matrix is
// (k, ε)-anonymous; the converse fails (Fig. 6.6: every degree at least 3,
// not 4-decomposable). The thesis gives no test; deciding it is a clique
// partition, NP-hard in general. We decide it exactly on components of at
// most ExactLimit nodes (a search over the cliques through the lowest node
// left, within a step budget) and certify it greedily on larger ones
// (a component that is a clique is one group; else repeatedly the largest
// clique grown from the node with fewest neighbours left): a greedy failure
// is "unknown", not "no".

// ExactLimit is the largest component decided exactly.
const ExactLimit = 24

// exactBudget bounds the exact search's steps per component.
const exactBudget = 2_000_000

// Verdict is the answer of a k-decomposability test.
type Verdict string

// The three answers.
const (
	Yes     Verdict = "yes"
	No      Verdict = "no"
	Unknown Verdict = "unknown"
)

// Decomposition is the result of KDecompose: the verdict, the k-cliques
// found (every component's, when the verdict is Yes), the number of
// components and of components shown not k-decomposable (No) or left
// undecided (Unknown).
type Decomposition struct {
	Verdict    Verdict `json:"verdict"`
	Groups     [][]int `json:"-"`
	Components int     `json:"components"`
	Not        int     `json:"not_decomposable"`
	Undecided  int     `json:"undecided"`
}

// KDecompose tests the graph adj (from Graph) for k-decomposability.
func KDecompose(adj [][]int, k int) Decomposition {
	comps := Components(adj)
	d := Decomposition{Components: len(comps)}
	for _, c := range comps {
		groups, v := decomposeComponent(adj, c, k)
		switch v {
		case Yes:
			d.Groups = append(d.Groups, groups...)
		case No:
			d.Not++
		default:
			d.Undecided++
		}
	}
	switch {
	case d.Not > 0:
		d.Verdict = No
	case d.Undecided > 0:
		d.Verdict = Unknown
	default:
		d.Verdict = Yes
	}
	return d
}

// decomposeComponent decides one component: exactly up to ExactLimit
// users, greedily above.
func decomposeComponent(adj [][]int, c []int, k int) ([][]int, Verdict) {
	if len(c) <= ExactLimit {
		return exactDecompose(adj, c, k)
	}
	return greedyDecompose(adj, c, k)
}

// exactDecompose searches the partitions of component c into k-cliques:
// the lowest node left goes into each clique through it of at least k
// nodes in turn (bit masks over c's positions).
func exactDecompose(adj [][]int, c []int, k int) ([][]int, Verdict) {
	n := len(c)
	if n < k {
		return nil, No
	}
	pos := make(map[int]int, n)
	for i, u := range c {
		pos[u] = i
	}
	mask := make([]uint32, n)
	for i, u := range c {
		for _, v := range adj[u] {
			if j, ok := pos[v]; ok {
				mask[i] |= 1 << j
			}
		}
	}
	steps := 0
	var parts []uint32
	var solve func(left uint32) bool
	var extend func(left, clique, cand uint32) bool
	solve = func(left uint32) bool {
		if left == 0 {
			return true
		}
		v := uint32(bits.TrailingZeros32(left))
		return extend(left, 1<<v, mask[v]&left)
	}
	extend = func(left, clique, cand uint32) bool {
		if steps++; steps > exactBudget {
			return false
		}
		if bits.OnesCount32(clique)+bits.OnesCount32(cand) < k {
			return false
		}
		if bits.OnesCount32(clique) >= k {
			parts = append(parts, clique)
			if solve(left &^ clique) {
				return true
			}
			parts = parts[:len(parts)-1]
		}
		for cand != 0 {
			u := uint32(bits.TrailingZeros32(cand))
			cand &^= 1 << u
			if extend(left, clique|1<<u, cand&mask[u]) {
				return true
			}
		}
		return false
	}
	if !solve(1<<n - 1) {
		if steps > exactBudget {
			return nil, Unknown
		}
		return nil, No
	}
	var groups [][]int
	for _, p := range parts {
		var g []int
		for p != 0 {
			j := bits.TrailingZeros32(p)
			p &^= 1 << j
			g = append(g, c[j])
		}
		groups = append(groups, g)
	}
	return groups, Yes
}

// greedyDecompose certifies a large component: one group if it is a
// clique, else cliques grown greedily; a clique under k is Unknown.
func greedyDecompose(adj [][]int, c []int, k int) ([][]int, Verdict) {
	in := make(map[int]bool, len(c))
	for _, u := range c {
		in[u] = true
	}
	isClique := true
	for _, u := range c {
		if len(adj[u]) != len(c)-1 { // adj[u] lies inside u's component
			isClique = false
			break
		}
	}
	if isClique {
		return [][]int{slices.Clone(c)}, Yes
	}
	leftNb := func(u int) []int {
		var out []int
		for _, v := range adj[u] {
			if in[v] {
				out = append(out, v)
			}
		}
		return out
	}
	var groups [][]int
	for len(in) > 0 {
		v, least := -1, 0
		for _, u := range c {
			if !in[u] {
				continue
			}
			if n := len(leftNb(u)); v < 0 || n < least {
				v, least = u, n
			}
		}
		clique, cand := []int{v}, leftNb(v)
		for len(cand) > 0 {
			best, most := 0, -1
			for x, u := range cand {
				common := 0
				for _, w := range cand {
					if _, ok := slices.BinarySearch(adj[u], w); ok && w != u {
						common++
					}
				}
				if common > most {
					best, most = x, common
				}
			}
			u := cand[best]
			clique = append(clique, u)
			cand = slices.DeleteFunc(cand, func(w int) bool { _, ok := slices.BinarySearch(adj[u], w); return !ok })
		}
		if len(clique) < k {
			return nil, Unknown
		}
		for _, u := range clique {
			delete(in, u)
		}
		slices.Sort(clique)
		groups = append(groups, clique)
	}
	return groups, Yes
}
