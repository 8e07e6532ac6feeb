package boost_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
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
// beside the one-to-one case with as many join rows (BOOST_FANOUT=1 in
// the clear with 20,000 join rows; BOOST_FANOUT=paillier under 2048-bit
// packed Paillier with BOOST_ROWS join rows, 2,000 by default, and one
// tree: wall and CPU time; docs/boost.md).
func TestFanoutTime(t *testing.T) {
	mode := os.Getenv("BOOST_FANOUT")
	if mode == "" {
		t.Skip("BOOST_FANOUT=1 or paillier to measure")
	}
	n := 20000
	p := boost.DefaultParams()
	p.Trees = 3
	if mode == "paillier" {
		n, p.Trees = 2000, 1
		if v, err := strconv.Atoi(os.Getenv("BOOST_ROWS")); err == nil && v > 0 {
			n = v
		}
	}
	var per, cpu [2]time.Duration
	for i, fan := range []int{1, 10} {
		c := fanoutCase(t, n, fan)
		crypto := plainCrypto()
		if mode == "paillier" {
			crypto = paillierCryptoPool(t, 2048, uint64(n), 64)
		}
		c0, t0 := cpuTime(t), time.Now()
		if _, err := boost.TrainWith(c.g, c.data, p, crypto); err != nil {
			t.Fatal(err)
		}
		per[i], cpu[i] = time.Since(t0)/time.Duration(p.Trees*n), (cpuTime(t)-c0)/time.Duration(p.Trees*n)
	}
	t.Logf("%d join rows, depth %d, %s: per tree per join row %v (CPU %v) one-to-one, %v (CPU %v) with fan-out 10 (ratio %.2f, CPU %.2f)",
		n, p.MaxDepth, mode, per[0], cpu[0], per[1], cpu[1], float64(per[1])/float64(per[0]), float64(cpu[1])/float64(cpu[0]))
}
