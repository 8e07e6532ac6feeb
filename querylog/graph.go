package querylog

import "slices"

// Graph is the query graph of §5: one node per distinct query, an edge
// between two queries that share a clicked site. Freq and Clicks are the
// node weights of §6.2 (queryFrequency and clickedDocs).
type Graph struct {
	Queries []string // sorted
	Freq    []int
	Clicks  []int
	adj     [][]int // neighbours, sorted
}

// NewGraph builds the graph of the queries of log that keep is true for
// (nil keeps every query).
func NewGraph(log []Record, keep func(query string) bool) *Graph {
	st := stats(log)
	g := &Graph{}
	for q := range st {
		if keep == nil || keep(q) {
			g.Queries = append(g.Queries, q)
		}
	}
	slices.Sort(g.Queries)
	bySite := map[string][]int{}
	g.Freq = make([]int, len(g.Queries))
	g.Clicks = make([]int, len(g.Queries))
	for i, q := range g.Queries {
		g.Freq[i], g.Clicks[i] = st[q].freq, st[q].clicks
		for s := range st[q].sites {
			bySite[s] = append(bySite[s], i)
		}
	}
	sets := make([]map[int]bool, len(g.Queries))
	for _, nodes := range bySite {
		for _, a := range nodes {
			for _, b := range nodes {
				if a == b {
					continue
				}
				if sets[a] == nil {
					sets[a] = map[int]bool{}
				}
				sets[a][b] = true
			}
		}
	}
	g.adj = make([][]int, len(g.Queries))
	for i, s := range sets {
		for j := range s {
			g.adj[i] = append(g.adj[i], j)
		}
		slices.Sort(g.adj[i])
	}
	return g
}

// Edges counts the graph's edges.
func (g *Graph) Edges() int {
	n := 0
	for _, a := range g.adj {
		n += len(a)
	}
	return n / 2
}

// Degree is a node's number of neighbours.
func (g *Graph) Degree(i int) int { return len(g.adj[i]) }

// Density is the paper's 2·edges / (nodes·(nodes−1)) (§5): the chance that
// two queries share a clicked site; zero leaves the attack nothing.
func Density(edges, nodes int) float64 {
	if nodes < 2 {
		return 0
	}
	return 2 * float64(edges) / (float64(nodes) * float64(nodes-1))
}

// Components returns the sizes of the connected components, largest
// first (§6.1 studies the giant component, about half the nodes).
func (g *Graph) Components() []int {
	seen := make([]bool, len(g.Queries))
	var sizes []int
	for s := range g.Queries {
		if seen[s] {
			continue
		}
		seen[s] = true
		stack, n := []int{s}, 0
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			n++
			for _, w := range g.adj[v] {
				if !seen[w] {
					seen[w] = true
					stack = append(stack, w)
				}
			}
		}
		sizes = append(sizes, n)
	}
	slices.SortFunc(sizes, func(a, b int) int { return b - a })
	return sizes
}
