package anonymize

import (
	"fmt"
	"math"
	"slices"
)

// Approximate microaggregation (Sun's thesis, ch. 5, after Domingo-Ferrer
// and Torra's MDAV): the variation of information between attributes
// (Def. 4.1), the dependency tree (its minimum spanning tree, Alg. 1), the
// key attributes (Defs. 5.2–5.3), and MDAV, which groups the records in
// at least k and replaces every record's quasi-identifiers by its group's
// centroid. Grouping on the key attributes only is the thesis's AMA; every
// quasi-identifier is still replaced (without that, k-anonymity fails).

// VI is the variation of information of two columns, H(A|B) + H(B|A) =
// 2H(A,B) − H(A) − H(B), in bits: the thesis's "mutual information
// measure" (Def. 4.1), a distance (0 when one column determines the other).
func VI(a, b []string) float64 {
	return 2*jointEntropy(a, b) - columnEntropy(a) - columnEntropy(b)
}

func columnEntropy(a []string) float64 {
	count := map[string]int{}
	for _, v := range a {
		count[v]++
	}
	return entropyOf(count, len(a))
}

func jointEntropy(a, b []string) float64 {
	count := map[[2]string]int{}
	for i := range a {
		count[[2]string{a[i], b[i]}]++
	}
	return entropyOf(count, len(a))
}

func entropyOf[K comparable](count map[K]int, n int) float64 {
	cs := make([]int, 0, len(count))
	for _, c := range count {
		cs = append(cs, c)
	}
	slices.Sort(cs) // summation order fixed: deterministic result
	return Entropy(cs)
}

// VIMatrix is the independency (dependency) matrix D_T = (VI(A_i, A_j))
// of the columns (Defs. 4.2, 5.1).
func VIMatrix(cols [][]string) [][]float64 {
	m := make([][]float64, len(cols))
	for i := range m {
		m[i] = make([]float64, len(cols))
	}
	for i := range cols {
		for j := i + 1; j < len(cols); j++ {
			m[i][j] = VI(cols[i], cols[j])
			m[j][i] = m[i][j]
		}
	}
	return m
}

// Edge is an edge of the dependency tree.
type Edge struct {
	I, J   int
	Weight float64
}

// DependencyTree is the minimum spanning tree of the VI matrix by Kruskal
// (Alg. 1): edges by weight, ties (within 1e-12) by (i, j), each added
// unless it closes a cycle.
func DependencyTree(vi [][]float64) []Edge {
	var edges []Edge
	for i := range vi {
		for j := i + 1; j < len(vi); j++ {
			edges = append(edges, Edge{i, j, vi[i][j]})
		}
	}
	slices.SortStableFunc(edges, func(a, b Edge) int {
		if math.Abs(a.Weight-b.Weight) > 1e-12 {
			return cmpFloat(a.Weight, b.Weight)
		}
		if a.I != b.I {
			return a.I - b.I
		}
		return a.J - b.J
	})
	parent := make([]int, len(vi))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	var tree []Edge
	for _, e := range edges {
		if a, b := find(e.I), find(e.J); a != b {
			parent[a] = b
			tree = append(tree, e)
		}
	}
	return tree
}

// KeyAttributes selects the key attributes of a dependency tree over m
// attributes (Defs. 5.2–5.3): vertices by degree, descending (ties by
// index), the shortest prefix whose degrees sum to at least m.
func KeyAttributes(tree []Edge, m int) []int {
	deg := make([]int, m)
	for _, e := range tree {
		deg[e.I]++
		deg[e.J]++
	}
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return deg[b] - deg[a] })
	var keys []int
	sum := 0
	for _, v := range order {
		if sum >= m {
			break
		}
		keys = append(keys, v)
		sum += deg[v]
	}
	slices.Sort(keys)
	return keys
}

// MDAVVariant says how MDAV ends.
type MDAVVariant int

const (
	// MDAVStandard is Domingo-Ferrer and Torra's: two groups while at
	// least 3k records remain; with 2k to 3k−1, one more group and the
	// rest; under 2k, the rest as one group.
	MDAVStandard MDAVVariant = iota
	// MDAVThesis is Sun's Alg. 2 with step 6 corrected ("between k and
	// 2k − 1"): two groups while at least 2k remain after them; then the
	// rest as a group if it has k, else added to the group whose centroid
	// is closest to the rest's.
	MDAVThesis
)

// MDAV groups the records (rows of x, each a point) into groups of at
// least k by maximum distance to average vector, with Euclidean distance.
func MDAV(x [][]float64, k int, variant MDAVVariant) ([][]int, error) {
	n := len(x)
	if k < 1 || k > n {
		return nil, fmt.Errorf("%w: k = %d with %d records", ErrRequirement, k, n)
	}
	rest := make([]int, n)
	for i := range rest {
		rest[i] = i
	}
	var groups [][]int
	take := func(r int) {
		g := nearest(x, rest, r, k)
		groups = append(groups, g)
		rest = remove(rest, g)
	}
	for {
		switch {
		case variant == MDAVStandard && len(rest) >= 3*k, variant == MDAVThesis && len(rest) >= 2*k:
			// s is chosen only once r's group is out: with ties the
			// record farthest from r can be in r's own group.
			r := farthest(x, rest, centroid(x, rest))
			take(r)
			take(farthest(x, rest, x[r]))
			continue
		case variant == MDAVStandard && len(rest) >= 2*k:
			take(farthest(x, rest, centroid(x, rest)))
		}
		break
	}
	switch {
	case len(rest) >= k || len(groups) == 0:
		groups = append(groups, rest)
	case len(rest) > 0:
		c := centroid(x, rest)
		best, bestD := 0, math.Inf(1)
		for i, g := range groups {
			if d := dist2(centroid(x, g), c); d < bestD {
				best, bestD = i, d
			}
		}
		groups[best] = append(groups[best], rest...)
	}
	return groups, nil
}

func centroid(x [][]float64, rows []int) []float64 {
	c := make([]float64, len(x[rows[0]]))
	for _, r := range rows {
		for j, v := range x[r] {
			c[j] += v
		}
	}
	for j := range c {
		c[j] /= float64(len(rows))
	}
	return c
}

func dist2(a, b []float64) float64 {
	s := 0.0
	for j := range a {
		d := a[j] - b[j]
		s += d * d
	}
	return s
}

// farthest is the row of rows farthest from p (ties to the first).
func farthest(x [][]float64, rows []int, p []float64) int {
	best, bestD := rows[0], -1.0
	for _, r := range rows {
		if d := dist2(x[r], p); d > bestD {
			best, bestD = r, d
		}
	}
	return best
}

// nearest is r and the k−1 other rows of rows nearest to it (ties to the
// earlier row), kept in a sorted buffer of k−1: O(|rows|·k).
func nearest(x [][]float64, rows []int, r, k int) []int {
	type rd struct {
		r int
		d float64
	}
	best := make([]rd, 0, k)
	for _, o := range rows {
		if o == r {
			continue
		}
		d := dist2(x[o], x[r])
		if len(best) == k-1 && (k == 1 || d >= best[k-2].d) {
			continue
		}
		i := len(best)
		if len(best) < k-1 {
			best = append(best, rd{})
		} else {
			i = k - 2
		}
		for i > 0 && best[i-1].d > d {
			best[i] = best[i-1]
			i--
		}
		best[i] = rd{o, d}
	}
	g := []int{r}
	for _, b := range best {
		g = append(g, b.r)
	}
	return g
}

func remove(rows, g []int) []int {
	drop := make(map[int]bool, len(g))
	for _, r := range g {
		drop[r] = true
	}
	out := rows[:0:0]
	for _, r := range rows {
		if !drop[r] {
			out = append(out, r)
		}
	}
	return out
}

// Microaggregate replaces every record's values (x, all quasi-identifiers)
// by its group's centroid and returns the new values with SSE and SST
// (Sun Eq. 5.1: within-group and total sums of squares; SSE/SST is the
// information loss). The groups must partition the records: a record in
// two groups would be published with one centroid and counted in both.
func Microaggregate(x [][]float64, groups [][]int) (out [][]float64, sse, sst float64, err error) {
	if err := checkPartition(groups, len(x)); err != nil {
		return nil, 0, 0, err
	}
	out = make([][]float64, len(x))
	all := make([]int, len(x))
	for i := range all {
		all[i] = i
	}
	g0 := centroid(x, all)
	for _, g := range groups {
		c := centroid(x, g)
		for _, r := range g {
			out[r] = c
			sse += dist2(x[r], c)
		}
	}
	for _, row := range x {
		sst += dist2(row, g0)
	}
	return out, sse, sst, nil
}

// checkPartition says whether the groups are non-empty, disjoint and
// cover the records 0..n−1.
func checkPartition(groups [][]int, n int) error {
	seen := make([]bool, n)
	for i, g := range groups {
		if len(g) == 0 {
			return fmt.Errorf("%w: group %d is empty", ErrRequirement, i)
		}
		for _, r := range g {
			switch {
			case r < 0 || r >= n:
				return fmt.Errorf("%w: group %d has record %d of %d", ErrRequirement, i, r, n)
			case seen[r]:
				return fmt.Errorf("%w: record %d is in two groups", ErrRequirement, r)
			}
			seen[r] = true
		}
	}
	if i := slices.Index(seen, false); i >= 0 {
		return fmt.Errorf("%w: record %d is in no group", ErrRequirement, i)
	}
	return nil
}

// Standardise returns the columns as z-scores (mean 0, standard deviation
// 1; a constant column stays 0), the scale MDAV's distances need.
func Standardise(x [][]float64) [][]float64 {
	if len(x) == 0 {
		return nil
	}
	d := len(x[0])
	mean, sd := make([]float64, d), make([]float64, d)
	for _, row := range x {
		for j, v := range row {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(len(x))
	}
	for _, row := range x {
		for j, v := range row {
			sd[j] += (v - mean[j]) * (v - mean[j])
		}
	}
	out := make([][]float64, len(x))
	for i, row := range x {
		out[i] = make([]float64, d)
		for j, v := range row {
			if s := math.Sqrt(sd[j] / float64(len(x))); s > 0 {
				out[i][j] = (v - mean[j]) / s
			}
		}
	}
	return out
}
