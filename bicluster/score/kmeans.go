package score

import (
	"fmt"
	"math"

	"github.com/cohortdm/cohort/bicluster"
	"github.com/cohortdm/cohort/job"
)

// KMeans clusters m's rows into k clusters by Lloyd's algorithm from a
// k-means++ start drawn from seed (at most maxIter iterations, or until
// no row changes cluster) and returns each non-empty cluster as a
// bicluster of its rows × all columns: the paper's baseline (Table 1,
// K = 10).
func KMeans(m *bicluster.Matrix, k, maxIter int, seed []byte) ([]bicluster.Bicluster, error) {
	if err := m.Check(); err != nil {
		return nil, fmt.Errorf("kmeans: %w", err)
	}
	if k < 1 || maxIter < 1 {
		return nil, fmt.Errorf("kmeans: k %d, max iterations %d: %w", k, maxIter, bicluster.ErrParams)
	}
	k = min(k, m.Rows)
	rng := job.Rand(seed, "bicluster/kmeans")
	L := m.Cols
	cent := make([]float64, k*L)
	// k-means++: the first center uniformly, each next one with
	// probability proportional to the squared distance to the nearest.
	d2 := make([]float64, m.Rows)
	copy(cent, m.Row(rng.IntN(m.Rows)))
	for i := range d2 {
		d2[i] = math.Inf(1)
	}
	for c := 1; c < k; c++ {
		total := 0.0
		for r := range m.Rows {
			d2[r] = min(d2[r], dist2(m.Row(r), cent[(c-1)*L:c*L]))
			total += d2[r]
		}
		pick := m.Rows - 1
		if total > 0 {
			x := rng.Float64() * total
			for r := range m.Rows {
				if x -= d2[r]; x < 0 {
					pick = r
					break
				}
			}
		} else {
			pick = rng.IntN(m.Rows)
		}
		copy(cent[c*L:], m.Row(pick))
	}
	assign := make([]int, m.Rows)
	for i := range assign {
		assign[i] = -1
	}
	count := make([]int, k)
	for range maxIter {
		changed := false
		for r := range m.Rows {
			best, bd := 0, math.Inf(1)
			for c := range k {
				if d := dist2(m.Row(r), cent[c*L:(c+1)*L]); d < bd {
					best, bd = c, d
				}
			}
			if assign[r] != best {
				assign[r], changed = best, true
			}
		}
		if !changed {
			break
		}
		clear(count)
		sum := make([]float64, k*L)
		for r, c := range assign {
			count[c]++
			for j, x := range m.Row(r) {
				sum[c*L+j] += x
			}
		}
		for c := range k {
			if count[c] == 0 {
				continue // an empty cluster keeps its center
			}
			for j := range L {
				cent[c*L+j] = sum[c*L+j] / float64(count[c])
			}
		}
	}
	all := make([]int, L)
	for j := range all {
		all[j] = j
	}
	var out []bicluster.Bicluster
	for c := range k {
		var b bicluster.Bicluster
		for r, a := range assign {
			if a == c {
				b.Rows = append(b.Rows, r)
			}
		}
		if len(b.Rows) > 0 {
			b.Cols = all
			out = append(out, b)
		}
	}
	return out, nil
}

func dist2(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s
}
