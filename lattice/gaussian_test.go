package lattice

import (
	"math"
	mrand "math/rand/v2"
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
)

// errorProbs is P(x = v) for v in [-max, max] (index v+max) of Lattigo's
// rounded, truncated Gaussian, computed afresh from erf rather than from
// the sampler's table.
func errorProbs(sigma, bound float64) (probs []float64, max int) {
	a := 1 / (sigma * math.Sqrt2)
	norm := math.Erf(bound * a)
	max = int(math.Floor(bound + 0.5))
	probs = make([]float64, 2*max+1)
	for c := 0; c <= max; c++ {
		lo, hi := math.Max(float64(c)-0.5, 0), math.Min(float64(c)+0.5, bound)
		p := (math.Erf(hi*a) - math.Erf(lo*a)) / norm
		if c == 0 {
			probs[max] = p
			continue
		}
		probs[max+c], probs[max-c] = p/2, p/2
	}
	return probs, max
}

// TestErrorTable: the table for the default errors (σ 3.2, bound 19.2)
// has an entry per magnitude 0..18, each the cumulative probability to
// within 2^-50, and magnitude inverts it at every entry's edge.
func TestErrorTable(t *testing.T) {
	t.Parallel()
	xe := rlwe.DefaultXe
	s, err := newErrorSampler([32]byte{}, xe, []uint64{97})
	if err != nil {
		t.Fatal(err)
	}
	probs, max := errorProbs(xe.Sigma, xe.Bound)
	if len(s.table) != max || max != freshNoiseBound {
		t.Fatalf("%d entries, largest error %d: want %d entries for errors up to %d", len(s.table), max, freshNoiseBound, freshNoiseBound)
	}
	cum := probs[max]
	for c, e := range s.table {
		if c > 0 {
			cum += probs[max+c] + probs[max-c]
		}
		if got := math.Ldexp(float64(e), -63); math.Abs(got-cum) > 0x1p-50 {
			t.Errorf("entry %d: %.17g, want P(|x| ≤ %d) = %.17g", c, got, c, cum)
		}
		if got := s.magnitude(e - 1); got != uint64(c) {
			t.Errorf("just below entry %d: magnitude %d, want %d", c, got, c)
		}
		if got := s.magnitude(e); got != uint64(c+1) {
			t.Errorf("at entry %d: magnitude %d, want %d", c, got, c+1)
		}
	}
	if s.magnitude(0) != 0 || s.magnitude(1<<63-1) != uint64(max) {
		t.Fatalf("the extreme draws give %d and %d, want 0 and %d", s.magnitude(0), s.magnitude(1<<63-1), max)
	}
	for _, bad := range []ring.DiscreteGaussian{{Sigma: 0, Bound: 1}, {Sigma: 3.2, Bound: 0.5}, {Sigma: math.NaN(), Bound: 19}, {Sigma: 1, Bound: 1000}} {
		if _, err := newErrorSampler([32]byte{}, bad, nil); err == nil {
			t.Errorf("σ %g, bound %g accepted", bad.Sigma, bad.Bound)
		}
	}
}

// TestErrorSampler: a million draws follow the distribution (χ² against
// errorProbs) and Lattigo's sampler's draws (two-sample χ²), every
// coefficient the same error modulo each prime, reduced. Seeds are fixed,
// so the outcome is too; the bound is p ≈ 10^-6 for 20 degrees of freedom.
func TestErrorSampler(t *testing.T) {
	t.Parallel()
	p := params(t)
	rq := p.bgv.RingQ()
	xe := p.bgv.Xe().(ring.DiscreteGaussian)
	ours, err := newErrorSampler([32]byte{9}, xe, rq.ModuliChain())
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := ring.NewSampler(mrand.NewChaCha8([32]byte{10}), rq, xe, false)
	if err != nil {
		t.Fatal(err)
	}
	probs, max := errorProbs(xe.Sigma, xe.Bound)
	const polys = 128
	// count tallies the errors of polys draws; reduced: every residue must
	// be below its prime (Lattigo's sampler writes 0 as q on the coin's 0).
	count := func(read func(ring.Poly), reduced bool) []float64 {
		counts := make([]float64, 2*max+1)
		poly := rq.NewPoly()
		for range polys {
			read(poly)
			for i := range rq.N() {
				q0 := int64(rq.SubRings[0].Modulus)
				v := int64(poly.Coeffs[0][i]) % q0
				if v > q0/2 {
					v -= q0
				}
				if v < -int64(max) || v > int64(max) {
					t.Fatalf("error %d beyond the bound", v)
				}
				counts[int(v)+max]++
				for j, sub := range rq.SubRings {
					c, q := poly.Coeffs[j][i], sub.Modulus
					if (reduced && c >= q) || c%q != uint64((v%int64(q)+int64(q))%int64(q)) {
						t.Fatalf("coefficient %d: %d modulo prime %d, not the error %d", i, c, j, v)
					}
				}
			}
		}
		return counts
	}
	got := count(ours.read, true)
	want := count(theirs.Read, false)
	n := float64(polys * rq.N())
	// Pool the tails (|x| ≥ 9, expected under 40 draws a side) into one
	// cell each way, so that every cell expects enough.
	pool := func(c []float64) []float64 {
		var out []float64
		var lo, hi float64
		for v, x := range c {
			switch {
			case v-max <= -9:
				lo += x
			case v-max >= 9:
				hi += x
			default:
				out = append(out, x)
			}
		}
		return append(out, lo, hi)
	}
	gotP, wantP, expP := pool(got), pool(want), pool(probs)
	var chiExact, chiTwo float64
	for k := range gotP {
		e := n * expP[k]
		chiExact += (gotP[k] - e) * (gotP[k] - e) / e
		chiTwo += (gotP[k] - wantP[k]) * (gotP[k] - wantP[k]) / (gotP[k] + wantP[k])
	}
	t.Logf("χ² against the distribution %.1f, against Lattigo's draws %.1f (%d cells)", chiExact, chiTwo, len(gotP))
	if chiExact > 60 || chiTwo > 60 {
		t.Fatalf("χ² %.1f against the distribution, %.1f against Lattigo's sampler: not its distribution", chiExact, chiTwo)
	}
}

// BenchmarkErrors draws one polynomial of errors (n = 8192, every prime of
// Q) with the table and with Lattigo's sampler.
//
//	go test ./lattice -run '^$' -bench Errors -count 6
func BenchmarkErrors(b *testing.B) {
	p := params(b)
	rq := p.bgv.RingQ()
	xe := p.bgv.Xe().(ring.DiscreteGaussian)
	ours, err := newErrorSampler([32]byte{1}, xe, rq.ModuliChain())
	if err != nil {
		b.Fatal(err)
	}
	theirs, err := ring.NewSampler(mrand.NewChaCha8([32]byte{2}), rq, xe, false)
	if err != nil {
		b.Fatal(err)
	}
	poly := rq.NewPoly()
	for name, read := range map[string]func(ring.Poly){"table": ours.read, "lattigo": theirs.Read} {
		b.Run("sampler="+name, func(b *testing.B) {
			for b.Loop() {
				read(poly)
			}
		})
	}
}
