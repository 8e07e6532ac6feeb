package mpc

import (
	"context"
	"math"
	"testing"
)

// maskedViews returns, for count copies of the secret x (signed k-bit),
// the values c that Mod2m opens with m = k−1 (LTZ's), as party 0 sees
// them, each copy with its own masks.
func maskedViews(t *testing.T, n, th, k int, x int64, count int) []Elem {
	t.Helper()
	xs := make([]int64, count)
	for i := range xs {
		xs[i] = x
	}
	var view []Elem
	mustRun(t, n, th, func(ctx context.Context, p *Party) error {
		sx, err := shared(ctx, p, xs)
		if err != nil {
			return err
		}
		mk, err := p.prandM(ctx, count, k, k-1)
		if err != nil {
			return err
		}
		c, err := p.openMasked(ctx, sx, k, mk)
		if p.Self == 0 {
			view = c
		}
		return err
	})
	return view
}

// moments returns the mean and the variance of v.
func moments(v []float64) (mean, variance float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(v)-1)
}

// TestMaskedOpeningHides is the view test of Mod2m's one opening
// beyond RandomBits' squares: c = 2^(k-1) + x + 2^m r″ + r'. For the
// two extreme secrets x = ±(2^(k-1) − 1), over many independent
// masks, it checks that c's low m bits (hidden by r') and its high
// bits (hidden by r″) each vary, and that their means for x and x'
// agree within six standard errors. Without r' the low bits are
// constant; without r″ the high bits are 0, 1 or 2 and their means
// for the two secrets differ by about 1 with a standard error near
// 0.02; either way this test fails.
func TestMaskedOpeningHides(t *testing.T) {
	const k, count = 16, 2000
	m := k - 1
	x := int64(1)<<(k-1) - 1
	views := [2][]Elem{maskedViews(t, 3, 1, k, -x, count), maskedViews(t, 3, 1, k, x, count)}
	var lows, highs [2][]float64
	for s, view := range views {
		distinctLow, distinctHigh := map[uint64]bool{}, map[uint64]bool{}
		for _, c := range view {
			// c < 2^k + 3·2^(k+κ) + 2^m < 2^58 here: it fits the low limb.
			if c.hi != 0 {
				t.Fatalf("opened value above 2^64 for k=%d", k)
			}
			lo, hi := c.lo&(1<<m-1), c.lo>>m
			distinctLow[lo], distinctHigh[hi] = true, true
			lows[s] = append(lows[s], float64(lo))
			highs[s] = append(highs[s], float64(hi))
		}
		// Uniform over 2^15 low values: about 1,940 distinct of 2,000;
		// r″ spans 2^41 per party.
		if len(distinctLow) < count/2 || len(distinctHigh) < count/2 {
			t.Fatalf("secret %d: %d distinct low parts, %d distinct high parts of %d openings",
				[2]int64{-x, x}[s], len(distinctLow), len(distinctHigh), count)
		}
	}
	for name, pair := range map[string][2][]float64{"low": lows, "high": highs} {
		m0, v0 := moments(pair[0])
		m1, v1 := moments(pair[1])
		se := math.Sqrt(v0/count + v1/count)
		if se == 0 || math.Abs(m0-m1) > 6*se {
			t.Fatalf("%s parts: means %.4g and %.4g for the two secrets, standard error %.4g", name, m0, m1, se)
		}
	}
}

// TestOpenedProfile holds LTZ, EQZ and Argmax to what their docs say
// they open: per comparison one square per random bit of r' and one
// masked c, and for Argmax the index OpenIndex reveals; nothing else
// (a retried random bit, chance below 2^-119 here, would add one).
func TestOpenedProfile(t *testing.T) {
	const k, count = 12, 9
	x := make([]int64, count)
	for i := range x {
		x[i] = int64(i*37%11) - 5
	}
	cases := []struct {
		name string
		run  func(ctx context.Context, p *Party, sx []Elem) error
		want int64
	}{
		{"ltz", func(ctx context.Context, p *Party, sx []Elem) error {
			_, err := p.LTZ(ctx, sx, k)
			return err
		}, count*(k-1) + count},
		{"eqz", func(ctx context.Context, p *Party, sx []Elem) error {
			_, err := p.EQZ(ctx, sx, k)
			return err
		}, count*k + count},
		{"argmax", func(ctx context.Context, p *Party, sx []Elem) error {
			i, _, err := p.Argmax(ctx, sx, k)
			if err != nil {
				return err
			}
			_, err = p.OpenIndex(ctx, i, count)
			return err
		}, (count-1)*k + (count - 1) + 1},
	}
	for _, c := range cases {
		opened := make([]int64, 3)
		mustRun(t, 3, 1, func(ctx context.Context, p *Party) error {
			sx, err := shared(ctx, p, x)
			if err != nil {
				return err
			}
			if p.Stats().Opened != 0 {
				t.Errorf("%s: Input opened %d elements", c.name, p.Stats().Opened)
			}
			err = c.run(ctx, p, sx)
			opened[p.Self] = p.Stats().Opened
			return err
		})
		for i, o := range opened {
			if o != c.want {
				t.Fatalf("%s: party %d opened %d elements, want %d", c.name, i, o, c.want)
			}
		}
	}
}
