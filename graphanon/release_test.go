package graphanon

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// multiset counts a graph's observed edges by (pair, type) under a map of
// its nodes.
func multiset(g *Graph, place func(int) int) map[ReleasedEdge]int {
	out := map[ReleasedEdge]int{}
	for _, e := range g.Edges {
		if e.Type != g.Sensitive {
			p := pairOf(place(e.A), place(e.B))
			out[ReleasedEdge{A: string(rune(p.a)), B: string(rune(p.b)), Type: e.Type}]++
		}
	}
	return out
}

// Every strategy on a generated graph: no sensitive edge leaves, classes
// hold at least k nodes and publish every member's quasi-identifiers, and
// each strategy keeps and removes what Figs. 2–6 say.
func TestStrategies(t *testing.T) {
	p := PaperParams(10, 10, 11)
	g, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	obs := g.Observations()
	for _, k := range []int{2, 6, 7} {
		for _, s := range Strategies() {
			an, err := Anonymise(context.Background(), g, Options{K: k, Strategy: s, Remove: 0.5}, rand.New(rand.NewPCG(uint64(k), 1)))
			if err != nil {
				t.Fatal(err)
			}
			rel := an.Release
			checkClasses(t, g, an, k)
			released := 0
			for _, e := range rel.Edges {
				if e.Type == g.Sensitive || e.Count < 1 {
					t.Fatalf("%s: released edge %+v", s, e)
				}
				released += e.Count
			}
			switch s {
			case Intact, Partial, Removed:
				if len(rel.Nodes) != len(g.Nodes) || len(rel.Constraints) != 0 {
					t.Errorf("%s: %d nodes, %d constraints", s, len(rel.Nodes), len(rel.Constraints))
				}
			default:
				if len(rel.Nodes) != 0 || len(rel.Constraints) != 2 {
					t.Errorf("%s: %d nodes, %d constraints", s, len(rel.Nodes), len(rel.Constraints))
				}
			}
			want := map[Strategy]int{Intact: 0, Cluster: 0, Removed: obs,
				Partial:            int(math.Ceil(0.5*float64(count(g, TypeClass)))) + int(math.Ceil(0.5*float64(count(g, TypeGroup)))),
				ClusterConstrained: obs - released}
			if an.Removed != want[s] || released+an.Removed != obs {
				t.Errorf("%s k=%d: %d released, %d removed of %d, want %d removed", s, k, released, an.Removed, obs, want[s])
			}
		}
	}
}

func count(g *Graph, typ string) int {
	n := 0
	for _, e := range g.Edges {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// checkClasses: every class holds at least k nodes (and fewer than 2k),
// and publishes each member's quasi-identifiers among its values.
func checkClasses(t *testing.T, g *Graph, an *Anonymised, k int) {
	t.Helper()
	total := 0
	for _, c := range an.Release.Classes {
		if c.Size < k || c.Size >= 2*k {
			t.Errorf("class %s holds %d nodes, k = %d", c.ID, c.Size, k)
		}
		total += c.Size
	}
	if total != len(g.Nodes) {
		t.Errorf("classes hold %d nodes of %d", total, len(g.Nodes))
	}
	classOf := classesOf(an)
	for v, n := range g.Nodes {
		c := an.Release.Classes[classOf[v]]
		for q, val := range n.Attrs {
			if !slices.Contains(c.Attrs[q], val) {
				t.Fatalf("node %d's quasi-identifier %d is not among its class's values", v, q)
			}
		}
	}
}

// classesOf maps the graph's nodes to their class index through Place.
func classesOf(an *Anonymised) []int {
	index := map[string]int{}
	var virtual []int
	for c, cl := range an.Release.Classes {
		index[cl.ID] = c
		for range cl.Size {
			virtual = append(virtual, c)
		}
	}
	out := make([]int, len(an.Place))
	for v, p := range an.Place {
		if an.Release.Strategy.Clustered() {
			out[v] = virtual[p]
		} else {
			out[v] = index[an.Release.Nodes[p].Class]
		}
	}
	return out
}

// Intact releases the observed multigraph itself under pseudonyms, and
// cluster its image on the classes; nodes with equal quasi-identifiers
// share classes before any others do.
func TestIntactAndClusterKeepEveryObservation(t *testing.T) {
	g, err := Generate(PaperParams(20, 20, 3))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []Strategy{Intact, Cluster} {
		an, err := Anonymise(context.Background(), g, Options{K: 4, Strategy: s}, rand.New(rand.NewPCG(9, 9)))
		if err != nil {
			t.Fatal(err)
		}
		classOf := classesOf(an)
		place := func(v int) int { return an.Place[v] }
		ids := func(i int) string { return an.Release.Nodes[i].ID }
		if s == Cluster {
			place = func(v int) int { return classOf[v] }
			ids = func(i int) string { return an.Release.Classes[i].ID }
		}
		want := map[ReleasedEdge]int{}
		for e, n := range multiset(g, place) {
			a, b := int([]rune(e.A)[0]), int([]rune(e.B)[0])
			want[ReleasedEdge{A: ids(a), B: ids(b), Type: e.Type}] = n
		}
		got := map[ReleasedEdge]int{}
		for _, e := range an.Release.Edges {
			got[ReleasedEdge{A: e.A, B: e.B, Type: e.Type}] = e.Count
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d released edges, want %d", s, len(got), len(want))
		}
		for e, n := range want {
			if got[e] != n {
				t.Errorf("%s: edge %v released %d times, want %d", s, e, got[e], n)
			}
		}
	}
	an, _ := Anonymise(context.Background(), g, Options{K: 4, Strategy: Removed}, rand.New(rand.NewPCG(1, 1)))
	classOf := classesOf(an)
	for c := range an.Release.Classes {
		var keys [][]string
		for v := range g.Nodes {
			if classOf[v] == c {
				keys = append(keys, g.Nodes[v].Attrs)
			}
		}
		for v := range g.Nodes {
			if classOf[v] != c && slices.Compare(g.Nodes[v].Attrs, slices.MinFunc(keys, slices.Compare)) > 0 &&
				slices.Compare(g.Nodes[v].Attrs, slices.MaxFunc(keys, slices.Compare)) < 0 {
				t.Fatalf("node %d lies inside class %d's range of quasi-identifiers but not in it", v, c)
			}
		}
	}
}

// Bad options are refused by name.
func TestAnonymiseRefuses(t *testing.T) {
	g, _ := Generate(PaperParams(10, 10, 1))
	for _, o := range []Options{{K: 1, Strategy: Intact}, {K: 101, Strategy: Intact}, {K: 2, Strategy: Partial, Remove: 1},
		{K: 2, Strategy: "merged"}} {
		if _, err := Anonymise(context.Background(), g, o, rand.New(rand.NewPCG(1, 1))); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	bad := *g
	bad.Edges = append(slices.Clone(g.Edges), Edge{A: 3, B: 3, Type: TypeClass})
	if _, err := Anonymise(context.Background(), &bad, Options{K: 2, Strategy: Intact}, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("a loop accepted")
	}
}

// The generator keeps §8.1's constraints: two classes of at most 25 and
// one group of at most 15 per student, and the same seed gives the same
// graph.
func TestGenerate(t *testing.T) {
	g, err := Generate(PaperParams(10, 10, 5))
	if err != nil {
		t.Fatal(err)
	}
	h, _ := Generate(PaperParams(10, 10, 5))
	if !slices.Equal(g.Edges, h.Edges) {
		t.Error("one seed, two graphs")
	}
	if _, err := Generate(PaperParams(7, 10, 5)); err == nil {
		t.Error("seven classes of 25 hold 200 enrolments")
	}
	// Classes: a student with c classmates-edges; within a class of size m
	// every pair is joined, so Σ edges = Σ m(m−1)/2 with Σ m = 200, m ≤ 25.
	deg := make([]int, len(g.Nodes))
	for _, e := range g.Edges {
		if e.Type == TypeGroup {
			deg[e.A]++
			deg[e.B]++
		}
	}
	if slices.Max(deg) > 14 {
		t.Errorf("a student has %d groupmates: a group holds more than 15", slices.Max(deg))
	}
	if n := count(g, TypeFriend); n < 1500 || n > 3000 {
		t.Errorf("%d friendships in the dense graph", n)
	}
}
