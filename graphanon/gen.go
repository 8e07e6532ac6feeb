package graphanon

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
)

// GenParams are the generator's inputs (§8.1): students, the classes and
// groups on offer, how many each student joins, how many each may hold,
// and the noisy-or that draws the friendships.
type GenParams struct {
	Students          int
	Classes, Groups   int
	ClassesPerStudent int
	GroupsPerStudent  int
	MaxPerClass       int
	MaxPerGroup       int
	Leak              float64 // P(friends), 0.2
	LambdaClass       float64 // P(friends | classmates), 0.4
	LambdaGroup       float64 // P(friends | groupmates), 0.6
	Seed              uint64
}

// The edge types Generate writes.
const (
	TypeClass  = "class"
	TypeGroup  = "group"
	TypeFriend = "friend"
)

// PaperParams are §8.1's: 100 students taking 2 classes of at most 25 and
// belonging to 1 research group of at most 15, leak 0.2, noise 0.4 for a
// shared class and 0.6 for a shared group; classes and groups range over
// [10, 30] (10 and 10 dense, 30 and 30 sparse).
func PaperParams(classes, groups int, seed uint64) GenParams {
	return GenParams{Students: 100, Classes: classes, Groups: groups, ClassesPerStudent: 2, GroupsPerStudent: 1,
		MaxPerClass: 25, MaxPerGroup: 15, Leak: 0.2, LambdaClass: 0.4, LambdaGroup: 0.6, Seed: seed}
}

// Model is the noisy-or the generator draws friendships from, which the
// paper's adversary knows.
func (p GenParams) Model() Model {
	return Model{Leak: p.Leak, Lambda: map[string]float64{TypeClass: p.LambdaClass, TypeGroup: p.LambdaGroup}}
}

// Generate builds the graph: each student joins random classes and groups
// with room left, a class edge joins two students per class they share
// and a group edge per group, and a friend edge (sensitive) is drawn per
// pair with the noisy-or's probability. Students carry two
// quasi-identifiers, year (1–4) and track (a–c), drawn at random.
func Generate(p GenParams) (*Graph, error) {
	if p.Students < 2 || p.Classes*p.MaxPerClass < p.Students*p.ClassesPerStudent ||
		p.Groups*p.MaxPerGroup < p.Students*p.GroupsPerStudent ||
		p.ClassesPerStudent > p.Classes || p.GroupsPerStudent > p.Groups {
		return nil, fmt.Errorf("graphanon: the classes and groups cannot hold every student")
	}
	rng := rand.New(rand.NewPCG(p.Seed, 0x9e3779b97f4a7c15))
	g := &Graph{Quasi: []string{"year", "track"}, Sensitive: TypeFriend, Nodes: make([]Node, p.Students)}
	for i := range g.Nodes {
		g.Nodes[i] = Node{ID: fmt.Sprintf("student-%04d", i+1),
			Attrs: []string{strconv.Itoa(1 + rng.IntN(4)), string(rune('a' + rng.IntN(3)))}}
	}
	classes, err := enrol(rng, p.Students, p.Classes, p.ClassesPerStudent, p.MaxPerClass)
	if err != nil {
		return nil, err
	}
	groups, err := enrol(rng, p.Students, p.Groups, p.GroupsPerStudent, p.MaxPerGroup)
	if err != nil {
		return nil, err
	}
	for a := range p.Students {
		for b := a + 1; b < p.Students; b++ {
			var lambdas []float64
			for range shared(classes[a], classes[b]) {
				g.Edges = append(g.Edges, Edge{A: a, B: b, Type: TypeClass})
				lambdas = append(lambdas, p.LambdaClass)
			}
			for range shared(groups[a], groups[b]) {
				g.Edges = append(g.Edges, Edge{A: a, B: b, Type: TypeGroup})
				lambdas = append(lambdas, p.LambdaGroup)
			}
			if rng.Float64() < NoisyOr(p.Leak, lambdas...) {
				g.Edges = append(g.Edges, Edge{A: a, B: b, Type: TypeFriend})
			}
		}
	}
	return g, nil
}

// enrol gives each of n students per random sets (of sets) with fewer
// than capacity members, distinct per student.
func enrol(rng *rand.Rand, n, sets, per, capacity int) ([][]int, error) {
	size := make([]int, sets)
	out := make([][]int, n)
	for s := range out {
		for range per {
			var open []int
			for c := range sets {
				if size[c] < capacity && !slices.Contains(out[s], c) {
					open = append(open, c)
				}
			}
			if len(open) == 0 {
				return nil, fmt.Errorf("graphanon: no class or group has room left")
			}
			c := open[rng.IntN(len(open))]
			out[s] = append(out[s], c)
			size[c]++
		}
	}
	return out, nil
}

// shared is the number of sets two students share.
func shared(a, b []int) int {
	n := 0
	for _, c := range a {
		if slices.Contains(b, c) {
			n++
		}
	}
	return n
}
