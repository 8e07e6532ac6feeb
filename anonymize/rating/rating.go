// Package rating is the anonymisation of survey-rating data of Sun's thesis
// (X. Sun, "Privacy Preserving Data Sharing in Data Mining Environment",
// University of Southern Queensland, 2010, chs. 6–7): a sparse matrix of
// ratings 1..r (0 for none), some issues sensitive; (k, ε)-anonymity (every
// record ε-proximate, Eq. 6.1 under L∞, to at least k − 1 others) and
// (k, ε, l)-anonymity (and the sensitive ratings' standard deviation at
// least l in every group); the satisfaction check by slicing (ch. 7, Alg.
// 1, with the thesis's errata fixed) against the pairwise baseline; and an
// anonymiser that groups records and modifies their ratings so that every
// group is an ε-clique (ch. 6, §6.3.4's sum-preserving modification),
// with l > 0 (k, ε, l)-anonymous; the ε-graph of §6.3.2 with the degree
// check of Theorem 6.1 (and its l side), maxsize (Def. 7.1) and
// k-decomposability; the ε search for k and for l (§§7.2.3–7.2.4); and
// the utility measures of §6.4.
//
// Start with Matrix and Dis (this file), then Slice and EpsilonFor
// (slicing.go), Graph, DegreeCheck and KDecompose (graph.go,
// decompose.go), Anonymise (anonymise.go) and the measures (metrics.go).
// It is a library for one publisher: nothing here sends anything;
// `cohort data rating` is its command.
package rating

import (
	"errors"
	"fmt"
	"math"
)

// Errors callers may tell apart with errors.Is.
var (
	// ErrInput marks a bad matrix or parameter.
	ErrInput = errors.New("rating: invalid input")
	// ErrNoSolution marks a requirement no ε or grouping can meet.
	ErrNoSolution = errors.New("rating: no solution")
)

// Matrix is a survey-rating table: R[u][i] is user u's rating of issue i,
// 1..Max, or 0 for none; Sensitive[i] marks the sensitive issues.
type Matrix struct {
	R         [][]int
	Sensitive []bool
	Max       int
}

// Check verifies the matrix's shape and ratings.
func (m *Matrix) Check() error {
	if m.Max < 1 {
		return fmt.Errorf("%w: the maximum rating must be at least 1", ErrInput)
	}
	for u, row := range m.R {
		if len(row) != len(m.Sensitive) {
			return fmt.Errorf("%w: user %d has %d issues, the matrix %d", ErrInput, u, len(row), len(m.Sensitive))
		}
		for _, x := range row {
			if x < 0 || x > m.Max {
				return fmt.Errorf("%w: user %d has a rating outside 0..%d", ErrInput, u, m.Max)
			}
		}
	}
	return nil
}

// Dis is the dissimilarity of two records on the non-sensitive issues
// (Eq. 6.1, taken over issues by L∞ as Def. 6.1 asks): |a − b| for two
// ratings, 0 for two nulls, Max for a rating against a null.
func (m *Matrix) Dis(a, b int) int {
	d := 0
	for i, s := range m.Sensitive {
		if s {
			continue
		}
		x, y := m.R[a][i], m.R[b][i]
		var e int
		switch {
		case x == 0 && y == 0:
		case x == 0 || y == 0:
			e = m.Max
		default:
			e = abs(x - y)
		}
		d = max(d, e)
	}
	return d
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// SD is the population standard deviation of issue i's ratings among the
// users (Eq. 6.3), nulls skipped in the mean and the sum alike (the
// thesis's formula mixes them); fewer than two ratings give 0.
func (m *Matrix) SD(users []int, i int) float64 {
	var xs []float64
	for _, u := range users {
		if x := m.R[u][i]; x > 0 {
			xs = append(xs, float64(x))
		}
	}
	if len(xs) < 2 {
		return 0
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	s := 0.0
	for _, x := range xs {
		s += (x - mean) * (x - mean)
	}
	return math.Sqrt(s / float64(len(xs)))
}

// Satisfies reports whether a partition of the users into groups makes the
// matrix (k, ε, l)-anonymous in the partition sense: every group has at
// least k users, all pairwise ε-proximate, and every sensitive issue's
// standard deviation in it at least l (l = 0: (k, ε) only).
func (m *Matrix) Satisfies(groups [][]int, k, eps int, l float64) bool {
	for _, g := range groups {
		if len(g) < k {
			return false
		}
		for x := range g {
			for y := x + 1; y < len(g); y++ {
				if m.Dis(g[x], g[y]) > eps {
					return false
				}
			}
		}
		for i, s := range m.Sensitive {
			if s && l > 0 && m.SD(g, i) < l {
				return false
			}
		}
	}
	return true
}

// Degree is the check of Thm. 6.1 (the degree semantics of Def. 6.2): the
// smallest closed ε-neighbourhood over all users, by comparing every pair
// (O(n²·m)); the matrix is (k, ε)-anonymous iff it is at least k.
func (m *Matrix) Degree(eps int) int {
	n := len(m.R)
	deg := make([]int, n)
	for a := range n {
		for b := a + 1; b < n; b++ {
			if m.Dis(a, b) <= eps {
				deg[a]++
				deg[b]++
			}
		}
	}
	least := n
	for _, d := range deg {
		least = min(least, d+1)
	}
	return least
}
