package sjc

import (
	"math"
	"testing"
)

// TestHiddenEncoding: Eps in fixed point, the comparison inputs' length,
// and that the encoding keeps the clear rule's decisions: a useless table
// loses to any useful one, two gains more than Eps apart compare as they
// are, two within Eps are a tie (neither beats the other).
func TestHiddenEncoding(t *testing.T) {
	t.Parallel()
	if want := uint64(math.Floor(Eps * gainScale)); epsUnits != want {
		t.Fatalf("epsUnits %d, want %d", epsUnits, want)
	}
	for _, c := range []struct{ u, n int }{{2, 50}, {3, 50}, {4, 51}, {5, 51}, {1000, 53}} {
		n, maxV := compareBits(c.u)
		x, y := compareInputs(maxV, maxV)
		if n != c.n || x>>n != 0 || y>>n != 0 {
			t.Errorf("%d labels: %d bits (want %d), inputs %d and %d", c.u, n, c.n, x, y)
		}
		if v := hiddenValue([]Candidate{{Gain: math.Log2(float64(c.u))}}); v > maxV {
			t.Errorf("%d labels: the largest gain's value %d is above the bound %d", c.u, v, maxV)
		}
	}
	beats := func(a, b float64) bool { // does gain b beat gain a (b's table later)?
		va, vb := hiddenValue([]Candidate{{Gain: a}}), hiddenValue([]Candidate{{Gain: b}})
		x, y := compareInputs(va, vb)
		return x < y
	}
	for _, c := range []struct {
		a, b float64
		want bool
	}{
		{0, 1e-9, true}, {1e-13, 1e-11, true}, {1e-11, 1e-13, false}, {0, 0, false},
		{0.5, 0.5 + 1e-9, true}, {0.5 + 1e-9, 0.5, false}, {0.5, 0.5 + 0.4e-12, false}, {0.5 + 0.4e-12, 0.5, false},
		{0.25, 0.75, true}, {0.75, 0.25, false},
	} {
		if got := beats(c.a, c.b); got != c.want {
			t.Errorf("gain %v against %v: beats %v, want %v", c.b, c.a, got, c.want)
		}
	}
	if hiddenValue(nil) != 0 || useful([]Candidate{{Gain: Eps}}) || !useful([]Candidate{{Gain: 2 * Eps}}) {
		t.Error("usefulness is not gain > Eps")
	}
}
