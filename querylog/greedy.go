package querylog

import (
	"container/heap"
	"context"
	"fmt"
)

// Method is the score the greedy heuristic removes the highest of (§6.2).
type Method string

// The paper's three methods.
const (
	ByDegree      Method = "degree"        // Method 1: degree, weight 1
	ByDegreeFreq  Method = "degree/freq"   // Method 2: degree / queryFrequency
	ByDegreeClick Method = "degree/clicks" // Method 3: degree / clickedDocs
)

// Methods lists the three in the paper's order.
func Methods() []Method { return []Method{ByDegree, ByDegreeFreq, ByDegreeClick} }

// weight is a node's weight under m, at least 1 so that a score is defined.
func (g *Graph) weight(m Method, i int) int {
	switch m {
	case ByDegreeFreq:
		return max(1, g.Freq[i])
	case ByDegreeClick:
		return max(1, g.Clicks[i])
	}
	return 1
}

// Step is the graph after one removal: the figures of the paper's
// Figs. 5–7 (edges, query volume and clicked documents left) and density.
type Step struct {
	Removed string  `json:"removed,omitempty"`
	Nodes   int     `json:"nodes"`
	Edges   int     `json:"edges"`
	Density float64 `json:"density"`
	Volume  int     `json:"volume"` // the sum of the frequencies left
	Clicks  int     `json:"clicks"` // the sum of the clicked documents left
}

// Disconnection is the greedy heuristic's outcome: which queries are kept,
// and the graph after every removal.
type Disconnection struct {
	Method Method
	Kept   []bool
	Start  Step // the graph before any removal
	Steps  []Step
}

// Disconnect runs the greedy heuristic of §5: remove the node of highest
// score (ties: the query first in order), lower its neighbours' degrees,
// compute density, until density is zero. Scores are compared as
// fractions, so no rounding decides a removal.
func Disconnect(ctx context.Context, g *Graph, m Method) (*Disconnection, error) {
	if m != ByDegree && m != ByDegreeFreq && m != ByDegreeClick {
		return nil, fmt.Errorf("querylog: unknown method %q", m)
	}
	n := len(g.Queries)
	deg := make([]int, n)
	d := &Disconnection{Method: m, Kept: make([]bool, n)}
	h := &scoreHeap{}
	for i := range n {
		deg[i], d.Kept[i] = g.Degree(i), true
		d.Start.Volume += g.Freq[i]
		d.Start.Clicks += g.Clicks[i]
		if deg[i] > 0 {
			h.items = append(h.items, scored{node: i, deg: deg[i], w: g.weight(m, i)})
		}
	}
	heap.Init(h)
	d.Start.Nodes, d.Start.Edges = n, g.Edges()
	d.Start.Density = Density(d.Start.Edges, n)
	cur := d.Start
	for cur.Edges > 0 {
		if len(d.Steps)%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("querylog: disconnecting: %w", err)
			}
		}
		top := heap.Pop(h).(scored)
		if !d.Kept[top.node] || deg[top.node] != top.deg {
			continue // stale: the node's degree fell since it was pushed
		}
		d.Kept[top.node] = false
		for _, v := range g.adj[top.node] {
			if d.Kept[v] {
				deg[v]--
				if deg[v] > 0 {
					heap.Push(h, scored{node: v, deg: deg[v], w: g.weight(m, v)})
				}
			}
		}
		cur.Removed = g.Queries[top.node]
		cur.Nodes--
		cur.Edges -= top.deg
		cur.Volume -= g.Freq[top.node]
		cur.Clicks -= g.Clicks[top.node]
		cur.Density = Density(cur.Edges, cur.Nodes)
		d.Steps = append(d.Steps, cur)
	}
	return d, nil
}

// scored is a heap entry: a node with its degree when pushed.
type scored struct{ node, deg, w int }

// scoreHeap pops the highest deg/w first, the lowest node on ties.
type scoreHeap struct{ items []scored }

func (h *scoreHeap) Len() int { return len(h.items) }
func (h *scoreHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	if l, r := a.deg*b.w, b.deg*a.w; l != r {
		return l > r
	}
	return a.node < b.node
}
func (h *scoreHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *scoreHeap) Push(x any)    { h.items = append(h.items, x.(scored)) }
func (h *scoreHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}
