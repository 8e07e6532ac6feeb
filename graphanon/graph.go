package graphanon

import (
	"errors"
	"fmt"
	"slices"
)

// Graph is one party's multigraph G = (V, E¹ … Eᵏ, Eˢ) of §3: nodes with
// quasi-identifying attributes, typed edges, one type sensitive.
type Graph struct {
	// Quasi names the nodes' quasi-identifying attributes; none means the
	// nodes are put in classes at random, as in the paper's experiments.
	Quasi []string
	Nodes []Node
	// Edges are undirected; two nodes may share several of one type (two
	// students taking two classes together).
	Edges []Edge
	// Sensitive is the edge type that never leaves (friends).
	Sensitive string
}

// Node is a node: its id (kept home) and its values of Graph.Quasi.
type Node struct {
	ID    string
	Attrs []string
}

// Edge joins nodes A and B (indices into Graph.Nodes) by one relationship.
type Edge struct {
	A, B int
	Type string
}

// Check refuses a graph the strategies cannot release: an edge with an end
// outside the nodes or on one node, a node with too few attributes, an
// empty sensitive type. Errors name the edge or node by position only.
func (g *Graph) Check() error {
	if g.Sensitive == "" {
		return errors.New("graphanon: no sensitive edge type")
	}
	for i, n := range g.Nodes {
		if len(n.Attrs) != len(g.Quasi) {
			return fmt.Errorf("graphanon: node %d has %d attributes, not %d", i+1, len(n.Attrs), len(g.Quasi))
		}
	}
	for i, e := range g.Edges {
		if e.A < 0 || e.B < 0 || e.A >= len(g.Nodes) || e.B >= len(g.Nodes) || e.A == e.B || e.Type == "" {
			return fmt.Errorf("graphanon: edge %d joins no two nodes of the graph, or has no type", i+1)
		}
	}
	return nil
}

// Types returns the observed edge types (every type but the sensitive
// one), sorted.
func (g *Graph) Types() []string {
	var out []string
	for _, e := range g.Edges {
		if e.Type != g.Sensitive && !slices.Contains(out, e.Type) {
			out = append(out, e.Type)
		}
	}
	slices.Sort(out)
	return out
}

// pair is an unordered pair of node indices, smaller first.
type pair struct{ a, b int }

func pairOf(a, b int) pair {
	if a > b {
		a, b = b, a
	}
	return pair{a, b}
}

// SensitivePairs is the set of pairs joined by a sensitive edge (several
// sensitive edges on one pair count once).
func (g *Graph) SensitivePairs() map[pair]bool {
	out := map[pair]bool{}
	for _, e := range g.Edges {
		if e.Type == g.Sensitive {
			out[pairOf(e.A, e.B)] = true
		}
	}
	return out
}

// Observations is the number of observed (not sensitive) edges.
func (g *Graph) Observations() int {
	n := 0
	for _, e := range g.Edges {
		if e.Type != g.Sensitive {
			n++
		}
	}
	return n
}
