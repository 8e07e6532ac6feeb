package boost_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/cohortdm/cohort/boost"
)

// fanoutCase: class table C (alice) with n/fan rows, each key once, and
// A (bob) with fan rows per key: n join rows in all.
func fanoutCase(t *testing.T, n, fan int) *joinCase {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(fan)))
	C := &caseTable{party: "alice", cols: []string{"k", "x", "y"}, kinds: map[string]string{"k": "key", "x": "numeric", "y": "class"}}
	A := &caseTable{party: "bob", cols: []string{"k", "u", "v"}, kinds: map[string]string{"k": "key", "u": "numeric", "v": "numeric"}}
	for i := 0; i < n/fan; i++ {
		key := fmt.Sprintf("k%d", i)
		y := "0"
		if rng.IntN(3) == 0 {
			y = "1"
		}
		C.rows = append(C.rows, []string{key, num(rng.NormFloat64()), y})
		for range fan {
			A.rows = append(A.rows, []string{key, num(rng.NormFloat64()), num(rng.Float64())})
		}
	}
	return newCase(t, map[string]*caseTable{"C": C, "A": A}, []string{"C.k = A.k"})
}

// TestFanoutTime logs the time per join row of a star with fan-out 10
// beside the one-to-one case with as many join rows (BOOST_FANOUT=1;
// docs/boost.md).
func TestFanoutTime(t *testing.T) {
	if os.Getenv("BOOST_FANOUT") == "" {
		t.Skip("BOOST_FANOUT=1 to measure")
	}
	const n = 20000
	p := boost.DefaultParams()
	p.Trees = 3
	var per [2]time.Duration
	for i, fan := range []int{1, 10} {
		c := fanoutCase(t, n, fan)
		t0 := time.Now()
		if _, err := boost.Train(c.g, c.data, p); err != nil {
			t.Fatal(err)
		}
		per[i] = time.Since(t0) / time.Duration(p.Trees*n)
	}
	t.Logf("%d join rows, depth %d, in the clear: %v per tree per join row one-to-one, %v with fan-out 10 (ratio %.2f)",
		n, p.MaxDepth, per[0], per[1], float64(per[1])/float64(per[0]))
}
