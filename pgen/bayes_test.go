package pgen_test

import (
	"math"
	"testing"

	"github.com/cohortdm/cohort/pgen"
	"github.com/cohortdm/cohort/tree"
)

// A model worked by hand. Rows (a, n, class): (x, 1, yes), (x, 3, yes),
// (y, 5, no), (y, 7, no), (x, 6, no). Priors (Laplace) 3/7 and 4/7;
// P(a = x | yes) = (2+1)/(2+2) = 3/4, P(a = x | no) = (1+1)/(3+2) = 2/5;
// n given yes is N(2, √2), given no N(6, 1); the precision is 1/6 (the
// smallest gap, 1, over 6). For (x, 4): log-scores yes −3.4005, no
// −4.3948, so yes; for (x, 5): yes −4.6505, no −2.8948, so no. An unknown
// value of a is skipped: (z, 2) is yes on n alone.
func TestNaiveBayesByHand(t *testing.T) {
	t.Parallel()
	d := &tree.Data{
		Labels: []string{"no", "yes"},
		Class:  []int32{1, 1, 0, 0, 0},
		Attrs: []*tree.Attr{
			{Name: "a", Values: []string{"x", "y"}, Code: []int32{0, 0, 1, 1, 0}},
			{Name: "n", Numeric: true, Num: []float64{1, 3, 5, 7, 6}},
		},
	}
	m := pgen.LearnBayes(d)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	n := m.Attrs[1]
	if m.Prior[0] != 3 || m.Prior[1] != 2 || m.Attrs[0].Counts[0][1] != 2 || m.Attrs[0].Counts[0][0] != 1 ||
		!near(n.Mean[1], 2) || !near(n.SD[1], math.Sqrt2) || !near(n.Mean[0], 6) || !near(n.SD[0], 1) || !near(n.Precision, 1.0/6) {
		t.Fatalf("model %+v", m)
	}
	for _, c := range []struct {
		a    string
		n    float64
		want string
	}{{"x", 4, "yes"}, {"x", 5, "no"}, {"z", 2, "yes"}, {"y", 2, "yes"}, {"y", 4, "no"}} {
		got := m.Classify(func(name string) (float64, string, bool) {
			if name == "a" {
				return 0, c.a, true
			}
			return c.n, "", true
		})
		if m.Labels[got] != c.want {
			t.Errorf("(%s, %v): %s, want %s", c.a, c.n, m.Labels[got], c.want)
		}
	}
	if got := pgen.CorrectBayes(m, d); got != 5 {
		t.Errorf("the model classifies %d of its 5 rows right, want 5", got)
	}
	// A constant attribute's deviation is the floor, 1: no infinity.
	d.Attrs[1].Num = []float64{4, 4, 4, 4, 4}
	if m := pgen.LearnBayes(d); m.Attrs[1].SD[0] != 1 || m.Attrs[1].SD[1] != 1 {
		t.Errorf("constant attribute: deviations %v", m.Attrs[1].SD)
	}
}
