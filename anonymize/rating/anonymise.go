package rating

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Mode chooses §6.3.4's modification.
type Mode int

// The two modifications: Improved (ModifyIssue, only issues whose range
// exceeds ε, the largest originals rounded up: strictly less distortion)
// and Literal (ModifyIssueLiteral on every issue of a group that is not
// yet an ε-clique, as the thesis's worked examples do).
const (
	Improved Mode = iota
	Literal
)

// Anonymise makes the matrix (k, ε)-anonymous by grouping and modifying
// (ch. 6): every connected component of the ε-graph that is
// k-decomposable (KDecompose) keeps its k-cliques as groups, unchanged
// (§6.3.3's case 1, applied per component: a matrix that is already
// k-decomposable is published as it is); the other users are grouped
// greedily (the first user left with its k − 1
// nearest, by the sum over non-sensitive issues of |a − b|, or Max where one
// rated and the other did not; a last group under k joins the group of its
// first user's nearest), then in every group each non-sensitive issue gets
// one rating pattern (rated by all if at least half rated it, the missing
// ratings imputed as the group's rounded mean; else by none: the thesis
// leaves borrowing across patterns open, this is our choice) and its ratings
// are modified to a range of at most ε keeping their sum (ModifyIssue, or
// with mode Literal ModifyIssueLiteral).
// Sensitive issues are not touched. With l > 0 it makes the matrix
// (k, ε, l)-anonymous (Def. 6.3), the part the thesis leaves open: a
// group whose sensitive standard deviation is below l merges with the
// group of its first user's nearest until none is (the groups are
// partitioned before any rating is modified, and sensitive ratings never
// are, so the merged group's deviation is that of its users; it ends at
// the whole matrix's at worst, which must then reach l: Corollary 7.1).
// It returns the new matrix, the groups and the distortion Σ|t − t′|
// (Defs. 6.3–6.4; a rating added or removed costs Max).
func (m *Matrix) Anonymise(k, eps int, l float64, mode Mode) (*Matrix, [][]int, int, error) {
	if err := m.Check(); err != nil {
		return nil, nil, 0, err
	}
	n := len(m.R)
	switch {
	case k < 1 || k > n:
		return nil, nil, 0, fmt.Errorf("%w: k must be in 1..%d (the users)", ErrInput, n)
	case eps < 0:
		return nil, nil, 0, fmt.Errorf("%w: ε must be at least 0", ErrInput)
	case l < 0 || math.IsNaN(l):
		return nil, nil, 0, fmt.Errorf("%w: l must be at least 0", ErrInput)
	}
	if l > 0 {
		if l0 := m.WholeSD(); l > l0 {
			return nil, nil, 0, fmt.Errorf("%w: l is above the whole matrix's smallest sensitive standard deviation %.4g (Corollary 7.1)", ErrNoSolution, l0)
		}
	}
	groups := m.mergeForL(m.groupUsers(k, eps), l)
	out := &Matrix{R: make([][]int, n), Sensitive: m.Sensitive, Max: m.Max}
	for u := range m.R {
		out.R[u] = slices.Clone(m.R[u])
	}
	distortion := 0
	for _, g := range groups {
		for i, s := range m.Sensitive {
			if !s {
				distortion += out.pattern(g, i)
			}
		}
		if mode == Literal {
			if g = slices.Sorted(slices.Values(g)); out.clique(g, eps) {
				continue // case 1: the group is already a clique
			}
		}
		for i, s := range m.Sensitive {
			switch {
			case s:
			case mode == Literal:
				distortion += out.modify(g, i, eps, ModifyIssueLiteral)
			default:
				distortion += out.modify(g, i, eps, ModifyIssue)
			}
		}
	}
	return out, groups, distortion, nil
}

// distance is the grouping's distance between users a and b.
func (m *Matrix) distance(a, b int) int {
	d := 0
	for i, s := range m.Sensitive {
		x, y := m.R[a][i], m.R[b][i]
		switch {
		case s || (x == 0 && y == 0):
		case x == 0 || y == 0:
			d += m.Max
		default:
			d += abs(x - y)
		}
	}
	return d
}

// mergeForL merges every group whose smallest sensitive standard
// deviation is below l into the group nearest its first user, until none
// is; with l ≤ the whole matrix's this ends.
func (m *Matrix) mergeForL(groups [][]int, l float64) [][]int {
	if l <= 0 {
		return groups
	}
	low := func(g []int) bool {
		for i, s := range m.Sensitive {
			if s && m.SD(g, i) < l {
				return true
			}
		}
		return false
	}
	for len(groups) > 1 {
		gi := slices.IndexFunc(groups, low)
		if gi < 0 {
			break
		}
		best, bestD := -1, math.MaxInt
		for j, h := range groups {
			if d := m.distance(groups[gi][0], h[0]); j != gi && d < bestD {
				best, bestD = j, d
			}
		}
		merged := slices.Sorted(slices.Values(append(slices.Clone(groups[best]), groups[gi]...)))
		groups[best] = merged
		groups = slices.Delete(groups, gi, gi+1)
	}
	return groups
}

// groupUsers keeps the k-cliques of every k-decomposable component and
// groups the other users by nearestGroups.
func (m *Matrix) groupUsers(k, eps int) [][]int {
	n := len(m.R)
	left := make([]bool, n)
	for i := range left {
		left[i] = true
	}
	adj := m.Graph(eps)
	var groups [][]int
	for _, c := range Components(adj) {
		if g, v := decomposeComponent(adj, c, k); v == Yes {
			groups = append(groups, g...)
			for _, u := range c {
				left[u] = false
			}
		}
	}
	return m.nearestGroups(k, left, groups)
}

// nearestGroups groups the users left, adding to groups.
func (m *Matrix) nearestGroups(k int, left []bool, groups [][]int) [][]int {
	n := len(m.R)
	type ud struct{ u, d int }
	remaining := 0
	for _, l := range left {
		if l {
			remaining++
		}
	}
	for t0 := range n {
		if !left[t0] {
			continue
		}
		if remaining < k && len(groups) > 0 {
			// the last users join their nearest group's
			var rest []int
			for u := t0; u < n; u++ {
				if left[u] {
					rest = append(rest, u)
				}
			}
			best, bestD := 0, math.MaxInt
			for gi, g := range groups {
				if d := m.distance(t0, g[0]); d < bestD {
					best, bestD = gi, d
				}
			}
			groups[best] = append(groups[best], rest...)
			break
		}
		var ds []ud
		for u := range n {
			if left[u] && u != t0 {
				ds = append(ds, ud{u, m.distance(t0, u)})
			}
		}
		slices.SortStableFunc(ds, func(a, b ud) int { return a.d - b.d })
		g := []int{t0}
		for _, x := range ds[:min(k-1, len(ds))] {
			g = append(g, x.u)
		}
		for _, u := range g {
			left[u] = false
		}
		remaining -= len(g)
		groups = append(groups, g)
	}
	return groups
}

// pattern gives issue i one rating pattern in group g (rated by all if
// at least half rated it, the missing ratings the rounded mean; else by
// none), returning the distortion.
func (m *Matrix) pattern(g []int, i int) int {
	var rated []int
	sum := 0
	for _, u := range g {
		if x := m.R[u][i]; x > 0 {
			rated = append(rated, u)
			sum += x
		}
	}
	dist := 0
	if len(rated) == 0 {
		return 0
	}
	if 2*len(rated) < len(g) { // by none
		for _, u := range rated {
			m.R[u][i] = 0
			dist += m.Max
		}
		return dist
	}
	mean := int(math.Round(float64(sum) / float64(len(rated))))
	for _, u := range g {
		if m.R[u][i] == 0 {
			m.R[u][i] = mean
			dist += m.Max
		}
	}
	return dist
}

// modify applies a modification to issue i of group g (after pattern:
// all rated or none), in g's order, returning the distortion.
func (m *Matrix) modify(g []int, i, eps int, f func(x []int, eps, maxRating int) []int) int {
	if m.R[g[0]][i] == 0 {
		return 0
	}
	x := make([]int, len(g))
	for j, u := range g {
		x[j] = m.R[u][i]
	}
	dist := 0
	y := f(x, eps, m.Max)
	for j, u := range g {
		dist += abs(y[j] - x[j])
		m.R[u][i] = y[j]
	}
	return dist
}

// clique reports whether the users of g are pairwise ε-proximate.
func (m *Matrix) clique(g []int, eps int) bool {
	for a := range g {
		for b := a + 1; b < len(g); b++ {
			if m.Dis(g[a], g[b]) > eps {
				return false
			}
		}
	}
	return true
}

// ModifyIssueLiteral is §6.3.4's modification as the thesis writes it
// (Sun's worked examples, Table 6.4's T′): the ratings taken in the
// group's order, sorted ascending (stably) where the cases sort; with an
// integer mean f and ε ≥ 2 the lower half f − 1, the upper half f + 1,
// the median of an odd group f (2.1.1–2.1.2), with ε = 1 every rating f
// (2.1.3, and the gap of ε = 1 with n even); with a fractional mean
// f + r/n and r ≤ ε the first rating f + r, the others f (2.2.1); with
// r = p·ε + q > ε the first p·ε ratings f + 1, the last f + q, the others
// f (2.2.2, "p is added to the first p × ε ratings" read as 1 each, which
// keeps the sum; the thesis's example has p = 1). ε = 0 gives every
// rating the rounded mean. Results are clamped to 1..max.
func ModifyIssueLiteral(x []int, eps, maxRating int) []int {
	n, s := len(x), 0
	for _, v := range x {
		s += v
	}
	f, r := s/n, s%n
	out := make([]int, n)
	for i := range out {
		out[i] = f
	}
	switch {
	case eps == 0:
		for i := range out {
			out[i] = int(math.Round(float64(s) / float64(n)))
		}
	case r == 0 && eps >= 2:
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return x[a] - x[b] })
		for rank, i := range idx {
			switch {
			case rank < n/2:
				out[i] = f - 1
			case n%2 == 1 && rank == n/2:
				out[i] = f
			default:
				out[i] = f + 1
			}
		}
	case r != 0 && r <= eps:
		out[0] = f + r
	case r != 0:
		p, q := r/eps, r%eps
		for i := range p * eps {
			out[i] = f + 1
		}
		out[n-1] = f + q
	}
	for i := range out {
		out[i] = min(max(out[i], 1), maxRating)
	}
	return out
}

// ModifyIssue is §6.3.4's modification of one issue's ratings in a group
// (all rated) to a range of at most eps, keeping their sum: with an integer
// mean f, the lower half f − 1 and the upper half f + 1 (the median f) when
// eps ≥ 2, else every rating f (cases 2.1.1–2.1.3; the thesis's "ε ≥ 1" for
// 2.1.1 is erratum E29); with a fractional mean f + r/n, the r largest
// ratings f + 1 and the others f (cases 2.2.x as the thesis's worked example
// resolves them). Issues already within eps are left alone (the "improved"
// mode: strictly less distortion). With eps 0 every rating becomes the
// rounded mean (the sum cannot be kept). Results are clamped to 1..max.
func ModifyIssue(x []int, eps, maxRating int) []int {
	lo, hi := slices.Min(x), slices.Max(x)
	if hi-lo <= eps {
		return slices.Clone(x)
	}
	n, s := len(x), 0
	for _, v := range x {
		s += v
	}
	f, r := s/n, s%n
	out := make([]int, n)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return x[b] - x[a] }) // largest first
	for rank, i := range idx {
		switch {
		case eps == 0:
			out[i] = int(math.Round(float64(s) / float64(n)))
		case r != 0 && rank < r:
			out[i] = f + 1
		case r != 0:
			out[i] = f
		case eps >= 2 && rank < n/2:
			out[i] = f + 1
		case eps >= 2 && n%2 == 1 && rank == n/2:
			out[i] = f
		case eps >= 2:
			out[i] = f - 1
		default:
			out[i] = f
		}
		out[i] = min(max(out[i], 1), maxRating)
	}
	return out
}

// Generate makes a seeded matrix of MovieLens 100K's shape (users, items,
// ratings; every user at least minPerUser ratings; item popularity falling
// as a power law; ratings 1..5 from an item mean, a user bias and noise),
// plus one sensitive issue rated by every user (1..5), the stand-in for the
// demographic the thesis treats as sensitive. It is not MovieLens: it has
// its shape.
func Generate(users, items, ratings, minPerUser int, seed uint64) *Matrix {
	rng := rand.New(rand.NewPCG(seed, 0x6d6c))
	m := &Matrix{Max: 5, Sensitive: make([]bool, items+1)}
	m.Sensitive[items] = true
	itemMean := make([]float64, items)
	weight := make([]float64, items)
	total := 0.0
	for i := range items {
		itemMean[i] = 2.5 + 1.5*rng.Float64()
		weight[i] = 1 / math.Pow(float64(i+1), 0.9)
		total += weight[i]
	}
	cum := make([]float64, items)
	acc := 0.0
	for i, w := range weight {
		acc += w / total
		cum[i] = acc
	}
	extra := ratings - users*minPerUser
	for range users {
		row := make([]int, items+1)
		bias := rng.NormFloat64() * 0.5
		want := minPerUser + int(float64(extra)/float64(users)*rng.ExpFloat64())
		for got := 0; got < want && got < items; {
			i, _ := slices.BinarySearch(cum, rng.Float64())
			i = min(i, items-1)
			if row[i] != 0 {
				continue
			}
			row[i] = min(5, max(1, int(math.Round(itemMean[i]+bias+rng.NormFloat64()*0.8))))
			got++
		}
		row[items] = 1 + rng.IntN(5)
		m.R = append(m.R, row)
	}
	return m
}

// QueryError is the thesis's utility measure (§6.4): over q random items
// (seeded) rated by someone in both matrices, the mean relative error of
// the item's average rating, |act − est| / act.
func QueryError(orig, anon *Matrix, q int, seed uint64) float64 {
	rng := rand.New(rand.NewPCG(seed, 0x7165))
	var items []int
	for i, s := range orig.Sensitive {
		if !s && avg(orig, i) > 0 && avg(anon, i) > 0 {
			items = append(items, i)
		}
	}
	if len(items) == 0 {
		return 0
	}
	e := 0.0
	for range q {
		i := items[rng.IntN(len(items))]
		act, est := avg(orig, i), avg(anon, i)
		e += math.Abs(act-est) / act
	}
	return e / float64(q)
}

func avg(m *Matrix, i int) float64 {
	s, n := 0, 0
	for _, row := range m.R {
		if x := row[i]; x > 0 {
			s += x
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(s) / float64(n)
}
