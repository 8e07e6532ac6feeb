package psi

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cohortdm/cohort/job/jobtest"
)

// TestOTIntersectRandom: the OT mode gives both parties the plain set
// intersection, whichever side holds which set, over chunked messages.
func TestOTIntersectRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 19))
	for _, c := range []struct {
		na, nb, pool int
		dup          bool
		chunk        int
	}{
		{0, 0, 10, false, 0},
		{0, 5, 10, false, 0},
		{6, 0, 10, false, 0},
		{1, 1, 1, false, 0},
		{20, 30, 40, false, 7},
		{20, 30, 1000000, false, 7}, // most likely no overlap
		{50, 50, 30, true, 7},       // repeats in both inputs
		{64, 64, 64, false, 7},      // both hold every value
		{700, 500, 1000, false, 50}, // several matrix chunks (128 bins each) and value chunks
		{3000, 2500, 6000, false, 0},
	} {
		for _, swap := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d×%d/pool%d/dup=%v/swap=%v", c.na, c.nb, c.pool, c.dup, swap), func(t *testing.T) {
				a, b := randomSets(r, c.na, c.nb, c.pool, c.dup)
				if swap {
					a, b = b, a
				}
				net := jobtest.NewNetwork("alice", "bob")
				ra, rb, ea, eb := pair(t, net, OT{Config: Config{Edge: "e", ChunkSize: c.chunk}}, a, b)
				if ea != nil || eb != nil {
					t.Fatal(ea, eb)
				}
				checkResult(t, "alice", ra, a, b)
				checkResult(t, "bob", rb, b, a)
			})
		}
	}
}
