package graphanon

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// Fig. 9 of docs/graph.md: precision and share disclosed of 50 % removal
// and cluster-edge at k = 6 as the classmate density rises (100 students,
// 10 classes, 10 groups; the classes per student vary, each class holding
// any number, since 10 classes of 25 hold only 2 per student), averaged
// over generated graphs. The density is the share of pairs sharing a
// class; the friendship density is the share of pairs that are friends.
//
//	COHORT_GRAPH_GRAPHS=100 go test ./graphanon -run TestClassmateDensity -v -count=1
func TestClassmateDensity(t *testing.T) {
	graphs := 3
	if s := os.Getenv("COHORT_GRAPH_GRAPHS"); s != "" {
		var err error
		if graphs, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	rhos := []float64{0.6, 0.8}
	t.Logf("| classes per student | classmate density | friendship density | method | precision ρ=0.6 | disclosed ρ=0.6 | precision ρ=0.8 | disclosed ρ=0.8 |")
	for per := 1; per <= 4; per++ {
		var classmates, friends float64
		sums := map[string][]float64{}
		for s := range graphs {
			p := PaperParams(10, 10, uint64(100*per+s))
			p.ClassesPerStudent, p.MaxPerClass = per, p.Students
			g, err := Generate(p)
			if err != nil {
				t.Fatal(err)
			}
			g.Quasi = nil
			for i := range g.Nodes {
				g.Nodes[i].Attrs = nil
			}
			shared := map[pair]bool{}
			for _, e := range g.Edges {
				if e.Type == TypeClass {
					shared[pairOf(e.A, e.B)] = true
				}
			}
			pairs := float64(len(g.Nodes) * (len(g.Nodes) - 1) / 2)
			classmates += float64(len(shared)) / pairs / float64(graphs)
			friends += float64(len(g.SensitivePairs())) / pairs / float64(graphs)
			for _, m := range []method{{"partial 50 %", Options{K: 6, Strategy: Partial, Remove: 0.5}}, {"cluster k=6", Options{K: 6, Strategy: Cluster}}} {
				an, err := Anonymise(context.Background(), g, m.opt, rand.New(rand.NewPCG(uint64(s), uint64(per))))
				if err != nil {
					t.Fatal(err)
				}
				r, err := Evaluate(context.Background(), g, an, p.Model(), rhos)
				if err != nil {
					t.Fatal(err)
				}
				if sums[m.name] == nil {
					sums[m.name] = make([]float64, 4)
				}
				for i, th := range r.Thresholds {
					sums[m.name][2*i] += th.Precision / float64(graphs)
					sums[m.name][2*i+1] += th.Disclosed / float64(graphs)
				}
			}
		}
		for _, name := range []string{"partial 50 %", "cluster k=6"} {
			v := sums[name]
			t.Logf("| %d | %.2f | %.2f | %s | %.3f | %.3f | %.3f | %.3f |", per, classmates, friends, name, v[0], v[1], v[2], v[3])
		}
	}
}

// §8.3's size experiment: precision and share disclosed stay the same
// for 100 to 400 students at fixed densities (10 classes, 10 groups,
// class and group sizes unbounded, k = 6), at ρ = 0.4 and 0.6 (the
// paper's threshold for it is not given).
//
//	COHORT_GRAPH_GRAPHS=20 go test ./graphanon -run TestSizeInvariance -v -count=1
func TestSizeInvariance(t *testing.T) {
	graphs := 2
	if s := os.Getenv("COHORT_GRAPH_GRAPHS"); s != "" {
		var err error
		if graphs, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	rhos := []float64{0.4, 0.6}
	t.Logf("| students | method | precision ρ=0.4 | disclosed ρ=0.4 | precision ρ=0.6 | disclosed ρ=0.6 |")
	for _, n := range []int{100, 200, 300, 400} {
		for _, m := range []method{{"partial 50 %", Options{K: 6, Strategy: Partial, Remove: 0.5}},
			{"intact", Options{K: 6, Strategy: Intact}}, {"cluster k=6", Options{K: 6, Strategy: Cluster}}} {
			v := make([]float64, 4)
			for s := range graphs {
				p := PaperParams(10, 10, uint64(1000*n+s))
				p.Students, p.MaxPerClass, p.MaxPerGroup = n, n, n
				g, err := Generate(p)
				if err != nil {
					t.Fatal(err)
				}
				an, err := Anonymise(context.Background(), g, m.opt, rand.New(rand.NewPCG(uint64(s), uint64(n))))
				if err != nil {
					t.Fatal(err)
				}
				r, err := Evaluate(context.Background(), g, an, p.Model(), rhos)
				if err != nil {
					t.Fatal(err)
				}
				for i, th := range r.Thresholds {
					v[2*i] += th.Precision / float64(graphs)
					v[2*i+1] += th.Disclosed / float64(graphs)
				}
			}
			t.Logf("| %d | %s | %.3f | %.3f | %.3f | %.3f |", n, m.name, v[0], v[1], v[2], v[3])
		}
	}
}
