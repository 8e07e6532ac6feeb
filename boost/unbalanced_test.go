package boost_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/psi"
)

// TestSimUnbalanced: a star whose class table T holds 40 of A's 5,000
// join values, trained over real nodes with psi forced to ECDH and with
// the default (auto), which runs psi's unbalanced mode on that edge (A's
// owner serving from a key it keeps in its data dir by the data A
// resolves to, T's owner fetching the filter): both models are the
// library's, so the intersection is ECDH's, and every message of the
// auto run keeps to the leakage profile.
func TestSimUnbalanced(t *testing.T) {
	t.Parallel()
	c := unbalancedStar(t)
	p := testParams()
	p.Trees = 2
	want, err := boost.Train(c.g, c.data, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"ecdh", ""} {
		p.PSI = mode
		res, out, capt := simRun(t, c, p)
		if got, w := modelOf(t, res), modelJSON(t, *want); got != w {
			t.Fatalf("psi %q: the job's model differs from the library's\n got: %s\nwant: %s", mode, got, w)
		}
		up := 0
		capt.mu.Lock()
		for _, sm := range capt.sent {
			if strings.HasPrefix(sm.Message.Type, "psi/up-") {
				up++
			}
		}
		capt.mu.Unlock()
		if (up > 0) != (mode == "") {
			t.Fatalf("psi %q: %d messages of the unbalanced mode", mode, up)
		}
		if mode == "" {
			checkLeakageOf(t, c, want, out, capt, false, nil, []string{boost.TypeCombos, boost.TypeGradients, boost.TypeBins, boost.TypeSplit,
				psi.TypeUpOffer, psi.TypeUpFetch, psi.TypeUpFilter, psi.TypeUpQuery, psi.TypeUpEval, psi.TypeUpMatch})
		}
	}
}

// unbalancedStar: the class table T (alice) joins A (bob) on a, whose
// 5,000 values T takes 40 of (far enough apart for psi's unbalanced
// mode), and B (carol) on b, small on both sides.
func unbalancedStar(t *testing.T) *joinCase {
	rng := rand.New(rand.NewPCG(5, 3))
	A := &caseTable{party: "bob", cols: []string{"a", "u"}, kinds: map[string]string{"a": "key", "u": "numeric"}}
	ua := map[string]float64{}
	for k := range 5000 {
		key, u := fmt.Sprintf("a%d", k), float64(rng.IntN(10))
		A.rows = append(A.rows, []string{key, num(u)})
		ua[key] = u
	}
	B := &caseTable{party: "carol", cols: []string{"b", "w"}, kinds: map[string]string{"b": "key", "w": "numeric"}}
	for k := range 15 {
		B.rows = append(B.rows, []string{fmt.Sprintf("b%d", k), num(float64(rng.IntN(7)))})
	}
	T := &caseTable{party: "alice", cols: []string{"a", "b", "x", "y"}, kinds: map[string]string{"a": "key", "b": "key", "x": "numeric", "y": "class"}}
	for range 120 {
		a, b := fmt.Sprintf("a%d", 7*rng.IntN(40)), fmt.Sprintf("b%d", rng.IntN(15))
		x := rng.NormFloat64()
		y := "no"
		if x+ua[a]/5+rng.NormFloat64() > 1.5 {
			y = "yes"
		}
		T.rows = append(T.rows, []string{a, b, num(x), y})
	}
	return newCase(t, map[string]*caseTable{"T": T, "A": A, "B": B}, []string{"T.a = A.a", "T.b = B.b"})
}
