package sorted

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Both walks agree with a set built by brute force on random inputs.
func TestIntersectAgainstSets(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	draw := func() []int {
		seen := map[int]bool{}
		for range r.IntN(30) {
			seen[r.IntN(50)] = true
		}
		out := make([]int, 0, len(seen))
		for v := range seen {
			out = append(out, v)
		}
		slices.Sort(out)
		return out
	}
	for range 500 {
		a, b := draw(), draw()
		var want []int
		for _, v := range a {
			if slices.Contains(b, v) {
				want = append(want, v)
			}
		}
		if got := AppendIntersect(nil, a, b); !slices.Equal(got, want) {
			t.Fatalf("AppendIntersect(%v, %v) = %v, want %v", a, b, got, want)
		}
		if got := CountIntersect(a, b); got != len(want) {
			t.Fatalf("CountIntersect(%v, %v) = %d, want %d", a, b, got, len(want))
		}
	}
	if got := AppendIntersect([]string{"x"}, []string{"a", "c"}, []string{"c"}); !slices.Equal(got, []string{"x", "c"}) {
		t.Fatalf("appends to out: %v", got)
	}
}
