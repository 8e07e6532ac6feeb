package sjc

import "github.com/cohortdm/cohort/joinprop"

// The order in which summaries cross the join tree is joinprop's: class
// propagation's (Xu, thesis §3.3.1) and split propagation's (§3.3.2).

// Transfer is one summary sent along an edge of the join graph.
type Transfer = joinprop.Transfer

// ClassSchedule is the order of class propagation (joinprop.ClassSchedule).
func ClassSchedule(g *Graph) []Transfer { return joinprop.ClassSchedule(g) }

// SplitSchedule is the order of split propagation at a node won by table
// winner (joinprop.SplitSchedule).
func SplitSchedule(g *Graph, winner int) []Transfer { return joinprop.SplitSchedule(g, winner) }
