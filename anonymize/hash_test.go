package anonymize

import (
	"math/rand/v2"
	"testing"
)

// keyIndex agrees with a map, through growth and reuse.
func TestKeyIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var h keyIndex
	for round := 0; round < 3; round++ {
		h.reset(4) // far too small: forces grow
		want := map[uint64]int{}
		for i := 0; i < 5000; i++ {
			k := rng.Uint64() % 3000 << (round * 20)
			j, found := h.index(k)
			w, ok := want[k]
			if !ok {
				w = len(want)
				want[k] = w
			}
			if found != ok || j != w {
				t.Fatalf("round %d key %d: index %d found %v, want %d %v", round, k, j, found, w, ok)
			}
		}
	}
}
