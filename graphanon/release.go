package graphanon

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
)

// Strategy is one of the five edge anonymisations of §4.2.
type Strategy string

const (
	// Intact releases every observed edge between the anonymised nodes
	// (Fig. 2).
	Intact Strategy = "intact"
	// Partial removes ⌈pct·|Eᵗ|⌉ random edges of each observed type
	// (Fig. 3).
	Partial Strategy = "partial"
	// Cluster collapses each class into one node and counts the edges of
	// each type between classes (Fig. 4).
	Cluster Strategy = "cluster"
	// ClusterConstrained collapses the classes and keeps, per type and
	// pair of classes, the most edges of the type between any two of
	// their nodes (Fig. 5 and the text below it).
	ClusterConstrained Strategy = "cluster-constrained"
	// Removed releases the anonymised nodes and no edge (Fig. 6).
	Removed Strategy = "removed"
)

// Strategies lists the five strategies in the paper's order.
func Strategies() []Strategy {
	return []Strategy{Intact, Partial, Cluster, ClusterConstrained, Removed}
}

// Clustered reports whether the release's nodes are the classes.
func (s Strategy) Clustered() bool { return s == Cluster || s == ClusterConstrained }

// Options choose the anonymisation: K is the fewest nodes in a class,
// Remove partial's share of each type removed (0 < Remove < 1).
type Options struct {
	K        int
	Strategy Strategy
	Remove   float64
}

// Release is what leaves: the classes with their generalised attributes,
// the anonymised nodes (none for the clustered strategies, whose nodes
// are the classes), the released edges, and the constraints the adversary
// is assumed to know (§4: "the constraints on the data").
type Release struct {
	Strategy    Strategy       `msgpack:"strategy" json:"strategy"`
	Quasi       []string       `msgpack:"quasi" json:"quasi"`
	Classes     []Class        `msgpack:"classes" json:"classes"`
	Nodes       []ReleasedNode `msgpack:"nodes" json:"nodes"`
	Edges       []ReleasedEdge `msgpack:"edges" json:"edges"`
	Constraints []Constraint   `msgpack:"constraints" json:"constraints"`
}

// Class is an equivalence class: its id, size, and per quasi-identifier
// the sorted set of values its nodes hold.
type Class struct {
	ID    string     `msgpack:"id" json:"id"`
	Size  int        `msgpack:"size" json:"size"`
	Attrs [][]string `msgpack:"attrs" json:"attrs"`
}

// ReleasedNode is an anonymised node: a pseudonym and its class.
type ReleasedNode struct {
	ID    string `msgpack:"id" json:"id"`
	Class string `msgpack:"class" json:"class"`
}

// ReleasedEdge joins two released nodes (pseudonyms, or class ids for
// the clustered strategies) by Count edges of one type.
type ReleasedEdge struct {
	A     string `msgpack:"a" json:"a"`
	B     string `msgpack:"b" json:"b"`
	Type  string `msgpack:"type" json:"type"`
	Count int    `msgpack:"count" json:"count"`
}

// Constraint is, for the clustered strategies, one observed type's most
// edges between any two nodes and its number of edges.
type Constraint struct {
	Type       string `msgpack:"type" json:"type"`
	MaxPerPair int    `msgpack:"max_per_pair" json:"max_per_pair"`
	Edges      int    `msgpack:"edges" json:"edges"`
}

// Anonymised is a release with what stays home: where each original node
// went (an index into the release's nodes, or into its classes' members
// laid end to end for the clustered strategies) and the observations the
// strategy removed (§6.3).
type Anonymised struct {
	Release Release
	Place   []int
	Removed int
}

// Anonymise releases g under opt, drawing classes, pseudonyms and
// partial's removals from rng. The sensitive edges never enter the
// release.
func Anonymise(ctx context.Context, g *Graph, opt Options, rng *rand.Rand) (*Anonymised, error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	if opt.K < 2 || opt.K > len(g.Nodes) {
		return nil, fmt.Errorf("graphanon: k must lie in [2, nodes], not %d", opt.K)
	}
	if opt.Strategy == Partial && !(opt.Remove > 0 && opt.Remove < 1) {
		return nil, fmt.Errorf("graphanon: partial removes a share in (0, 1), not %v", opt.Remove)
	}
	classOf, classes := classify(g, opt.K, rng)
	a := &Anonymised{Release: Release{Strategy: opt.Strategy, Quasi: g.Quasi, Classes: classes}, Place: make([]int, len(g.Nodes))}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch opt.Strategy {
	case Intact, Partial, Removed:
		a.releaseNodes(g, classOf, rng)
		if opt.Strategy == Removed {
			a.Removed = g.Observations()
			return a, nil
		}
		a.releaseEdges(g, opt, rng)
	case Cluster, ClusterConstrained:
		a.releaseClusters(g, classOf, opt.Strategy)
	default:
		return nil, fmt.Errorf("graphanon: unknown strategy")
	}
	return a, nil
}

// classify puts the nodes in classes of at least k (§4.1): sorted by
// their quasi-identifiers (ties, and every node when there are none, in
// a random order) and cut into runs of k, the last run taking the rest.
func classify(g *Graph, k int, rng *rand.Rand) ([]int, []Class) {
	order := rng.Perm(len(g.Nodes))
	slices.SortStableFunc(order, func(x, y int) int { return slices.Compare(g.Nodes[x].Attrs, g.Nodes[y].Attrs) })
	m := len(order) / k
	classOf := make([]int, len(g.Nodes))
	classes := make([]Class, m)
	for i, v := range order {
		c := min(i/k, m-1)
		classOf[v] = c
		classes[c].Size++
	}
	for c := range classes {
		classes[c].ID = "c" + strconv.Itoa(c+1)
		classes[c].Attrs = make([][]string, len(g.Quasi))
	}
	for v, c := range classOf {
		for q, val := range g.Nodes[v].Attrs {
			if !slices.Contains(classes[c].Attrs[q], val) {
				classes[c].Attrs[q] = append(classes[c].Attrs[q], val)
			}
		}
	}
	for c := range classes {
		for q := range classes[c].Attrs {
			slices.Sort(classes[c].Attrs[q])
		}
	}
	return classOf, classes
}

// releaseNodes gives every node a pseudonym n1 … nN in a random order and
// lists them by pseudonym, so that neither says anything of the ids.
func (a *Anonymised) releaseNodes(g *Graph, classOf []int, rng *rand.Rand) {
	perm := rng.Perm(len(g.Nodes))
	a.Release.Nodes = make([]ReleasedNode, len(g.Nodes))
	byRelease := make([]int, len(g.Nodes)) // released position → original node
	for v, p := range perm {
		a.Place[v] = p
		byRelease[p] = v
	}
	for p, v := range byRelease {
		a.Release.Nodes[p] = ReleasedNode{ID: "n" + strconv.Itoa(p+1), Class: a.Release.Classes[classOf[v]].ID}
	}
}

// releaseEdges releases the observed edges between pseudonyms, partial's
// share of each type removed at random (Fig. 3), one released edge per
// pair and type with its count, sorted.
func (a *Anonymised) releaseEdges(g *Graph, opt Options, rng *rand.Rand) {
	byType := map[string][]Edge{}
	for _, e := range g.Edges {
		if e.Type != g.Sensitive {
			byType[e.Type] = append(byType[e.Type], e)
		}
	}
	counts := map[ReleasedEdge]int{}
	for _, t := range g.Types() {
		es := byType[t]
		if opt.Strategy == Partial {
			drop := int(math.Ceil(opt.Remove * float64(len(es))))
			rng.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
			es = es[drop:]
			a.Removed += drop
		}
		for _, e := range es {
			p := pairOf(a.Place[e.A], a.Place[e.B])
			counts[ReleasedEdge{A: a.Release.Nodes[p.a].ID, B: a.Release.Nodes[p.b].ID, Type: t}]++
		}
	}
	a.Release.Edges = sortedEdges(counts)
}

// releaseClusters collapses the classes (Figs. 4 and 5): per pair of
// classes and type, the number of edges between them, or under
// constraints the most edges of the type between any two of their nodes;
// the constraints of each type are released beside them.
func (a *Anonymised) releaseClusters(g *Graph, classOf []int, s Strategy) {
	offset := make([]int, len(a.Release.Classes))
	for c := 1; c < len(offset); c++ {
		offset[c] = offset[c-1] + a.Release.Classes[c-1].Size
	}
	for v, c := range classOf {
		a.Place[v] = offset[c]
		offset[c]++
	}
	multi := map[pair]map[string]int{} // node pair → type → edges
	cons := map[string]*Constraint{}
	for _, e := range g.Edges {
		if e.Type == g.Sensitive {
			continue
		}
		p := pairOf(e.A, e.B)
		if multi[p] == nil {
			multi[p] = map[string]int{}
		}
		multi[p][e.Type]++
		if cons[e.Type] == nil {
			cons[e.Type] = &Constraint{Type: e.Type}
		}
		cons[e.Type].Edges++
		cons[e.Type].MaxPerPair = max(cons[e.Type].MaxPerPair, multi[p][e.Type])
	}
	counts := map[ReleasedEdge]int{}
	for p, ts := range multi {
		cp := pairOf(classOf[p.a], classOf[p.b])
		for t, n := range ts {
			key := ReleasedEdge{A: a.Release.Classes[cp.a].ID, B: a.Release.Classes[cp.b].ID, Type: t}
			if s == Cluster {
				counts[key] += n
			} else {
				counts[key] = max(counts[key], n)
			}
		}
	}
	a.Release.Edges = sortedEdges(counts)
	if s == ClusterConstrained {
		released := 0
		for _, e := range a.Release.Edges {
			released += e.Count
		}
		a.Removed = g.Observations() - released
	}
	for _, t := range g.Types() {
		a.Release.Constraints = append(a.Release.Constraints, *cons[t])
	}
}

func sortedEdges(counts map[ReleasedEdge]int) []ReleasedEdge {
	out := make([]ReleasedEdge, 0, len(counts))
	for e, n := range counts {
		e.Count = n
		out = append(out, e)
	}
	slices.SortFunc(out, func(x, y ReleasedEdge) int {
		return slices.Compare([]string{x.Type, x.A, x.B}, []string{y.Type, y.A, y.B})
	})
	return out
}
