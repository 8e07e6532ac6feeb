package transform

import (
	"cmp"
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
// gaps). It redraws until the column passes check, first on the values'
// own spacing, then on a mix of value and rank spacing, which keeps
// values apart when a column's spacing is too uneven for float32.
func drawImages(values []float64, ps []Piece, dir Direction, fams []Family, rng *rand.Rand) ([]float64, error) {
	c := &ColumnKey{Direction: dir, Pieces: ps, Values: values}
	var err error
	for _, lambda := range []float64{0, 0, 0.5, 0.5, 1, 1} {
		raw := place(layout(values, ps, fams, lambda, rng), values, dir, rng)
		for _, c.Images = range roundings(raw) {
			if err = c.check(); err == nil {
				return c.Images, nil
			}
		}
	}
	return nil, fmt.Errorf("no valid recoding found (%w)", err)
}

// layout places the pieces left to right on [0, 1], in value order.
// Positions mix each value's own spacing with its rank (lambda of rank);
// each piece gets its span stretched by 2^U(-1,1) and a curve from fams
// (a Mono piece: the same curve's points, then randomly permuted, a random
// bijection of F_bi); the gap before each piece is the original gap
// stretched the same way, widened around a Mono piece to more than the
// piece's width (the decodability rule of check).
func layout(values []float64, ps []Piece, fams []Family, lambda float64, rng *rand.Rand) []float64 {
	n := len(values)
	pos := make([]float64, n)
	if n > 1 {
		span := values[n-1] - values[0]
		for i, v := range values {
			pos[i] = (1-lambda)*(v-values[0])/span + lambda*float64(i)/float64(n-1)
		}
	}
	stretch := func() float64 { return math.Exp2(2*rng.Float64() - 1) }
	wider := func(w float64) float64 { return w * (1.1 + 0.4*rng.Float64()) }
	out := make([]float64, n)
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
			perm := rng.Perm(pc.Len)
			ys = permuted(ys, perm)
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
// of 10 of the original one, a random offset of up to one span either way
// of zero, increasing for Monotone and decreasing for AntiMonotone.
func place(l, values []float64, dir Direction, rng *rand.Rand) []float64 {
	orig := values[len(values)-1] - values[0]
	if orig == 0 {
		orig = 1
	}
	span := orig * math.Pow(10, 2*rng.Float64()-1)
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

// roundings are the images rounded to as few decimals as keep them apart
// (a quarter of the smallest gap), then to one and two decimals more, and
// last the images unrounded: the first that passes check is taken, so
// that the recoded table looks like data and stays short.
func roundings(y []float64) [][]float64 {
	sorted := slices.Clone(y)
	slices.SortFunc(sorted, cmp.Compare)
	gap := math.Inf(1)
	for j := 1; j < len(sorted); j++ {
		gap = min(gap, sorted[j]-sorted[j-1])
	}
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
	return append(out, y)
}
