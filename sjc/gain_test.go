package sjc_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cohortdm/cohort/sjc"
)

// textbookGain is information gain as the textbooks state it, written
// independently of sjc's tabulated form: H(T) − N_L/N·H(L) − N_R/N·H(R),
// H the log2 entropy Σ −q·log2 q.
func textbookGain(total, left, right []uint64) float64 {
	h := func(c []uint64) (float64, float64) {
		var n uint64
		for _, x := range c {
			n += x
		}
		e := 0.0
		for _, x := range c {
			if x > 0 {
				q := float64(x) / float64(n)
				e -= q * math.Log2(q)
			}
		}
		return e, float64(n)
	}
	ht, n := h(total)
	hl, nl := h(left)
	hr, nr := h(right)
	if n == 0 {
		return 0
	}
	return ht - nl/n*hl - nr/n*hr
}

// The package's one gain function (the protocol's and the reference
// builder's) agrees with the textbook formula within the tie
// tolerance, over small counts (tabulated), large ones (series) and mixes.
func TestGainAgainstTextbook(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 8))
	for i := range 20000 {
		k := 2 + r.IntN(4)
		total, left, right := make([]uint64, k), make([]uint64, k), make([]uint64, k)
		scale := []uint64{10, 5000, 1 << 40}[i%3]
		for c := range k {
			left[c] = r.Uint64N(scale)
			right[c] = r.Uint64N(scale)
			total[c] = left[c] + right[c]
		}
		got, want := sjc.Gain(total, left, right), textbookGain(total, left, right)
		if math.Abs(got-want) > 1e-12 {
			t.Fatalf("counts %v = %v + %v: Gain %.17g, textbook %.17g", total, left, right, got, want)
		}
	}
}
