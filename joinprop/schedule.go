package joinprop

// The order in which summaries cross the join tree: class propagation's
// (Xu, thesis §3.3.1) and split propagation's (§3.3.2). Both depend on the
// public graph only, so every party derives the same schedule.

// Transfer is one summary sent along an edge of the join graph: table
// From sends to table To (indexes in Graph.Tables) over edge Edge. In class
// propagation Forward says whether the receiver overwrites (formula (1))
// or rescales (formula (2)).
type Transfer struct {
	Edge     int
	From, To int
	Forward  bool
}

// ClassSchedule is the order of class propagation (thesis §3.3.1): phase 1
// is a depth-first traversal from the target table, forward on the first
// visit of a table and backward when backtracking, ending at the last
// table first visited (trailing backtracks dropped); phase 2 sweeps
// backward outwards from that table, breadth first, each edge once, so
// that every sender is final when it sends. Each edge carries at most three
// summaries. It depends on the public graph only.
func ClassSchedule(g *Graph) []Transfer {
	var out []Transfer
	var dft func(x int)
	dft = func(x int) {
		for _, e := range g.Tables[x].Children {
			c := e + 1
			out = append(out, Transfer{Edge: e, From: x, To: c, Forward: true})
			dft(c)
			out = append(out, Transfer{Edge: e, From: c, To: x})
		}
	}
	dft(0)
	for len(out) > 0 && !out[len(out)-1].Forward {
		out = out[:len(out)-1]
	}
	last := 0
	if len(out) > 0 {
		last = out[len(out)-1].To
	}
	return append(out, Sweep(g, last)...)
}

// SplitSchedule is the order of split propagation at a node won by table
// winner (thesis §3.3.2): breadth first from the winner, each edge once.
func SplitSchedule(g *Graph, winner int) []Transfer { return Sweep(g, winner) }

// sweep lists the edges of g breadth first from table root, each directed
// away from it.
func Sweep(g *Graph, root int) []Transfer {
	var out []Transfer
	seen := make([]bool, len(g.Tables))
	seen[root] = true
	queue := []int{root}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		for _, in := range g.Neighbours(x) {
			if seen[in.Other] {
				continue
			}
			seen[in.Other] = true
			out = append(out, Transfer{Edge: in.Edge, From: x, To: in.Other})
			queue = append(queue, in.Other)
		}
	}
	return out
}
