package rating

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// The satisfaction check of ch. 7: partition the users greedily into
// groups of pairwise ε-proximate users, each started from the first user
// left, and read k (smallest group) and l (smallest standard deviation) off
// the partition. Slice finds each group's candidates through per-issue
// sorted indices (Friedman, Bentley and Finkel's projection search, as the
// thesis's Alg. 1 does); Pairwise first computes every pairwise distance
// (the thesis's baseline). Both make the same partition.

// index is the per-issue sorted index: for every non-sensitive issue, the
// users who rated it, by rating.
type index struct {
	byIssue [][]entry
}

type entry struct {
	rating, user int
}

func (m *Matrix) index() *index {
	ix := &index{byIssue: make([][]entry, len(m.Sensitive))}
	for u, row := range m.R {
		for i, x := range row {
			if x > 0 && !m.Sensitive[i] {
				ix.byIssue[i] = append(ix.byIssue[i], entry{x, u})
			}
		}
	}
	for _, e := range ix.byIssue {
		slices.SortFunc(e, func(a, b entry) int {
			if a.rating != b.rating {
				return a.rating - b.rating
			}
			return a.user - b.user
		})
	}
	return ix
}

// window returns the users whose rating of issue i is within eps of x.
func (ix *index) window(i, x, eps int) []entry {
	e := ix.byIssue[i]
	lo := sort.Search(len(e), func(j int) bool { return e[j].rating >= x-eps })
	hi := sort.Search(len(e), func(j int) bool { return e[j].rating > x+eps })
	return e[lo:hi]
}

// Slice partitions the users by slicing at ε and prunes singletons
// (§7.2.5: a group smaller than k borrows from a group larger than k a user
// proximate to all its members). A user's candidates come from the issue it
// rated whose ε-window holds fewest remaining users (with ε below the
// maximum rating a user can only be proximate to users who rated the same
// issues); users who rated nothing are compared with everyone left.
//
// With ε at least the maximum rating every two users are proximate (Dis
// never exceeds it), so the partition is one group without comparing.
func (m *Matrix) Slice(k, eps int) [][]int {
	if eps >= m.Max && len(m.R) > 0 {
		all := make([]int, len(m.R))
		for u := range all {
			all[u] = u
		}
		return [][]int{all}
	}
	ix := m.index()
	return m.partition(k, eps, func(t0 int, left []bool) []int {
		best := -1
		var cands []entry
		for i, x := range m.R[t0] {
			if x == 0 || m.Sensitive[i] {
				continue
			}
			if w := ix.window(i, x, eps); best < 0 || len(w) < len(cands) {
				best, cands = i, w
			}
		}
		var out []int
		if best < 0 || eps >= m.Max {
			for u, l := range left {
				if l && u != t0 && m.Dis(t0, u) <= eps {
					out = append(out, u)
				}
			}
			return out
		}
		for _, e := range cands {
			if left[e.user] && e.user != t0 && m.Dis(t0, e.user) <= eps {
				out = append(out, e.user)
			}
		}
		slices.Sort(out)
		return out
	}, m.Dis)
}

// Pairwise is the baseline: every pairwise distance first (O(n²·m)), then
// the same partition.
func (m *Matrix) Pairwise(k, eps int) [][]int {
	n := len(m.R)
	d := make([][]int32, n)
	for a := range d {
		d[a] = make([]int32, n)
	}
	for a := range n {
		for b := a + 1; b < n; b++ {
			d[a][b] = int32(m.Dis(a, b))
			d[b][a] = d[a][b]
		}
	}
	dis := func(a, b int) int { return int(d[a][b]) }
	return m.partition(k, eps, func(t0 int, left []bool) []int {
		var out []int
		for u, l := range left {
			if l && u != t0 && dis(t0, u) <= eps {
				out = append(out, u)
			}
		}
		return out
	}, dis)
}

// partition is the greedy grouping shared by Slice and Pairwise: from the
// first user left, its proximate candidates (ascending), trimmed to a
// clique by dropping the member with most violations (ties: the later
// user; the thesis drops one of each violating pair, erratum E19), then
// singletons pruned.
func (m *Matrix) partition(k, eps int, candidates func(int, []bool) []int, dis func(a, b int) int) [][]int {
	n := len(m.R)
	left := make([]bool, n)
	for i := range left {
		left[i] = true
	}
	var groups [][]int
	for t0 := range n {
		if !left[t0] {
			continue
		}
		c := candidates(t0, left)
		for {
			worst, most := -1, 0
			for x, a := range c {
				v := 0
				for _, b := range c {
					if a != b && dis(a, b) > eps {
						v++
					}
				}
				if v > 0 && v >= most {
					worst, most = x, v
				}
			}
			if worst < 0 {
				break
			}
			c = slices.Delete(c, worst, worst+1)
		}
		g := append([]int{t0}, c...)
		for _, u := range g {
			left[u] = false
		}
		groups = append(groups, g)
	}
	return pruneSmall(groups, k, eps, dis)
}

// pruneSmall moves into every group smaller than k users from groups
// larger than k that are proximate to all its members, while it can.
func pruneSmall(groups [][]int, k, eps int, dis func(a, b int) int) [][]int {
	for s := range groups {
		for len(groups[s]) < k {
			moved := false
			for d := range groups {
				if d == s || len(groups[d]) <= k {
					continue
				}
				for x, u := range groups[d] {
					if !slices.ContainsFunc(groups[s], func(v int) bool { return dis(u, v) > eps }) {
						groups[s] = append(groups[s], u)
						groups[d] = slices.Delete(slices.Clone(groups[d]), x, x+1)
						moved = true
						break
					}
				}
				if moved {
					break
				}
			}
			if !moved {
				break
			}
		}
	}
	return groups
}

// KL reads k (the smallest group) and l (the smallest standard deviation
// of a sensitive issue in a group) off a partition (§7.2.2).
func (m *Matrix) KL(groups [][]int) (k int, l float64) {
	k, l = len(m.R), -1
	for _, g := range groups {
		k = min(k, len(g))
		for i, s := range m.Sensitive {
			if s {
				if sd := m.SD(g, i); l < 0 || sd < l {
					l = sd
				}
			}
		}
	}
	return k, max(l, 0)
}

// EpsilonForK is the search of §7.2.3 over integer ε ∈ [0, Max]: the
// smallest ε whose slicing partition has groups of at least k, and its
// groups (EpsilonFor with l = 0).
func (m *Matrix) EpsilonForK(k int) (int, [][]int, bool) {
	eps, g, err := m.EpsilonFor(k, 0)
	return eps, g, err == nil
}

// EpsilonFor is the search of §7.2.3 (ε for k) and §7.2.4 (ε for l) at
// once: the smallest integer ε ∈ [0, Max] whose slicing partition has
// groups of at least k and every sensitive issue's standard deviation at
// least l in every group, and its groups. Slicing is greedy, so the
// partition is not monotone in ε: a scan, not the thesis's bisection
// (which also assumes monotonicity). §7.2.4's case 1 comes first: if l is
// above a sensitive issue's standard deviation over the whole matrix no
// partition reaches it (Corollary 7.1), and the error says so; with no ε
// found the error is ErrNoSolution.
func (m *Matrix) EpsilonFor(k int, l float64) (int, [][]int, error) {
	if l > 0 {
		if l0 := m.WholeSD(); l > l0 {
			return 0, nil, fmt.Errorf("%w: l is above the whole matrix's smallest sensitive standard deviation %.4g (Corollary 7.1)", ErrNoSolution, l0)
		}
	}
	for eps := 0; eps <= m.Max; eps++ {
		g := m.Slice(k, eps)
		if kk, ll := m.KL(g); kk >= k && ll >= l {
			return eps, g, nil
		}
	}
	return 0, nil, fmt.Errorf("%w: no ε in 0..%d gives groups of at least k with standard deviations of at least l", ErrNoSolution, m.Max)
}

// WholeSD is l₀ of §7.2.4, the smallest standard deviation of a sensitive
// issue over all users (+Inf without sensitive issues): no partition has
// every group's at least l above it (Corollary 7.1).
func (m *Matrix) WholeSD() float64 {
	all := make([]int, len(m.R))
	for u := range all {
		all[u] = u
	}
	l0 := math.Inf(1)
	for i, s := range m.Sensitive {
		if s {
			l0 = math.Min(l0, m.SD(all, i))
		}
	}
	return l0
}
