package transform

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
)

// drawImages draws the recodings of one attribute's values, pieces and
// direction given: Bu et al.'s phases (ii) and (iii), choosing a function
// per piece and laying the pieces out under the global invariant (the
// research notes' reconstruction of the missing Figure 2, with random
// gaps), over a warp of the value axis with `knots` random knots. It
// redraws until the column passes check: first on the values' own
// spacing with warp slopes up to 8 times steeper or flatter than the
// original, then milder on a mix of value and rank spacing, last on ranks
// alone, which keeps values apart when a column's spacing is too uneven
// for float32.
func drawImages(values []float64, ps []Piece, dir Direction, fams []Family, knots int, rng *rand.Rand) ([]float64, error) {
	c := &ColumnKey{Direction: dir, Pieces: ps, Values: values}
	var err error
	for _, a := range []struct{ lambda, spread float64 }{{0, 5}, {0, 5}, {0.5, 3}, {0.5, 2}, {1, 1}, {1, 1}, {1, 0}} {
		pos := positions(values, a.lambda, knots, a.spread, rng)
		raw := place(layout(pos, ps, fams, min(a.spread, 1), rng), values, dir, rng)
		c.Images = raw
		if err = c.check(); err != nil {
			continue // rounding only brings values closer
		}
		for _, c.Images = range roundings(raw) {
			if c.check() == nil {
				return c.Images, nil
			}
		}
		return raw, nil
	}
	return nil, fmt.Errorf("no valid recoding found (%w)", err)
}

// positions places the values on an increasing axis: each value's own
// spacing mixed with its rank (lambda of rank), then warped, piecewise
// linearly, with a slope of 2^U(-spread, spread) between random knots
// (ChooseBP's draw over the values).
//
// The warp is what defeats curve fitting: a hacker's line or polyline
// through a few known points follows the trend of the whole column, so
// the recoding must stray from any trend by more than a crack radius at
// the scale of the whole column. Stretching each piece alone does not do
// it when pieces are many and short (Adult's fnlwgt has 7,000
// monochromatic pieces): their stretches average out. docs/transform.md
// measures the difference.
func positions(values []float64, lambda float64, knots int, spread float64, rng *rand.Rand) []float64 {
	n := len(values)
	pos := make([]float64, n)
	if n < 2 {
		return pos
	}
	span := values[n-1] - values[0]
	slope := math.Exp2(spread * (2*rng.Float64() - 1))
	cuts := ChooseBP(n, knots, rng)
	for i := 1; i < n; i++ {
		if len(cuts) > 0 && cuts[0] == i {
			cuts = cuts[1:]
			slope = math.Exp2(spread * (2*rng.Float64() - 1))
		}
		step := (1-lambda)*(values[i]-values[i-1])/span + lambda/float64(n-1)
		pos[i] = pos[i-1] + slope*step
	}
	return pos
}

// layout places the pieces left to right on [0, 1], in value order, from
// the values' positions: each piece gets its span stretched by
// 2^U(-spread, spread) and a curve from fams (a Mono piece: the same
// curve's points, then randomly permuted, a random bijection of F_bi); the
// gap before each piece is the positions' gap stretched the same way,
// widened around a Mono piece to more than the piece's width (the
// decodability rule of check).
func layout(pos []float64, ps []Piece, fams []Family, spread float64, rng *rand.Rand) []float64 {
	stretch := func() float64 { return math.Exp2(spread * (2*rng.Float64() - 1)) }
	wider := func(w float64) float64 { return w * (1.1 + 0.4*rng.Float64()) }
	out := make([]float64, len(pos))
	hi, prevSpan := 0.0, 0.0
	for r, pc := range ps {
		s, e := pc.Start, pc.Start+pc.Len-1
		sr := pos[e] - pos[s]
		span := sr * stretch()
		ys := make([]float64, pc.Len)
		if pc.Len > 1 {
			cv := drawCurve(fams, rng)
			for k := range ys {
				ys[k] = span * cv.at((pos[s+k]-pos[s])/sr)
			}
		}
		if pc.Mono {
			ys = permuted(ys, rng.Perm(pc.Len))
		}
		base := 0.0
		if r > 0 {
			g := (pos[s] - pos[ps[r-1].Start+ps[r-1].Len-1]) * stretch()
			if pc.Mono {
				g = max(g, wider(span))
			}
			if ps[r-1].Mono {
				g = max(g, wider(prevSpan))
			}
			base = hi + g
		}
		for k, y := range ys {
			out[s+k] = base + y
		}
		hi, prevSpan = base+span, span
	}
	if hi > 0 {
		for i := range out {
			out[i] /= hi
		}
	}
	return out
}

func permuted(ys []float64, perm []int) []float64 {
	out := make([]float64, len(ys))
	for k, p := range perm {
		out[k] = ys[p]
	}
	return out
}

// place maps the layout onto the recoded domain: a span within a factor
// of 10 of the original one (at least 4e-6 over the layout's smallest
// gap, so no two values come closer than check allows, and at most 1e30,
// inside float32's range), a random offset
// of up to one span either way of zero, increasing for Monotone and
// decreasing for AntiMonotone.
func place(l, values []float64, dir Direction, rng *rand.Rand) []float64 {
	orig := values[len(values)-1] - values[0]
	if orig == 0 {
		orig = 1
	}
	span := orig * math.Pow(10, 2*rng.Float64()-1)
	if g := minGap(l); g > 0 {
		span = max(span, 4e-6/g)
	}
	span = min(span, 1e30)
	off := span * (2*rng.Float64() - 1)
	out := make([]float64, len(l))
	for i, u := range l {
		if dir == AntiMonotone {
			u = 1 - u
		}
		out[i] = off + span*u
	}
	return out
}

// minGap is the smallest difference between two of y (+Inf for fewer than
// two values).
func minGap(y []float64) float64 {
	sorted := slices.Clone(y)
	slices.Sort(sorted)
	gap := math.Inf(1)
	for j := 1; j < len(sorted); j++ {
		gap = min(gap, sorted[j]-sorted[j-1])
	}
	return gap
}

// roundings are the images rounded to as few decimals as keep them apart
// (a quarter of the smallest gap), then to one and two decimals more: the
// first that passes check is taken, else the images unrounded, so that
// the recoded table looks like data and stays short.
func roundings(y []float64) [][]float64 {
	gap := minGap(y)
	d := 0
	if gap > 0 && !math.IsInf(gap, 1) {
		d = max(0, int(math.Ceil(-math.Log10(gap/4))))
	}
	var out [][]float64
	for extra := range 3 {
		r := make([]float64, len(y))
		for i, v := range y {
			r[i], _ = strconv.ParseFloat(strconv.FormatFloat(v, 'f', d+extra, 64), 64)
		}
		out = append(out, r)
	}
	return out
}
