// Package attack is the disclosure harness of Bu, Lakshmanan, Ng and
// Ramesh, "Preservation of Patterns and Input-Output Privacy" (§3 and §6):
// a hacker who holds a recoded table (and the tree mined from it) and some
// prior knowledge guesses original values, and three measures say how
// much he gets right. It is an experiment, not a defence: package
// transform's figures (docs/transform.md) run it on the data we have.
//
// Start with KnowledgePoints and Fit (Definitions 4 and 5: good and bad
// knowledge points; a regression line, a polyline or a natural cubic
// spline through them), Sorting (the sorting attack of §3) and
// SortingProb (its crack probability, §5.4); then the measures: Cracked
// and Share (domain disclosure, Definition 1), SubspaceRisk (subspace
// association, Definition 2), Paths (pattern disclosure, Definition 3),
// Combine (the combination attack of §6.2.2) and Median (each figure is
// the median of repeated trials).
//
// Decisions where the paper is silent (the research notes' list):
// knowledge points sit at distinct random recoded values, a good one off
// by U[−ρ, ρ], a bad one by U(5ρ, 10ρ] either way; the ignorant hacker
// (no knowledge point) takes recoded values at face value; one knowledge
// point gives a line of slope 1 through it; the polyline extends its end
// segments; the spline is natural (linear beyond the end points); the
// subspace risk counts rows, with repeats.
package attack

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/cohortdm/cohort/transform"
)

// Point is a knowledge point (Definition 4): the hacker believes that
// recoded value Image is original value Orig.
type Point struct{ Image, Orig float64 }

// KnowledgePoints draws good and bad knowledge points for column c at
// distinct random values of its recoded domain: a good point lies within
// rho of the truth, a bad one more than 5·rho from it (§6.1).
func KnowledgePoints(c *transform.ColumnKey, good, bad int, rho float64, rng *rand.Rand) []Point {
	n := len(c.Values)
	idx := rng.Perm(n)[:min(n, good+bad)]
	out := make([]Point, len(idx))
	for k, i := range idx {
		off := rho * (2*rng.Float64() - 1)
		if k >= good {
			off = rho * (5 + 5*(1-rng.Float64()))
			if rng.IntN(2) == 0 {
				off = -off
			}
		}
		out[k] = Point{Image: c.Images[i], Orig: c.Values[i] + off}
	}
	return out
}

// Method is a curve-fitting attack (Definition 5).
type Method int

// The three fits of Definition 5.
const (
	LinReg Method = iota
	Polyline
	Spline
)

func (m Method) String() string {
	return [...]string{"linear regression", "polyline", "spline"}[m]
}

// Fit returns the crack function g (recoded value ↦ guessed original)
// that method m fits through the knowledge points: the face value with
// none, a line of slope 1 through a single one, else the fit (points on
// one recoded value count as their mean).
func Fit(m Method, kps []Point) func(float64) float64 {
	pts := merge(kps)
	switch {
	case len(pts) == 0:
		return func(y float64) float64 { return y }
	case len(pts) == 1:
		p := pts[0]
		return func(y float64) float64 { return p.Orig + y - p.Image }
	case m == LinReg:
		return linReg(pts)
	case m == Spline && len(pts) > 2:
		return naturalSpline(pts)
	}
	return polyline(pts)
}

// merge sorts the points by image and averages those on one image.
func merge(kps []Point) []Point {
	pts := slices.Clone(kps)
	slices.SortFunc(pts, func(a, b Point) int { return cmp.Compare(a.Image, b.Image) })
	var out []Point
	for i := 0; i < len(pts); {
		j, sum := i, 0.0
		for ; j < len(pts) && pts[j].Image == pts[i].Image; j++ {
			sum += pts[j].Orig
		}
		out = append(out, Point{pts[i].Image, sum / float64(j-i)})
		i = j
	}
	return out
}

// linReg is the least-squares line of Orig on Image.
func linReg(pts []Point) func(float64) float64 {
	var mx, my float64
	for _, p := range pts {
		mx += p.Image
		my += p.Orig
	}
	mx /= float64(len(pts))
	my /= float64(len(pts))
	var sxy, sxx float64
	for _, p := range pts {
		sxy += (p.Image - mx) * (p.Orig - my)
		sxx += (p.Image - mx) * (p.Image - mx)
	}
	b := sxy / sxx
	return func(y float64) float64 { return my + b*(y-mx) }
}

// polyline joins the points (sorted, distinct images) and extends the
// first and last segments.
func polyline(pts []Point) func(float64) float64 {
	return func(y float64) float64 {
		k := sort.Search(len(pts), func(k int) bool { return pts[k].Image > y })
		k = min(max(k, 1), len(pts)-1) // the segment [k-1, k]
		a, b := pts[k-1], pts[k]
		return a.Orig + (b.Orig-a.Orig)*(y-a.Image)/(b.Image-a.Image)
	}
}

// naturalSpline is the natural cubic spline through the points (sorted,
// distinct images, at least three), linear beyond the end points.
func naturalSpline(pts []Point) func(float64) float64 {
	n := len(pts)
	h := make([]float64, n-1)
	for i := range h {
		h[i] = pts[i+1].Image - pts[i].Image
	}
	// Second derivatives M, M[0] = M[n-1] = 0, from the tridiagonal system
	// h[i-1]·M[i-1] + 2(h[i-1]+h[i])·M[i] + h[i]·M[i+1] = 6(Δ[i] − Δ[i-1]).
	m := make([]float64, n)
	diag, rhs := make([]float64, n), make([]float64, n)
	for i := 1; i < n-1; i++ {
		diag[i] = 2 * (h[i-1] + h[i])
		rhs[i] = 6 * ((pts[i+1].Orig-pts[i].Orig)/h[i] - (pts[i].Orig-pts[i-1].Orig)/h[i-1])
	}
	for i := 2; i < n-1; i++ { // forward elimination
		w := h[i-1] / diag[i-1]
		diag[i] -= w * h[i-1]
		rhs[i] -= w * rhs[i-1]
	}
	for i := n - 2; i >= 1; i-- {
		m[i] = (rhs[i] - h[i]*m[i+1]) / diag[i]
	}
	slope := func(i int, y float64) float64 { // derivative of segment i at y
		a, b := y-pts[i].Image, pts[i+1].Image-y
		return -m[i]*b*b/(2*h[i]) + m[i+1]*a*a/(2*h[i]) + (pts[i+1].Orig-pts[i].Orig)/h[i] - (m[i+1]-m[i])*h[i]/6
	}
	return func(y float64) float64 {
		switch {
		case y <= pts[0].Image:
			return pts[0].Orig + slope(0, pts[0].Image)*(y-pts[0].Image)
		case y >= pts[n-1].Image:
			return pts[n-1].Orig + slope(n-2, pts[n-1].Image)*(y-pts[n-1].Image)
		}
		i := sort.Search(n, func(k int) bool { return pts[k].Image > y }) - 1
		a, b := y-pts[i].Image, pts[i+1].Image-y
		return m[i]*b*b*b/(6*h[i]) + m[i+1]*a*a*a/(6*h[i]) +
			(pts[i].Orig-m[i]*h[i]*h[i]/6)*b/h[i] + (pts[i+1].Orig-m[i+1]*h[i]*h[i]/6)*a/h[i]
	}
}

// Sorting is the sorting attack (§3): the hacker sorts the distinct
// recoded values and maps them, in the order of the direction he assumes,
// to consecutive values lo, lo+step, lo+2·step, ... With the true minimum
// and the true direction it is Figure 11's worst case.
func Sorting(c *transform.ColumnKey, lo, step float64, dir transform.Direction) func(float64) float64 {
	imgs := slices.Clone(c.Images)
	slices.Sort(imgs)
	return func(y float64) float64 {
		r := sort.SearchFloat64s(imgs, y)
		if dir == transform.AntiMonotone {
			r = len(imgs) - 1 - r
		}
		return lo + step*float64(r)
	}
}

// SortingProb is the probability that the sorting attack cracks a value
// (§5.4): with `below` distinct recoded values below it and `above` above,
// in an integer domain [lo, hi], the hacker can place the original only
// in R_g = [lo+below, hi−above]; the crack region is R_ρ = [v−ρ, v+ρ]
// around the true value v; P = |R_g ∩ R_ρ| / |R_g| in integer points (the
// paper's R_q is R_g).
func SortingProb(below, above int, lo, hi, v, rho float64) float64 {
	gLo, gHi := lo+float64(below), hi-float64(above)
	iLo, iHi := math.Max(gLo, math.Ceil(v-rho)), math.Min(gHi, math.Floor(v+rho))
	if iHi < iLo || gHi < gLo {
		return 0
	}
	return (iHi - iLo + 1) / (gHi - gLo + 1)
}

// Cracked reports for each value of c whether crack function g guesses
// it within rho (Definition 1: |g(ν′) − f⁻¹(ν′)| ≤ ρ).
func Cracked(c *transform.ColumnKey, g func(float64) float64, rho float64) []bool {
	out := make([]bool, len(c.Values))
	for i, y := range c.Images {
		out[i] = math.Abs(g(y)-c.Values[i]) <= rho
	}
	return out
}

// Share is the fraction of true entries: with Cracked's result, the
// domain disclosure risk (cracks over distinct recoded values).
func Share(b []bool) float64 {
	n := 0
	for _, x := range b {
		if x {
			n++
		}
	}
	return float64(n) / float64(len(b))
}

// SubspaceRisk is the subspace association disclosure risk (Definition
// 2) over attributes S: rank[a][r] is row r's value index in attribute
// a's key, cracked[a] Cracked's result for it; the share of rows cracked
// in every attribute.
func SubspaceRisk(rank [][]int32, cracked [][]bool) float64 {
	rows := len(rank[0])
	n := 0
	for r := range rows {
		all := true
		for a := range rank {
			all = all && cracked[a][rank[a][r]]
		}
		if all {
			n++
		}
	}
	return float64(n) / float64(rows)
}

// Median is the median of x (the mean of the middle two when even).
func Median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s) == 0 {
		return math.NaN()
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
