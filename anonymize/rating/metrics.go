package rating

import (
	"math"
	"math/rand/v2"
)

// The utility measures of §6.4 besides the query error (QueryError): the
// membership changing ratio of k-means clustering, the centroid
// comparison and the average standard deviation. All are over the
// non-sensitive issues; the thesis names them, these are our readings
// where it is silent (each doc says which).

// MembershipChange is the share of users whose k-means cluster differs
// between the original and the anonymised matrix, clustering both with
// the same c initial centres (the rows of c users drawn with seed, taken
// from each matrix) and the same number of clusters (§6.4: "keeping the
// same initial seeds and identical k"). Users are vectors of their
// non-sensitive ratings, a null counting 0 (the thesis does not say);
// Lloyd's iterations run until no user moves or for at most iters rounds.
// Cluster j of one run is compared with cluster j of the other, both
// grown from the same seed user.
func MembershipChange(orig, anon *Matrix, c, iters int, seed uint64) float64 {
	n := len(orig.R)
	if n == 0 || c < 1 || len(anon.R) != n {
		return 0
	}
	c = min(c, n)
	rng := rand.New(rand.NewPCG(seed, 0x6b6d))
	return membershipChange(orig, anon, rng.Perm(n)[:c], iters)
}

func membershipChange(orig, anon *Matrix, seeds []int, iters int) float64 {
	n := len(orig.R)
	a, b := orig.kmeans(seeds, iters), anon.kmeans(seeds, iters)
	moved := 0
	for u := range a {
		if a[u] != b[u] {
			moved++
		}
	}
	return float64(moved) / float64(n)
}

// sparse is a user's non-sensitive ratings as (issue, rating) pairs.
type sparse struct {
	issue []int
	value []float64
	norm2 float64
}

func (m *Matrix) sparseRows() []sparse {
	out := make([]sparse, len(m.R))
	for u, row := range m.R {
		for i, x := range row {
			if x > 0 && !m.Sensitive[i] {
				out[u].issue = append(out[u].issue, i)
				out[u].value = append(out[u].value, float64(x))
				out[u].norm2 += float64(x * x)
			}
		}
	}
	return out
}

// kmeans is Lloyd's algorithm from the given seed users' rows; it
// returns every user's cluster (ties to the lower cluster). Distances use
// ‖x − μ‖² = ‖x‖² − 2x·μ + ‖μ‖² over the sparse rows.
func (m *Matrix) kmeans(seeds []int, iters int) []int {
	rows := m.sparseRows()
	dim := len(m.Sensitive)
	mu := make([][]float64, len(seeds))
	for j, s := range seeds {
		mu[j] = make([]float64, dim)
		for p, i := range rows[s].issue {
			mu[j][i] = rows[s].value[p]
		}
	}
	assign := make([]int, len(rows))
	for u := range assign {
		assign[u] = -1
	}
	norm := make([]float64, len(mu))
	for it := 0; it < max(iters, 1); it++ {
		for j := range mu {
			norm[j] = 0
			for _, x := range mu[j] {
				norm[j] += x * x
			}
		}
		moved := false
		for u, r := range rows {
			best, bestD := 0, math.Inf(1)
			for j := range mu {
				dot := 0.0
				for p, i := range r.issue {
					dot += r.value[p] * mu[j][i]
				}
				if d := r.norm2 - 2*dot + norm[j]; d < bestD-1e-9 {
					best, bestD = j, d
				}
			}
			if assign[u] != best {
				assign[u], moved = best, true
			}
		}
		if !moved {
			break
		}
		count := make([]int, len(mu))
		for j := range mu {
			clear(mu[j])
		}
		for u, r := range rows {
			j := assign[u]
			count[j]++
			for p, i := range r.issue {
				mu[j][i] += r.value[p]
			}
		}
		for j := range mu {
			for i := range mu[j] {
				if count[j] > 0 {
					mu[j][i] /= float64(count[j])
				}
			}
		}
	}
	return assign
}

// Centroid is the average vector of §6.4's centroid comparison: every
// non-sensitive issue's mean non-null rating (0 for an issue nobody
// rated), in issue order.
func (m *Matrix) Centroid() []float64 {
	var out []float64
	for i, s := range m.Sensitive {
		if !s {
			out = append(out, avg(m, i))
		}
	}
	return out
}

// CentroidComparison is §6.4's "inner product of this vector with the
// result of the same operation on the anonymous data set", and, since an
// inner product alone has no scale, its cosine (1: the same direction)
// and the ratio of the anonymised centroid's inner product with itself to
// the original's (1: the same length).
func CentroidComparison(orig, anon *Matrix) (inner, cosine, selfRatio float64) {
	a, b := orig.Centroid(), anon.Centroid()
	var aa, bb float64
	for i := range a {
		inner += a[i] * b[i]
		aa += a[i] * a[i]
		bb += b[i] * b[i]
	}
	if aa == 0 || bb == 0 {
		return inner, 0, 0
	}
	return inner, inner / math.Sqrt(aa*bb), bb / aa
}

// AverageSD is §6.4's average standard deviation: the mean over
// non-sensitive issues of the standard deviation of their non-null
// ratings within each group (Eq. 6.3), over the issues and groups with at
// least two ratings; with groups nil, the whole matrix is one group.
// After Anonymise at ε it is at most ε/2 within its groups (Fig. 6.16(c):
// every issue's range in a group is at most ε, and a population standard
// deviation is at most half the range, Theorem 7.2).
func (m *Matrix) AverageSD(groups [][]int) float64 {
	if groups == nil {
		all := make([]int, len(m.R))
		for u := range all {
			all[u] = u
		}
		groups = [][]int{all}
	}
	sum, n := 0.0, 0
	for _, g := range groups {
		for i, s := range m.Sensitive {
			if s {
				continue
			}
			rated := 0
			for _, u := range g {
				if m.R[u][i] > 0 {
					rated++
				}
			}
			if rated >= 2 {
				sum += m.SD(g, i)
				n++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}
