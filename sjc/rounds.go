package sjc

import "github.com/cohortdm/cohort/job"

// The job's rounds, in order (Xu, thesis §3.3: class propagation, then per
// tree level the choice of each node's split and its split propagation).
// Each is typed: its public args, one party's output (to the coordinator
// alone) and the coordinator's public decision.
var (
	// loadRound: each party checks its tables against the schema; the
	// target's party reports the class labels, which are committed.
	loadRound = job.Round[struct{}, loadOutput, loadDecision]{Phase: "load"}
	// propagateRound: PSI per edge and class propagation; every party
	// holding a table reports the root's class counts.
	propagateRound = job.Round[struct{}, countsOutput, propagateDecision]{Phase: "propagate"}
	// chooseRound: every party offers its tables' gains at the level's open
	// nodes; the coordinator commits each node's winning table and gain.
	chooseRound = job.Round[chooseArgs, offersOutput, chooseDecision]{Phase: "choose"}
	// splitRound: the winners split their rows and split summaries flow;
	// every party reports the children's class counts.
	splitRound = job.Round[splitArgs, countsOutput, splitDecision]{Phase: "split"}
	// finishRound: each party keeps its predicates of the final (pruned)
	// tree and classifies the test join rows, if any.
	finishRound = job.Round[finishArgs, finishOutput, finishDecision]{Phase: "finish"}
)

// loadOutput is a party's answer to load: the class labels, from the
// target table's party only.
type loadOutput struct {
	Labels []string `msgpack:"labels"`
}

// loadDecision is the job's class labels, sorted.
type loadDecision struct {
	Labels []string `msgpack:"labels"`
}

// countsOutput is a party's answer to propagate and split: whether it
// holds a table of the join, and then the class counts of each node the
// step made (the root, or two children per split node), as its first
// table sees them; propagate adds the edges of its tables that share no
// join value with the neighbour.
type countsOutput struct {
	Tables     bool       `msgpack:"tables"`
	Counts     [][]uint64 `msgpack:"counts"`
	EmptyEdges []int      `msgpack:"empty_edges"`
}

// propagateDecision is the root's class counts.
type propagateDecision struct {
	Counts []uint64 `msgpack:"counts"`
}

// chooseArgs name the nodes whose splits are chosen: the open nodes of a
// level, in id order. Every party derives them from the log (growth) and
// offers at no other node.
type chooseArgs struct {
	Level int     `msgpack:"level"`
	Open  []int32 `msgpack:"open"`
}

// offersOutput is a party's offers at a level: Nodes[i][t] is table t's
// Offer at open node i (empty for other parties' tables). Gains only:
// no attribute, threshold or value. With params.hide_gains, Nodes is
// empty and Hidden[i] holds the party's share of the blinded counts at
// open node i (hiddenNode): no gain at all.
type offersOutput struct {
	Nodes  [][]Offer    `msgpack:"nodes"`
	Hidden []hiddenNode `msgpack:"hidden,omitempty"`
}

// chooseDecision is the coordinator's choice at a level: per open node the
// winner, or Retry when a party was silent (the level's choice runs again
// as the next round).
type chooseDecision struct {
	Retry   bool     `msgpack:"retry"`
	Winners []winner `msgpack:"winners"`
}

// winner is one open node's choice: the winning table (index in the
// graph), -1 for a leaf, and its gain (0 with params.hide_gains, where the
// log holds no gain). The gain is that of the split the
// node's children's committed counts make, so the log discloses nothing
// by it; the winner's party splits on its candidate of exactly that gain,
// and every party checks that none of its own candidates should have won
// (checkWinners).
type winner struct {
	Table int     `msgpack:"table"`
	Gain  float64 `msgpack:"gain"`
}

// splitArgs name the level whose chosen splits are made and the id of the
// first child created.
type splitArgs struct {
	Level  int   `msgpack:"level"`
	NextID int32 `msgpack:"next_id"`
}

// splitDecision is the children's class counts, two per split node in
// order (left, right), or Retry when a party was silent or missed a
// message (the split runs again as the next round, from the same state).
type splitDecision struct {
	Retry    bool       `msgpack:"retry"`
	Children [][]uint64 `msgpack:"children"`
}

// finishArgs is the final (pruned) skeleton: every node by id, parents
// first.
type finishArgs struct {
	Nodes []finNode `msgpack:"nodes"`
}

// finNode is one node of the final skeleton.
type finNode struct {
	ID    int32 `msgpack:"id"`
	Table int   `msgpack:"table"` // -1 for a leaf
	Left  int32 `msgpack:"left"`
	Right int32 `msgpack:"right"`
	Label int   `msgpack:"label"` // leaves: index of the label
}

// finishOutput is a party's answer to finish: the target table's party
// reports the correct and total test join rows.
type finishOutput struct {
	Target  bool   `msgpack:"target"`
	Correct uint64 `msgpack:"correct"`
	Total   uint64 `msgpack:"total"`
}

// finishDecision is the test set's correct and total join rows (Tested:
// the spec has a test set).
type finishDecision struct {
	Correct uint64 `msgpack:"correct"`
	Total   uint64 `msgpack:"total"`
	Tested  bool   `msgpack:"tested"`
}
