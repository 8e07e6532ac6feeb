package kde

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Scott's rule (eq. 16) against values worked by hand: one column 1..5
// (σ = √2.5, (4/3)^(1/5)·5^(-1/5)·σ = 1.2138464...), and two columns over
// the corners of a 2×4 rectangle, where 4/(d+2) = 1 and the factor is
// 4^(-1/6) (σ = √(4/3) and √(16/3)).
func TestBandwidthsScott(t *testing.T) {
	for _, c := range []struct {
		rows [][]float64
		want []float64
	}{
		{[][]float64{{1}, {2}, {3}, {4}, {5}}, []float64{1.2138464451503566}},
		{[][]float64{{0, 0}, {2, 0}, {0, 4}, {2, 4}}, []float64{0.916486424665735, 1.83297284933147}},
		{[][]float64{{7, 1}, {7, 2}}, []float64{0, math.Pow(4.0/4, 1.0/6) * math.Pow(2, -1.0/6) * math.Sqrt(0.5)}},
	} {
		got := Bandwidths(c.rows)
		for i := range c.want {
			if math.Abs(got[i]-c.want[i]) > 1e-12 {
				t.Errorf("rows %v: h = %v, want %v", c.rows, got, c.want)
			}
		}
	}
	if h := Bandwidths([][]float64{{1, 2}}); h != nil {
		t.Errorf("one row: h = %v, want none", h)
	}
}

// Devroye's rule draws the Epanechnikov density: support [−1, 1], mean 0,
// variance 1/5, and its CDF (2 + 3x − x³)/4 within a Kolmogorov–Smirnov
// distance of 0.01 over 100,000 draws (the 0.1 % critical value is 0.006).
func TestEpanechnikov(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 100000
	xs := make([]float64, n)
	var sum, sq float64
	for i := range xs {
		x := Epanechnikov(rng)
		if x < -1 || x > 1 {
			t.Fatalf("draw %v outside [−1, 1]", x)
		}
		xs[i], sum, sq = x, sum+x, sq+x*x
	}
	if m, v := sum/n, sq/n; math.Abs(m) > 0.005 || math.Abs(v-0.2) > 0.005 {
		t.Errorf("mean %v, variance %v; want 0 and 0.2", m, v)
	}
	slices.Sort(xs)
	var ks float64
	for i, x := range xs {
		cdf := (2 + 3*x - x*x*x) / 4
		ks = max(ks, math.Abs(cdf-float64(i)/n), math.Abs(cdf-float64(i+1)/n))
	}
	if ks > 0.01 {
		t.Errorf("Kolmogorov–Smirnov distance %v from the Epanechnikov CDF", ks)
	}
}

// Sanitise resamples each class apart: round(ratio·n) draws per class,
// each within h of a row of its own class in every column (the classes
// lie far apart, so a draw from the other class's rows would be caught),
// the same draws for the same seed, and a class below min_rows refused
// without naming it.
func TestSanitisePerClass(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	byClass := map[string][][]float64{}
	for i := range 40 {
		byClass["a"] = append(byClass["a"], []float64{rng.NormFloat64(), 10 + rng.NormFloat64()})
		if i < 25 {
			byClass["b"] = append(byClass["b"], []float64{100 + 3*rng.NormFloat64(), -50 + rng.NormFloat64()})
		}
	}
	seed := []byte("a party's own seed, 32 bytes....")
	for _, ratio := range []float64{1, 0.5} {
		got, err := Sanitise(byClass, ratio, 10, seed)
		if err != nil {
			t.Fatal(err)
		}
		for label, rows := range byClass {
			h := Bandwidths(rows)
			if want := int(math.Round(ratio * float64(len(rows)))); len(got[label]) != want {
				t.Errorf("ratio %v: class %s: %d draws, want %d", ratio, label, len(got[label]), want)
			}
			for _, y := range got[label] {
				near := slices.ContainsFunc(rows, func(x []float64) bool {
					return math.Abs(y[0]-x[0]) <= h[0] && math.Abs(y[1]-x[1]) <= h[1]
				})
				if !near {
					t.Errorf("class %s: draw %v is within h %v of none of its class's rows", label, y, h)
				}
			}
		}
		again, _ := Sanitise(byClass, ratio, 10, seed)
		if !slices.EqualFunc(again["a"], got["a"], slices.Equal[[]float64]) {
			t.Errorf("ratio %v: another sample from the same seed", ratio)
		}
	}
	_, err := Sanitise(byClass, 1, 30, seed)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("params.min_rows")) || bytes.Contains([]byte(err.Error()), []byte("25")) {
		t.Errorf("a class of 25 rows under min_rows 30: %v", err)
	}
}

// A draw is no row of the table: with continuous kernels, none of 1,000
// draws equals its row, though every one lies within h of some row.
func TestResampleMovesEveryRow(t *testing.T) {
	rows := [][]float64{{1, 2}, {3, 5}, {4, 4}, {8, 1}}
	h := Bandwidths(rows)
	for _, y := range Resample(rows, h, 1000, rand.New(rand.NewPCG(7, 8))) {
		if slices.ContainsFunc(rows, func(x []float64) bool { return x[0] == y[0] || x[1] == y[1] }) {
			t.Fatalf("draw %v shares a value with a row", y)
		}
	}
}

// The l1 distance is 0 between an estimate and itself and 2 between two
// of disjoint support; DAPL is 0 with one party and grows as the rows
// split over more (the paper's figures 3 to 7, (b)).
func TestDAPL(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var rows [][]float64
	for range 1200 {
		rows = append(rows, []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()})
	}
	p := NewEstimate(rows, Bandwidths(rows))
	if d := L1(p, p, 500, rng); d != 0 {
		t.Errorf("l1 of an estimate to itself %v", d)
	}
	far := [][]float64{{100, 0, 0}, {101, 1, 0}, {102, 0, 1}}
	if d := L1(p, NewEstimate(far, Bandwidths(far)), 500, rng); d != 2 {
		t.Errorf("l1 between disjoint supports %v, want 2", d)
	}
	prev := -1.0
	for parties := 1; parties <= 4; parties++ {
		split := make([]map[string][][]float64, parties)
		for i := range split {
			split[i] = map[string][][]float64{}
		}
		for i, r := range rows {
			split[i%parties]["c"] = append(split[i%parties]["c"], r)
		}
		got := *DAPL(split, 2000, rand.New(rand.NewPCG(11, 12)))["c"]
		t.Logf("L = %d: DAPL %.4f", parties, got)
		if parties == 1 && got != 0 || got <= prev {
			t.Errorf("L = %d: DAPL %v after %v", parties, got, prev)
		}
		prev = got
	}
	if NewEstimate([][]float64{{1, 5}, {2, 5}}, []float64{1, 0}) != nil {
		t.Error("an estimate with a zero bandwidth")
	}
}

// Samples round-trip through the wire format; a length that is no whole
// number of rows and a value that is not finite are refused.
func TestWire(t *testing.T) {
	rows := [][]float64{{1.5, -2}, {math.MaxFloat64, math.SmallestNonzeroFloat64}}
	got, err := decodeRows(encodeRows(rows, 2), 2)
	if err != nil || !slices.EqualFunc(got, rows, slices.Equal[[]float64]) {
		t.Fatalf("round trip: %v, %v", got, err)
	}
	for _, b := range [][]byte{encodeRows(rows, 2)[:15], encodeRows([][]float64{{math.NaN(), 1}}, 2), encodeRows([][]float64{{1, math.Inf(-1)}}, 2)} {
		if _, err := decodeRows(b, 2); !errors.Is(err, ErrSample) {
			t.Errorf("%x: %v, want ErrSample", b, err)
		}
	}
}

// FuzzDecodeRows: whatever bytes a party sends, decodeRows returns whole
// finite rows that encode back to the same bytes, or ErrSample; it never
// panics.
func FuzzDecodeRows(f *testing.F) {
	f.Add(encodeRows([][]float64{{1, 2, 3}}, 3), 3)
	f.Add([]byte{1, 2, 3}, 1)
	f.Add([]byte{}, 0)
	f.Fuzz(func(t *testing.T, b []byte, d int) {
		rows, err := decodeRows(b, d)
		if err != nil {
			if !errors.Is(err, ErrSample) {
				t.Fatalf("error %v is not ErrSample", err)
			}
			return
		}
		for _, r := range rows {
			if len(r) != d || slices.ContainsFunc(r, func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }) {
				t.Fatalf("row %v", r)
			}
		}
		if !bytes.Equal(encodeRows(rows, max(d, 1)), b) && len(rows) > 0 {
			t.Fatal("rows do not encode back to their bytes")
		}
	})
}
