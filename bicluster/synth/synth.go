// Package synth generates the synthetic biclustering data of the Phoenix
// experiments (Ahmad and Khokhar, "Phoenix", PinKDD 2007, §5.2, after Liu
// and Wang) and a
// shifted-constant generator with Gaussian noise in the style of
// scikit-learn's make_biclusters, and splits a matrix's rows over parties
// (a horizontal partition) as CSV tables with an id column, the layout of
// the bicluster job's tables.
//
// Every generator is deterministic for its seed (job.Rand streams, so the
// same seed bytes a job uses can regenerate its data) and returns the
// implanted biclusters with the matrix.
package synth

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/cohortdm/cohort/bicluster"
	"github.com/cohortdm/cohort/job"
)

// ErrParams is returned for invalid generator parameters.
var ErrParams = errors.New("synth: bad parameters")

// Constant configures the paper's generator: a Rows × Cols matrix of 0s
// with K implanted BRows × BCols biclusters of 1s, then Noise·Rows·Cols
// distinct cells replaced by a random 0 or 1.
type Constant struct {
	Rows, Cols   int
	K            int
	BRows, BCols int
	// Noise is γ, the fraction of cells replaced (0 to 0.25 in the paper).
	Noise float64
	// Overlap places each bicluster on random rows and columns, so
	// biclusters may overlap; otherwise they are disjoint diagonal blocks
	// under a random row and column permutation.
	Overlap bool
}

// Paper is the paper's setting: 100×100, ten 10×10 biclusters, noise γ.
func Paper(noise float64) Constant {
	return Constant{Rows: 100, Cols: 100, K: 10, BRows: 10, BCols: 10, Noise: noise}
}

// Generate draws the matrix and its implanted biclusters from seed.
func (g Constant) Generate(seed []byte) (*bicluster.Matrix, []bicluster.Bicluster, error) {
	switch {
	case g.Rows < 1 || g.Cols < 1 || g.K < 1 || g.BRows < 1 || g.BCols < 1:
		return nil, nil, fmt.Errorf("%w: sizes %d×%d, %d biclusters of %d×%d", ErrParams, g.Rows, g.Cols, g.K, g.BRows, g.BCols)
	case !g.Overlap && (g.K*g.BRows > g.Rows || g.K*g.BCols > g.Cols):
		return nil, nil, fmt.Errorf("%w: %d disjoint %d×%d biclusters do not fit in %d×%d", ErrParams, g.K, g.BRows, g.BCols, g.Rows, g.Cols)
	case g.BRows > g.Rows || g.BCols > g.Cols:
		return nil, nil, fmt.Errorf("%w: a %d×%d bicluster does not fit in %d×%d", ErrParams, g.BRows, g.BCols, g.Rows, g.Cols)
	case !(g.Noise >= 0 && g.Noise <= 1):
		return nil, nil, fmt.Errorf("%w: noise %v, want in [0, 1]", ErrParams, g.Noise)
	}
	rng := job.Rand(seed, "bicluster/synth/constant")
	m := newMatrix(g.Rows, g.Cols)
	var bs []bicluster.Bicluster
	rowPerm, colPerm := rng.Perm(g.Rows), rng.Perm(g.Cols)
	for k := range g.K {
		var b bicluster.Bicluster
		if g.Overlap {
			b.Rows, b.Cols = rng.Perm(g.Rows)[:g.BRows], rng.Perm(g.Cols)[:g.BCols]
		} else {
			b.Rows = rowPerm[k*g.BRows : (k+1)*g.BRows]
			b.Cols = colPerm[k*g.BCols : (k+1)*g.BCols]
		}
		b.Rows, b.Cols = sorted(b.Rows), sorted(b.Cols)
		for _, r := range b.Rows {
			for _, c := range b.Cols {
				m.Data[r*m.Cols+c] = 1
			}
		}
		b.Mean = 1
		bs = append(bs, b)
	}
	cells := int(math.Round(g.Noise * float64(g.Rows*g.Cols)))
	for _, i := range sample(rng, g.Rows*g.Cols, cells) {
		m.Data[i] = float64(rng.IntN(2))
	}
	return m, bs, nil
}

// Shifted configures the shifted-constant generator (like scikit-learn's
// make_biclusters): rows and columns are each assigned uniformly at
// random to one of K groups (every group at least MinSize strong); the
// cells of row group k × column group k are shifted from the background 0
// by a constant drawn uniformly from [MinVal, MaxVal]; every cell gets
// Gaussian noise N(0, Noise²). The random assignment already scatters
// each group over the matrix, as make_biclusters' shuffle does.
type Shifted struct {
	Rows, Cols, K  int
	Noise          float64
	MinVal, MaxVal float64
	MinSize        int
}

// Sklearn is the 300×300, 5-bicluster setting with shifts in [10, 100]
// and noise standard deviation sigma.
func Sklearn(sigma float64) Shifted {
	return Shifted{Rows: 300, Cols: 300, K: 5, Noise: sigma, MinVal: 10, MaxVal: 100, MinSize: 10}
}

// Generate draws the matrix and its implanted biclusters from seed.
func (g Shifted) Generate(seed []byte) (*bicluster.Matrix, []bicluster.Bicluster, error) {
	switch {
	case g.K < 1 || g.MinSize < 1 || g.Rows < g.K*g.MinSize || g.Cols < g.K*g.MinSize:
		return nil, nil, fmt.Errorf("%w: %d×%d cannot hold %d groups of at least %d", ErrParams, g.Rows, g.Cols, g.K, g.MinSize)
	case !(g.Noise >= 0) || math.IsInf(g.Noise, 0):
		return nil, nil, fmt.Errorf("%w: noise %v", ErrParams, g.Noise)
	case !(g.MinVal <= g.MaxVal) || math.IsInf(g.MinVal, 0) || math.IsInf(g.MaxVal, 0):
		return nil, nil, fmt.Errorf("%w: shifts in [%v, %v]", ErrParams, g.MinVal, g.MaxVal)
	}
	rng := job.Rand(seed, "bicluster/synth/shifted")
	rowGroup := groups(rng, g.Rows, g.K, g.MinSize)
	colGroup := groups(rng, g.Cols, g.K, g.MinSize)
	m := newMatrix(g.Rows, g.Cols)
	bs := make([]bicluster.Bicluster, g.K)
	for k := range bs {
		bs[k].Mean = g.MinVal + rng.Float64()*(g.MaxVal-g.MinVal)
	}
	for r := range g.Rows {
		for c := range g.Cols {
			v := rng.NormFloat64() * g.Noise
			if rowGroup[r] == colGroup[c] {
				v += bs[rowGroup[r]].Mean
			}
			m.Data[r*g.Cols+c] = v
		}
	}
	for r, k := range rowGroup {
		bs[k].Rows = append(bs[k].Rows, r)
	}
	for c, k := range colGroup {
		bs[k].Cols = append(bs[k].Cols, c)
	}
	return m, bs, nil
}

// groups assigns n items to k groups uniformly at random, redrawing until
// every group has at least min items.
func groups(rng *rand.Rand, n, k, min int) []int {
	g := make([]int, n)
	count := make([]int, k)
	for {
		clear(count)
		for i := range g {
			g[i] = rng.IntN(k)
			count[g[i]]++
		}
		if slices.Min(count) >= min {
			return g
		}
	}
}

// sample draws k distinct integers from [0, n) (partial Fisher–Yates).
func sample(rng *rand.Rand, n, k int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	for i := range k {
		j := i + rng.IntN(n-i)
		idx[i], idx[j] = idx[j], idx[i]
	}
	return idx[:k]
}

func sorted(s []int) []int {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// newMatrix is a rows × cols matrix of zeros with columns c0, c1, … and
// row ids 0, 1, …
func newMatrix(rows, cols int) *bicluster.Matrix {
	m := &bicluster.Matrix{Rows: rows, Cols: cols, Data: make([]float64, rows*cols),
		ColNames: make([]string, cols), RowIDs: make([]string, rows)}
	for c := range cols {
		m.ColNames[c] = fmt.Sprintf("c%d", c)
	}
	for r := range rows {
		m.RowIDs[r] = fmt.Sprint(r)
	}
	return m
}
