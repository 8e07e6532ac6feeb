package graphanon

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// §8.2: with two shared classes and one shared group, leak 0.2, class
// noise 0.4 and group noise 0.6, the most likely friendship is
// 1 − 0.8·0.6·0.6·0.4 = 0.8848, the paper's "0.89".
func TestNoisyOrPaperMaximum(t *testing.T) {
	if p := NoisyOr(0.2, 0.4, 0.4, 0.6); !near(p, 0.8848) {
		t.Errorf("noisy-or of two classes and a group = %v, want 0.8848", p)
	}
	if p := NoisyOr(0.2); !near(p, 0.2) {
		t.Errorf("no observation: %v, want the leak", p)
	}
}

// The uncertain noisy-or equals §6.1's sum over every assignment of the
// observations, Σ_o P(eˢ | o) ∏ P(oₖ), written out term by term.
func TestNoisyOrUncertainIsThePapersSum(t *testing.T) {
	lambdas := []float64{0.4, 0.4, 0.6, 0.1}
	probs := []float64{0.3, 0.7, 0.5, 1}
	sum := 0.0
	for o := range 1 << len(lambdas) {
		given, weight := 1-0.2, 1.0
		for l := range lambdas {
			if o>>l&1 == 1 {
				given *= 1 - lambdas[l]
				weight *= probs[l]
			} else {
				weight *= 1 - probs[l]
			}
		}
		sum += (1 - given) * weight
	}
	if p := NoisyOrUncertain(0.2, lambdas, probs); !near(p, sum) {
		t.Errorf("closed form %v, the paper's sum %v", p, sum)
	}
}

// twoClasses is §7.2's example: two classes of 10 nodes (by a
// quasi-identifier, k = 10) and one observed type on `cross` of the 100
// pairs between them.
func twoClasses(cross int) *Graph {
	g := &Graph{Quasi: []string{"q"}, Sensitive: "s"}
	for i := range 20 {
		g.Nodes = append(g.Nodes, Node{ID: strconv.Itoa(i), Attrs: []string{strconv.Itoa(i / 10)}})
	}
	for i := range cross {
		g.Edges = append(g.Edges, Edge{A: i / 10, B: 10 + i%10, Type: "o"})
	}
	return g
}

// §7.2: "if the two equivalence classes have exactly 10 nodes each, and
// the observation exists for 30 of the two-node edges, then the edge
// probability is 0.3" (and 50 of 100 pairs is 0.5): the cluster-edge
// adversary's P(o) between the classes.
func TestClusterObservationProbability(t *testing.T) {
	m := Model{Leak: 0.2, Lambda: map[string]float64{"o": 0.6}}
	for cross, po := range map[int]float64{30: 0.3, 50: 0.5} {
		g := twoClasses(cross)
		an, err := Anonymise(context.Background(), g, Options{K: 10, Strategy: Cluster}, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		if len(an.Release.Classes) != 2 || len(an.Release.Edges) != 1 || an.Release.Edges[0].Count != cross {
			t.Fatalf("release %+v", an.Release)
		}
		adv, err := NewAdversary(&an.Release, m)
		if err != nil {
			t.Fatal(err)
		}
		want := NoisyOrUncertain(0.2, []float64{0.6}, []float64{po})
		if p := adv.Prob(an.Place[0], an.Place[15]); !near(p, want) {
			t.Errorf("%d of 100 pairs: P = %v, want %v (P(o) = %v)", cross, p, want, po)
		}
		if p := adv.Prob(an.Place[0], an.Place[5]); !near(p, 0.2) {
			t.Errorf("two nodes of one class with no edge inside: P = %v, want the leak", p)
		}
	}
}

// §7.2's uniform estimate: c courses, n per student, s students, courses
// of p = s·n/c; the adversary's P(classes) is n·(p−1) over s−1 (the
// paper's text divides by |V|², see the package doc). Ten courses of ten
// students, one each: 9/99.
func TestConstrainedUniformEstimate(t *testing.T) {
	const s, c, n = 100, 10, 1
	g := &Graph{Sensitive: "friend"}
	for i := range s {
		g.Nodes = append(g.Nodes, Node{ID: strconv.Itoa(i)})
	}
	for a := range s {
		for b := a + 1; b < s; b++ {
			if a%c == b%c {
				g.Edges = append(g.Edges, Edge{A: a, B: b, Type: "class"})
			}
		}
	}
	an, err := Anonymise(context.Background(), g, Options{K: 5, Strategy: ClusterConstrained}, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	adv, err := NewAdversary(&an.Release, Model{Leak: 0.2, Lambda: map[string]float64{"class": 0.4}})
	if err != nil {
		t.Fatal(err)
	}
	p := float64(s*n) / c
	want := NoisyOrUncertain(0.2, []float64{0.4}, []float64{n * (p - 1) / (s - 1)})
	for _, e := range [][2]int{{0, 10}, {3, 93}} {
		if got := adv.Prob(an.Place[e[0]], an.Place[e[1]]); !near(got, want) {
			t.Errorf("pair %v: P = %v, want %v", e, got, want)
		}
	}
}

// Predicted, on the release alone, counts what Evaluate counts with the
// graph in hand; at ρ = 0.8 the intact release's predictions are exactly
// the pairs sharing a group and a class (0.808) or two (0.8848), the only
// pairs above 0.8 (two classes alone give 0.712, a group alone 0.68).
func TestPredictedMatchesEvaluate(t *testing.T) {
	p := PaperParams(10, 10, 7)
	g, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	rhos := []float64{0.5, 0.8}
	for _, s := range Strategies() {
		an, err := Anonymise(context.Background(), g, Options{K: 5, Strategy: s, Remove: 0.5}, rand.New(rand.NewPCG(5, 6)))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Evaluate(context.Background(), g, an, p.Model(), rhos)
		if err != nil {
			t.Fatal(err)
		}
		pred, err := Predicted(context.Background(), &an.Release, p.Model(), rhos)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rhos {
			if pred[i] != rep.Thresholds[i].Predicted {
				t.Errorf("%s ρ=%v: %d predicted from the release, %d with the graph", s, rhos[i], pred[i], rep.Thresholds[i].Predicted)
			}
		}
		if s == Intact {
			obs := map[pair][2]int{}
			for _, e := range g.Edges {
				o := obs[pairOf(e.A, e.B)]
				switch e.Type {
				case TypeClass:
					o[0]++
				case TypeGroup:
					o[1]++
				}
				obs[pairOf(e.A, e.B)] = o
			}
			top := 0
			for _, o := range obs {
				if o[0] >= 1 && o[1] >= 1 {
					top++
				}
			}
			if top == 0 || rep.Thresholds[1].Predicted != top {
				t.Errorf("intact at 0.8: %d predicted, %d pairs share a class and a group", rep.Thresholds[1].Predicted, top)
			}
		}
	}
}
