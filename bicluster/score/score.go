// Package score measures biclustering results against implanted
// biclusters, and gives the k-means baseline of the Phoenix experiments
// (Ahmad and Khokhar, "Phoenix", PinKDD 2007, §5.2).
//
//   - Match is the match score of Prelić et al. as Phoenix §5.2 prints it:
//     S(M1, M2) = 1/|M1| Σ_{(I1,J1)∈M1} max_{(I2,J2)∈M2}
//     |I1∩I2|·|J1∩J2| / (|I1∪I2|·|J1∪J2|).
//     S(Mopt, M) says how well each implanted bicluster was found; extra
//     output biclusters do not lower it.
//   - Consensus is scikit-learn's consensus_score: the Jaccard index of
//     two biclusters' cell sets, |cells∩| / (|cells1| + |cells2| − |cells∩|),
//     the best one-to-one pairing of the two sets (Hungarian algorithm), and
//     the sum of the paired similarities divided by the size of the larger
//     set; extra or missing biclusters lower it.
//   - KMeans clusters rows with K-means (K = 10 in the paper's Table 1) and
//     reports each cluster as its rows × all columns (the paper does not
//     say which columns a k-means cluster has).
package score

import (
	"math"

	"github.com/cohortdm/cohort/bicluster"
)

// Match is the match score S(m1, m2) (see the package doc); 0 when m2 is
// empty, and 0 when m1 is empty.
func Match(m1, m2 []bicluster.Bicluster) float64 {
	if len(m1) == 0 {
		return 0
	}
	total := 0.0
	for _, a := range m1 {
		best := 0.0
		for _, b := range m2 {
			ui := union(a.Rows, b.Rows)
			uj := union(a.Cols, b.Cols)
			if ui == 0 || uj == 0 {
				continue
			}
			s := float64(bicluster.Common(a.Rows, b.Rows)*bicluster.Common(a.Cols, b.Cols)) / float64(ui*uj)
			best = max(best, s)
		}
		total += best
	}
	return total / float64(len(m1))
}

// Jaccard is the Jaccard index of two biclusters' cell sets.
func Jaccard(a, b bicluster.Bicluster) float64 {
	in := bicluster.Common(a.Rows, b.Rows) * bicluster.Common(a.Cols, b.Cols)
	u := a.Cells() + b.Cells() - in
	if u == 0 {
		return 0
	}
	return float64(in) / float64(u)
}

// Consensus is scikit-learn's consensus score of two sets of biclusters
// (see the package doc): 1 for identical sets, 0 when either is empty.
func Consensus(a, b []bicluster.Bicluster) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	sim := make([][]float64, len(a))
	for i := range a {
		sim[i] = make([]float64, len(b))
		for j := range b {
			sim[i][j] = Jaccard(a[i], b[j])
		}
	}
	total := 0.0
	for i, j := range Assign(sim) {
		if j >= 0 {
			total += sim[i][j]
		}
	}
	return total / float64(max(len(a), len(b)))
}

// Assign solves the assignment problem: it pairs rows with columns of the
// rectangular matrix w, each at most once, maximising the sum of the
// paired weights, and returns for each row its column (−1 for a row left
// unpaired when w has more rows than columns). It is the Hungarian
// algorithm with potentials (O(n³)) on the square matrix padded with 0s.
func Assign(w [][]float64) []int {
	rows := len(w)
	if rows == 0 {
		return nil
	}
	cols := len(w[0])
	n := max(rows, cols)
	// cost[i][j] = −w (minimisation), 1-based with potentials u, v.
	cost := func(i, j int) float64 {
		if i <= rows && j <= cols {
			return -w[i-1][j-1]
		}
		return 0
	}
	u := make([]float64, n+1)
	v := make([]float64, n+1)
	p := make([]int, n+1) // p[j]: row matched to column j
	way := make([]int, n+1)
	for i := 1; i <= n; i++ {
		p[0] = i
		j0 := 0
		minv := make([]float64, n+1)
		used := make([]bool, n+1)
		for j := range minv {
			minv[j] = math.Inf(1)
		}
		for {
			used[j0] = true
			i0, delta, j1 := p[j0], math.Inf(1), 0
			for j := 1; j <= n; j++ {
				if used[j] {
					continue
				}
				if cur := cost(i0, j) - u[i0] - v[j]; cur < minv[j] {
					minv[j], way[j] = cur, j0
				}
				if minv[j] < delta {
					delta, j1 = minv[j], j
				}
			}
			for j := 0; j <= n; j++ {
				if used[j] {
					u[p[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if p[j0] == 0 {
				break
			}
		}
		for j0 != 0 {
			j1 := way[j0]
			p[j0] = p[j1]
			j0 = j1
		}
	}
	out := make([]int, rows)
	for i := range out {
		out[i] = -1
	}
	for j := 1; j <= n; j++ {
		if i := p[j]; i >= 1 && i <= rows && j <= cols {
			out[i-1] = j - 1
		}
	}
	return out
}

// union counts the elements of two ascending slices together.
func union(a, b []int) int { return len(a) + len(b) - bicluster.Common(a, b) }
