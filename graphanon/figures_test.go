package graphanon

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// method is one curve of Figs. 7 and 8: a strategy and its k.
type method struct {
	name string
	opt  Options
}

// paperMethods are the six anonymisations of Figs. 7–8 and the removal
// of every edge.
func paperMethods() []method {
	return []method{
		{"intact", Options{K: 2, Strategy: Intact}},
		{"partial 50 %", Options{K: 2, Strategy: Partial, Remove: 0.5}},
		{"cluster k=2", Options{K: 2, Strategy: Cluster}},
		{"cluster k=6", Options{K: 6, Strategy: Cluster}},
		{"constrained k=2", Options{K: 2, Strategy: ClusterConstrained}},
		{"constrained k=6", Options{K: 6, Strategy: ClusterConstrained}},
		{"removed", Options{K: 2, Strategy: Removed}},
	}
}

var paperRhos = []float64{0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}

// mean is one method's averages over the graphs.
type mean struct {
	correct, predicted, precision, disclosed, delta []float64
	removed                                         float64
}

// averages runs every method on graphs generated with classes and groups
// (random equivalence classes, as §8.2 assigns them) and averages them.
func averages(t testing.TB, classes, groups, graphs int) []mean {
	out := make([]mean, len(paperMethods()))
	for i := range out {
		n := len(paperRhos)
		out[i] = mean{make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), 0}
	}
	for s := range graphs {
		p := PaperParams(classes, groups, uint64(s+1))
		g, err := Generate(p)
		if err != nil {
			t.Fatal(err)
		}
		g.Quasi = nil
		for i := range g.Nodes {
			g.Nodes[i].Attrs = nil
		}
		for i, m := range paperMethods() {
			an, err := Anonymise(context.Background(), g, m.opt, rand.New(rand.NewPCG(uint64(s), uint64(i))))
			if err != nil {
				t.Fatal(err)
			}
			r, err := Evaluate(context.Background(), g, an, p.Model(), paperRhos)
			if err != nil {
				t.Fatal(err)
			}
			f := 1 / float64(graphs)
			out[i].removed += f * r.RemovedShare
			for j, th := range r.Thresholds {
				out[i].correct[j] += f * float64(th.Correct)
				out[i].predicted[j] += f * float64(th.Predicted)
				out[i].precision[j] += f * th.Precision
				out[i].disclosed[j] += f * th.Disclosed
				out[i].delta[j] += f * th.Delta
			}
		}
	}
	return out
}

// The figures of docs/graph.md: Figs. 7 and 8 (correct sensitive pairs
// and precision against ρ) on the dense (10 classes, 10 groups) and sparse
// (30, 30) graphs, and the share of sensitive pairs disclosed against the
// observations removed, averaged over generated graphs (100 in the paper).
//
//	COHORT_GRAPH_GRAPHS=100 go test ./graphanon -run TestFigures -v -count=1
func TestFigures(t *testing.T) {
	graphs := 3
	if s := os.Getenv("COHORT_GRAPH_GRAPHS"); s != "" {
		var err error
		if graphs, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []struct {
		name            string
		classes, groups int
	}{{"dense", 10, 10}, {"sparse", 30, 30}} {
		ms := averages(t, d.classes, d.groups, graphs)
		head := "| method | removed |"
		for _, r := range paperRhos {
			head += fmt.Sprintf(" ρ=%.1f |", r)
		}
		for _, tab := range []struct {
			what string
			get  func(mean) []float64
			f    string
		}{{"correct sensitive pairs (Fig. 7)", func(m mean) []float64 { return m.correct }, " %.1f |"},
			{"predicted pairs", func(m mean) []float64 { return m.predicted }, " %.1f |"},
			{"precision (Fig. 8)", func(m mean) []float64 { return m.precision }, " %.3f |"},
			{"share of sensitive pairs disclosed", func(m mean) []float64 { return m.disclosed }, " %.3f |"},
			{"δ = predicted/|V|² (eq. 1)", func(m mean) []float64 { return m.delta }, " %.4f |"}} {
			t.Logf("%s graph (%d classes, %d groups), %d graphs: %s", d.name, d.classes, d.groups, graphs, tab.what)
			t.Log(head)
			for i, m := range paperMethods() {
				line := fmt.Sprintf("| %s | %.1f %% |", m.name, 100*ms[i].removed)
				for _, v := range tab.get(ms[i]) {
					line += fmt.Sprintf(tab.f, v)
				}
				t.Log(line)
			}
		}
	}
}

// The findings of §8.3 hold on 10 graphs of each density: at ρ = 0.6 and
// 0.8 cluster-edge (k = 2 and 6) finds fewer true friendships than
// removing 50 % of the edges, while removing none; a lower k discloses
// more; the two constrained methods agree from ρ = 0.4 up; removing
// every edge leaves nothing above the leak.
func TestPaperFindings(t *testing.T) {
	const intact, partial, c2, c6, k2, k6, removed = 0, 1, 2, 3, 4, 5, 6
	for _, d := range [][2]int{{10, 10}, {30, 30}} {
		ms := averages(t, d[0], d[1], 10)
		for j, r := range paperRhos {
			if r >= 0.6 && (ms[c2].correct[j] >= ms[partial].correct[j] || ms[c6].correct[j] >= ms[partial].correct[j]) {
				t.Errorf("%v ρ=%v: cluster finds %v and %v, partial %v", d, r, ms[c2].correct[j], ms[c6].correct[j], ms[partial].correct[j])
			}
			if r >= 0.4 && (ms[c2].correct[j] < ms[c6].correct[j] || ms[k2].correct[j] != ms[k6].correct[j]) {
				t.Errorf("%v ρ=%v: cluster k=2 %v, k=6 %v; constrained k=2 %v, k=6 %v", d, r,
					ms[c2].correct[j], ms[c6].correct[j], ms[k2].correct[j], ms[k6].correct[j])
			}
			if ms[removed].predicted[j] != 0 || ms[intact].correct[j] < ms[partial].correct[j] {
				t.Errorf("%v ρ=%v: removed predicts %v; intact finds %v, partial %v", d, r,
					ms[removed].predicted[j], ms[intact].correct[j], ms[partial].correct[j])
			}
		}
		if ms[intact].removed != 0 || ms[c2].removed != 0 || math.Abs(ms[removed].removed-1) > 1e-9 ||
			!(ms[partial].removed >= 0.5 && ms[partial].removed < 0.51) || !(ms[k2].removed < ms[k6].removed) {
			t.Errorf("%v: observations removed %v %v %v %v %v", d, ms[intact].removed, ms[partial].removed,
				ms[k2].removed, ms[k6].removed, ms[removed].removed)
		}
	}
}
