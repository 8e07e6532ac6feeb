package kde

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The attack of Tan and Ng's section 4 (Lemmas 1 and 2, proved in their
// appendix) on distance-preserving perturbation, which motivates KDE
// resampling: two sites perturb their N×d data by one random orthogonal
// matrix R (the rotation of Oliveira and Zaïane; Liu, Kargupta and Ryan's
// random projection is orthogonal in expectation), so Y1ᵀY2 = X1ᵀX2. A
// server in league with site 2, which knows its own column norms, bounds
// every column norm of site 1 (Lemma 1: ‖x1‖ ≥ γ1 = y1ᵀy2/‖x2‖ by
// Cauchy–Schwarz) and, knowing all of a column of site 1 but one value,
// bounds that value (Lemma 2: |x1,q| ≥ γ2 = √(γ1² − Σ_{k≠q} x1,k²)).

// sortedSites are two sites' (age, hours) rows, each stored in order of
// age, as a table kept sorted by a key is: the order the perturbation
// preserves and resampling does not.
var sortedSites = [2][][]float64{
	{{23, 40}, {25, 38}, {31, 45}, {38, 40}, {44, 50}, {52, 42}, {60, 35}, {90, 10}},
	{{22, 35}, {26, 40}, {30, 40}, {37, 48}, {45, 45}, {51, 40}, {61, 30}, {88, 12}},
}

// orthogonal is a random n×n orthogonal matrix: Gram–Schmidt over
// Gaussian rows.
func orthogonal(n int, rng *rand.Rand) [][]float64 {
	q := make([][]float64, n)
	for i := range q {
		v := make([]float64, n)
		for j := range v {
			v[j] = rng.NormFloat64()
		}
		for _, u := range q[:i] {
			d := dot(v, u)
			for j := range v {
				v[j] -= d * u[j]
			}
		}
		norm := math.Sqrt(dot(v, v))
		for j := range v {
			v[j] /= norm
		}
		q[i] = v
	}
	return q
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// column is column i of rows.
func column(rows [][]float64, i int) []float64 {
	out := make([]float64, len(rows))
	for j, r := range rows {
		out[j] = r[i]
	}
	return out
}

// rotate is R·X.
func rotate(r, x [][]float64) [][]float64 {
	out := make([][]float64, len(r))
	for i, ri := range r {
		out[i] = make([]float64, len(x[0]))
		for c := range out[i] {
			out[i][c] = dot(ri, column(x, c))
		}
	}
	return out
}

// gammas are the attacker's bounds on column i of site 1 from the
// released y1, y2 and site 2's own x2 (same column): γ1 on its norm
// (Lemma 1) and γ2 on the value at row q, the others known (Lemma 2).
func gammas(y1, y2, x1, x2 [][]float64, i, q int) (g1, g2 float64) {
	c2 := column(x2, i)
	g1 = dot(column(y1, i), column(y2, i)) / math.Sqrt(dot(c2, c2))
	rest := g1 * g1
	for k, x := range column(x1, i) {
		if k != q {
			rest -= x * x
		}
	}
	return g1, math.Sqrt(max(0, rest))
}

// TestAttackOnDistancePreserving: under rotation, Lemma 1's γ1 bounds
// every column norm of site 1 and Lemma 2's γ2 pins site 1's oldest age
// (90) to within one year, for every one of 50 random rotations. Under KDE
// resampling of the same rows (Algorithm 1, M = N), the same computation
// on the published samples tells almost nothing: the draws keep no order,
// so y1ᵀy2 no longer tracks x1ᵀx2, and γ2 falls below half the age in
// most runs. Jitter that keeps the order (each row plus the same kernel
// noise, no resampling) still gives the attack most of the age: it is the
// resampling, not the noise, that defeats it.
func TestAttackOnDistancePreserving(t *testing.T) {
	x1, x2 := sortedSites[0], sortedSites[1]
	const q, runs = 7, 50
	rng := rand.New(rand.NewPCG(13, 14))
	for range runs {
		r := orthogonal(len(x1), rng)
		y1, y2 := rotate(r, x1), rotate(r, x2)
		for i := range x1[0] {
			c := column(x1, i)
			if g1, _ := gammas(y1, y2, x1, x2, i, q); g1 > math.Sqrt(dot(c, c))+1e-9 || g1 <= 0 {
				t.Fatalf("column %d: γ1 %v does not bound its norm %v", i, g1, math.Sqrt(dot(c, c)))
			}
		}
		if _, g2 := gammas(y1, y2, x1, x2, 0, q); g2 > x1[q][0]+1e-9 || g2 < x1[q][0]-1 {
			t.Fatalf("rotation: γ2 %v, the age %v", g2, x1[q][0])
		}
	}
	h1, h2 := Bandwidths(x1), Bandwidths(x2)
	var resampled, jittered []float64
	for range runs {
		_, g := gammas(Resample(x1, h1, len(x1), rng), Resample(x2, h2, len(x2), rng), x1, x2, 0, q)
		resampled = append(resampled, g)
		_, g = gammas(jitter(x1, h1, rng), jitter(x2, h2, rng), x1, x2, 0, q)
		jittered = append(jittered, g)
	}
	slices.Sort(resampled)
	slices.Sort(jittered)
	t.Logf("γ2 on the age %v over %d runs, median (quartiles): resampled %.1f (%.1f, %.1f), jittered in order %.1f (%.1f, %.1f)",
		x1[q][0], runs, resampled[runs/2], resampled[runs/4], resampled[3*runs/4], jittered[runs/2], jittered[runs/4], jittered[3*runs/4])
	if resampled[runs/2] > x1[q][0]/2 {
		t.Errorf("resampled: median γ2 %v, above half the age %v", resampled[runs/2], x1[q][0])
	}
	if jittered[runs/2] < x1[q][0]/2 {
		t.Errorf("jittered in order: median γ2 %v, the attack should still find most of the age %v", jittered[runs/2], x1[q][0])
	}
}

// jitter is each row in its place plus kernel noise: Algorithm 1 without
// the random choice of row.
func jitter(rows [][]float64, h []float64, rng *rand.Rand) [][]float64 {
	out := make([][]float64, len(rows))
	for j, r := range rows {
		out[j] = make([]float64, len(h))
		for i := range h {
			out[j][i] = r[i] + h[i]*Epanechnikov(rng)
		}
	}
	return out
}
