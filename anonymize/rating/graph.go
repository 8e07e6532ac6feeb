package rating

import (
	"math"
	"slices"
)

// The graphical representation of §6.3.2: one node per user, an edge
// between two users whose non-sensitive ratings are ε-proximate (Eq. 6.1).
// Theorem 6.1 reads (k, ε)-anonymity off the degrees, Definition 7.1's
// maxsize off the neighbourhoods, and §6.3.2's k-decomposability off the
// connected components.

// Graph returns every user's ε-neighbours (itself excluded), ascending.
// It finds them as Slice does, through the per-issue sorted index: with
// ε below the maximum rating a neighbour rated exactly the issues the
// user rated, so it lies in the ε-window of the user's rarest issue. It
// costs far less than the O(n²·m) of comparing every pair on sparse data.
func (m *Matrix) Graph(eps int) [][]int {
	adj := make([][]int, len(m.R))
	if eps >= m.Max { // Dis never exceeds Max: the complete graph
		for a := range adj {
			for b := range m.R {
				if b != a {
					adj[a] = append(adj[a], b)
				}
			}
		}
		return adj
	}
	ix := m.index()
	for a := range m.R {
		best := -1
		var cands []entry
		for i, x := range m.R[a] {
			if x == 0 || m.Sensitive[i] {
				continue
			}
			if w := ix.window(i, x, eps); best < 0 || len(w) < len(cands) {
				best, cands = i, w
			}
		}
		if best < 0 {
			for b := range m.R {
				if b != a && m.Dis(a, b) <= eps {
					adj[a] = append(adj[a], b)
				}
			}
			continue
		}
		for _, e := range cands {
			if e.user != a && m.Dis(a, e.user) <= eps {
				adj[a] = append(adj[a], e.user)
			}
		}
		slices.Sort(adj[a])
	}
	return adj
}

// DegreeReport is the degree semantics of Definitions 6.2 and 6.3 (the
// (k, ε)-anonymous group of a user is the user with all its ε-proximate
// users): the smallest such group (Theorem 6.1: the matrix is
// (k, ε)-anonymous iff it is at least k), how many users' groups are
// smaller than k, the smallest standard deviation of a sensitive issue in
// any group (the matrix is (k, ε, l)-anonymous iff it is also at least l),
// and maxsize (Definition 7.1: the largest group).
type DegreeReport struct {
	MinGroup int     `json:"min_group"`
	Below    int     `json:"users_below_k"`
	MinSD    float64 `json:"min_sd"`
	MaxSize  int     `json:"maxsize"`
}

// DegreeCheck computes the DegreeReport at ε for k over the graph adj
// (from Graph). A matrix without sensitive issues has MinSD +Inf.
func (m *Matrix) DegreeCheck(adj [][]int, k int) DegreeReport {
	r := DegreeReport{MinGroup: len(m.R), MinSD: math.Inf(1)}
	group := make([]int, 0, 16)
	for a, nb := range adj {
		size := len(nb) + 1
		r.MinGroup = min(r.MinGroup, size)
		r.MaxSize = max(r.MaxSize, size)
		if size < k {
			r.Below++
		}
		group = append(append(group[:0], a), nb...)
		for i, s := range m.Sensitive {
			if s {
				r.MinSD = math.Min(r.MinSD, m.SD(group, i))
			}
		}
	}
	if len(m.R) == 0 {
		r.MinGroup = 0
	}
	return r
}

// Components returns the connected components of the graph adj, each
// ascending, in the order of their smallest user.
func Components(adj [][]int) [][]int {
	seen := make([]bool, len(adj))
	var out [][]int
	for s := range adj {
		if seen[s] {
			continue
		}
		seen[s] = true
		comp, stack := []int{}, []int{s}
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			comp = append(comp, u)
			for _, v := range adj[u] {
				if !seen[v] {
					seen[v] = true
					stack = append(stack, v)
				}
			}
		}
		slices.Sort(comp)
		out = append(out, comp)
	}
	return out
}

// HammingGroups counts the maximal Hamming groups of the flag matrix
// (§6.3.2: users with one pattern of rated non-sensitive issues), a lower
// bound on the number of components when ε is below the maximum rating.
func (m *Matrix) HammingGroups() int {
	seen := map[string]bool{}
	b := make([]byte, 0, len(m.Sensitive))
	for _, row := range m.R {
		b = b[:0]
		for i, x := range row {
			if !m.Sensitive[i] {
				b = append(b, byte(min(x, 1)))
			}
		}
		seen[string(b)] = true
	}
	return len(seen)
}
