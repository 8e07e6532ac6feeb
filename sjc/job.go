package sjc

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
	"github.com/cohortdm/cohort/sjc/tree"
)

// Kind is the distributed job, `kind: sjc` (see the package doc's
// "Distributed job" section for its steps and leakage profile).
type Kind struct{}

// Phases of the job, in order. Every grow step is one level of the tree.
const (
	phaseLoad      = "load"
	phasePropagate = "propagate"
	phaseGrow      = "grow"
	phaseFinish    = "finish"
)

// Message types of the job. Each is sent within one step attempt, keyed by
// it, so messages of different steps, attempts or edges never answer each
// other.
const (
	// TypeClassSummary carries a ClassSummary to the neighbour on an edge
	// (disclosure class-summary).
	TypeClassSummary = "sjc/class-summary"
	// TypeSplitSummary carries a SplitSummary to the neighbour on an edge
	// (disclosure split-summary).
	TypeSplitSummary = "sjc/split-summary"
	// TypeOffers carries a party's Offers for every open node of a level to
	// the coordinator (disclosure score).
	TypeOffers = "sjc/offers"
	// TypePlan carries the coordinator's Plan of a level to every party
	// (disclosure public-result: it is committed with the step).
	TypePlan = "sjc/plan"
	// TypeWon tells a party alone which of its offered candidates won which
	// nodes (disclosure score).
	TypeWon = "sjc/won"
)

// maxRetries bounds the re-runs of one level after silent parties.
const maxRetries = 3

// maxTimeout bounds params.timeout_ms: a day.
const maxTimeout = 24 * time.Hour

// ModelSecret is the name, in each party's data dir, of the party's part of
// the model trained by job id: its split predicates per skeleton node.
func ModelSecret(id string) string { return "models/" + id + "/sjc.json" }

// stateSecret is where a session keeps its training state between steps:
// two slots, 0 and 1, written in turn, so that each step writes only its
// own state and the one before it stays in the other slot.
func stateSecret(id string, slot int) string { return fmt.Sprintf("jobs/%s/sjc-state-%d", id, slot) }

// Validate checks the join graph, the params and the test set of a spec.
func (Kind) Validate(spec *job.Spec) error {
	_, _, err := parseSpec(spec)
	return err
}

func parseSpec(spec *job.Spec) (*Graph, Params, error) {
	p, err := ParseParams(spec)
	if err != nil {
		return nil, p, err
	}
	if p.TimeoutMS < 0 || p.TimeoutMS > maxTimeout.Milliseconds() {
		return nil, p, spec.Errorf("params.timeout_ms", "must be in [0, %d] (a day), not %d", maxTimeout.Milliseconds(), p.TimeoutMS)
	}
	g, err := NewGraph(spec)
	if err != nil {
		return nil, p, fmt.Errorf("%w: %s: %w", job.ErrSpec, spec.Source, err)
	}
	if len(spec.Test) > 0 {
		for _, t := range g.Tables {
			if spec.Test[t.Name] == "" {
				return nil, p, spec.Errorf("test", "names no test table for table %q (a test set needs every table of the join)", t.Name)
			}
		}
		for name := range spec.Test {
			if g.Index(name) < 0 {
				return nil, p, spec.Errorf("test."+name, "table %q is not in the join graph", name)
			}
		}
	}
	return g, p, nil
}

// OutputDisclosure: every step's output to the coordinator is public
// metadata the coordinator commits (labels, node class counts, test
// counts) or an error.
func (Kind) OutputDisclosure(job.Step) protocol.Disclosure { return protocol.DisclosePublicResult }

// Step arguments (public, committed).
type growArgs struct {
	Level  int     `msgpack:"level"`
	Open   []int32 `msgpack:"open"`    // the nodes to grow, in id order
	NextID int32   `msgpack:"next_id"` // the id of the first child created
}

// finishArgs is the final (pruned) skeleton: every node by id.
type finishArgs struct {
	Nodes []finNode `msgpack:"nodes"`
}

type finNode struct {
	ID    int32 `msgpack:"id"`
	Table int   `msgpack:"table"` // -1 for a leaf
	Left  int32 `msgpack:"left"`
	Right int32 `msgpack:"right"`
	Label int   `msgpack:"label"` // leaves: index of the label
}

// Decisions (public, committed).
type loadDecision struct {
	Labels []string `msgpack:"labels"`
	Error  string   `msgpack:"error"`
}

type propDecision struct {
	Counts []uint64 `msgpack:"counts"`
	Error  string   `msgpack:"error"`
}

type growDecision struct {
	// Retry: the level did not finish (a party was silent); it runs again
	// as the next round and nothing of this one is kept.
	Retry bool   `msgpack:"retry"`
	Error string `msgpack:"error"`
	// Splits holds, per open node, the winning table (index in the graph)
	// or -1 for a leaf: the skeleton, never the predicate.
	Splits []int `msgpack:"splits"`
	// Children holds the class counts of the new children, two per split
	// node in order (left, right).
	Children [][]uint64 `msgpack:"children"`
}

type finishDecision struct {
	Correct uint64 `msgpack:"correct"`
	Total   uint64 `msgpack:"total"`
	Tested  bool   `msgpack:"tested"`
	Error   string `msgpack:"error"`
}

// Outputs (to the coordinator alone).
type loadOutput struct {
	Labels   []string `msgpack:"labels"` // the target table's party only
	Unusable string   `msgpack:"unusable"`
}

type countsOutput struct {
	Tables     bool       `msgpack:"tables"` // the party holds a table of the join
	Counts     [][]uint64 `msgpack:"counts"`
	EmptyEdges []int      `msgpack:"empty_edges"`
	Aborted    bool       `msgpack:"aborted"`
	Unusable   string     `msgpack:"unusable"`
}

type finishOutput struct {
	Target  bool   `msgpack:"target"`
	Correct uint64 `msgpack:"correct"`
	Total   uint64 `msgpack:"total"`
}

// Messages within a grow step.

// Offers is a party's offers for the open nodes of a level: Nodes[i][t] is
// table t's Offer at open node i (empty for tables of other parties).
type Offers struct {
	Nodes [][]Offer `msgpack:"nodes"`
	Error string    `msgpack:"error"`
}

// Plan is the coordinator's decision for a level, sent to every party:
// per open node the winning table or -1 (leaf). Abort ends the attempt
// without splitting (a party failed to offer).
type Plan struct {
	Splits []int `msgpack:"splits"`
	Abort  bool  `msgpack:"abort"`
}

// Won tells a party, for each node one of its tables won, which entry of
// that table's frontier won it.
type Won struct {
	Nodes []WonNode `msgpack:"nodes"`
}

// WonNode is one won node: open node position, and frontier position.
type WonNode struct {
	Open  int `msgpack:"open"`
	Index int `msgpack:"index"`
}

func encode(v any) ([]byte, error) {
	b, err := protocol.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("sjc: encode: %w", err)
	}
	return b, nil
}

func decode(b []byte, v any) error {
	if err := protocol.Unmarshal(b, v); err != nil {
		return fmt.Errorf("sjc: decode: %w", err)
	}
	return nil
}

// skelNode is one node of the coordinator's skeleton.
type skelNode struct {
	depth       int
	counts      []uint64
	table       int // -1: leaf
	left, right int32
}

// Coordinate drives the job: load (labels and schema checks), propagate
// (PSI per edge, class propagation, the root's counts), one grow step per
// tree level, pruning on the public skeleton, and finish (each party keeps
// its predicates; test accuracy). It depends only on the spec and the
// committed decisions.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	spec := c.Spec()
	g, p, err := parseSpec(spec)
	if err != nil {
		return nil, err
	}
	parties := spec.PartyNames()
	mk := func(phase string, round int, args any) (job.Step, error) {
		b, err := encode(args)
		return job.Step{Phase: phase, Round: round, Parties: parties, Args: b, TimeoutMS: p.TimeoutMS}, err
	}

	st, err := mk(phaseLoad, 0, struct{}{})
	if err != nil {
		return nil, err
	}
	ld, _, err := job.Run(ctx, c, st, func(outs *job.Outputs) (loadDecision, error) {
		return decideLoad(outs, g, parties), nil
	})
	if err != nil {
		return nil, err
	}
	if ld.Error != "" {
		return nil, errors.New(ld.Error)
	}

	st, err = mk(phasePropagate, 0, struct{}{})
	if err != nil {
		return nil, err
	}
	pd, _, err := job.Run(ctx, c, st, func(outs *job.Outputs) (propDecision, error) {
		return decidePropagate(outs, g, parties, len(ld.Labels)), nil
	})
	if err != nil {
		return nil, err
	}
	if pd.Error != "" {
		return nil, errors.New(pd.Error)
	}

	nodes := []skelNode{{counts: pd.Counts, table: -1}}
	var open []int32
	if !Stop(pd.Counts, 0, p) {
		open = []int32{0}
	}
	round, retries, level := 0, 0, 0
	for len(open) > 0 {
		args := growArgs{Level: level, Open: open, NextID: int32(len(nodes))}
		st, err := mk(phaseGrow, round, args)
		if err != nil {
			return nil, err
		}
		d, err := growStep(ctx, c, g, st, args, len(ld.Labels))
		if err != nil {
			return nil, err
		}
		round++
		if d.Error != "" {
			return nil, fmt.Errorf("tree level %d: %s", level, d.Error)
		}
		if d.Retry {
			if retries++; retries > maxRetries {
				return nil, fmt.Errorf("tree level %d: parties silent in %d attempts", level, retries)
			}
			continue
		}
		retries = 0
		var next []int32
		k := 0
		for i, id := range open {
			if d.Splits[i] < 0 {
				continue
			}
			l, r := int32(len(nodes)), int32(len(nodes)+1)
			nodes[id].table, nodes[id].left, nodes[id].right = d.Splits[i], l, r
			for _, cid := range []int32{l, r} {
				cn := skelNode{depth: level + 1, counts: d.Children[k], table: -1}
				k++
				nodes = append(nodes, cn)
				if !Stop(cn.counts, cn.depth, p) {
					next = append(next, cid)
				}
			}
		}
		c.Progress(phaseGrow, level+1, p.MaxDepth)
		open, level = next, level+1
	}

	t, ids := skeletonTree(g, nodes, ld.Labels)
	pruned := 0
	if p.Prune {
		pruned = t.Prune(tree.DefaultCF)
	}
	fa := finishOf(g, t, ids)
	st, err = mk(phaseFinish, 0, fa)
	if err != nil {
		return nil, err
	}
	fd, _, err := job.Run(ctx, c, st, func(outs *job.Outputs) (finishDecision, error) {
		return decideFinish(outs, parties, len(spec.Test) > 0), nil
	})
	if err != nil {
		return nil, err
	}
	if fd.Error != "" {
		return nil, errors.New(fd.Error)
	}
	n, leaves := t.Size()
	res := job.Result{
		"labels":   ld.Labels,
		"skeleton": skeletonJSON(t, ids, ld.Labels),
		"nodes":    n,
		"leaves":   leaves,
		"levels":   level,
		"pruned":   pruned,
		"model":    ModelSecret(c.JobID()),
	}
	if fd.Tested {
		test := map[string]any{"rows": fd.Total, "correct": fd.Correct}
		if fd.Total > 0 {
			test["accuracy"] = float64(fd.Correct) / float64(fd.Total)
		}
		res["test"] = test
	}
	return res, nil
}

// growStep runs one level: the parties send their offers to the
// coordinator within the attempt, the coordinator picks each node's winner
// (Choose), tells every party the skeleton (Plan) and each winner alone
// which candidate won (Won), the parties split, and the coordinator
// commits the skeleton with the children's counts. Nothing private
// outlives the attempt, so a new leader simply re-runs an unfinished level.
func growStep(ctx context.Context, c job.Coordinator, g *Graph, st job.Step, args growArgs, u int) (growDecision, error) {
	var d growDecision
	a, err := c.Start(ctx, st)
	if err != nil {
		return d, err
	}
	if rec := a.Record(); rec != nil {
		return d, decode(rec.Decision, &d)
	}
	step := a.Step()
	plan, won, why := collectOffers(ctx, c, g, step, len(args.Open))
	if why != "" {
		plan = Plan{Abort: true}
	}
	// Winners first, then the plan: a party waits for its Won only when
	// the plan names one of its tables.
	for _, name := range slices.Sorted(maps.Keys(won)) {
		b, err := encode(won[name])
		if err != nil {
			return d, err
		}
		if err := c.Send(ctx, name, step.Message(c.Self(), TypeWon, b), protocol.DiscloseScore); err != nil && ctx.Err() != nil {
			return d, err
		}
	}
	pb, err := encode(plan)
	if err != nil {
		return d, err
	}
	for _, name := range step.Parties {
		if err := c.Send(ctx, name, step.Message(c.Self(), TypePlan, pb), protocol.DisclosePublicResult); err != nil && ctx.Err() != nil {
			return d, err
		}
	}
	outs, err := a.Wait(ctx)
	if err != nil {
		return d, err
	}
	d = decideGrow(outs, step.Parties, plan, why, u)
	b, err := encode(&d)
	if err != nil {
		return d, err
	}
	if _, err := a.Commit(ctx, outs, b, ""); err != nil {
		return d, err
	}
	return d, nil
}

// silentPrefix marks a failure that a re-run may cure.
const silentPrefix = "silent: "

// collectOffers receives every party's offers for the level and chooses.
// why is non-empty when the level cannot go on: "silent: ..." when a party
// did not offer in time (the level is re-run), else the error that fails
// the job.
func collectOffers(ctx context.Context, c job.Coordinator, g *Graph, step job.Step, nopen int) (Plan, map[string]Won, string) {
	timeout := step.Timeout()
	if timeout <= 0 {
		timeout = time.Minute
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	offers := make([][]Offer, nopen)
	for i := range offers {
		offers[i] = make([]Offer, len(g.Tables))
	}
	for _, name := range step.Parties {
		m, err := c.Receive(rctx, name, step.Key(TypeOffers))
		if err != nil {
			return Plan{}, nil, fmt.Sprintf("%sparty %s sent no offers: %v", silentPrefix, name, err)
		}
		if why := mergeOffers(g, name, m.Body, offers); why != "" {
			return Plan{}, nil, why
		}
	}
	plan := Plan{Splits: make([]int, nopen)}
	won := map[string]Won{}
	for i := range offers {
		t, k, gain, ok := Choose(g, offers[i])
		if !ok || gain <= Eps {
			plan.Splits[i] = -1
			continue
		}
		plan.Splits[i] = t
		owner := g.Tables[t].Party
		w := won[owner]
		w.Nodes = append(w.Nodes, WonNode{Open: i, Index: k})
		won[owner] = w
	}
	return plan, won, ""
}

// mergeOffers decodes party name's offers message and puts its tables'
// offers into offers (per open node, per table); it says why it refuses
// them.
func mergeOffers(g *Graph, name string, body []byte, offers [][]Offer) string {
	var o Offers
	if err := decode(body, &o); err != nil {
		return fmt.Sprintf("party %s: offers: %v", name, err)
	}
	if o.Error != "" {
		return fmt.Sprintf("party %s: %s", name, o.Error)
	}
	if len(o.Nodes) != len(offers) {
		return fmt.Sprintf("party %s: offers for %d nodes, want %d", name, len(o.Nodes), len(offers))
	}
	for i, per := range o.Nodes {
		if len(per) != len(g.Tables) {
			return fmt.Sprintf("party %s: offers for %d tables, want %d", name, len(per), len(g.Tables))
		}
		for t, of := range per {
			if len(of.Gains) == 0 {
				continue
			}
			if g.Tables[t].Party != name {
				return fmt.Sprintf("party %s: offers for table %q, which party %s holds", name, g.Tables[t].Name, g.Tables[t].Party)
			}
			for _, x := range of.Gains {
				if !(x >= -1 && x <= 64) { // NaN or impossible (rounding may make a zero gain slightly negative)
					return fmt.Sprintf("party %s: table %q offers a gain outside [-1, 64]", name, g.Tables[t].Name)
				}
			}
			offers[i][t] = of
		}
	}
	return ""
}

// failures names the parties that failed the step, in party order, and
// whether every failure is a silence or a wait for a message that did not
// come (a re-run may cure it).
func failures(outs *job.Outputs, parties []string) (string, bool) {
	var out []string
	silent := true
	for _, name := range parties {
		if why, ok := outs.Failed[name]; ok {
			out = append(out, fmt.Sprintf("party %s: %s", name, why))
			if !slices.Contains(outs.Silent, name) && !strings.Contains(why, errNoMessage.Error()) {
				silent = false
			}
		}
	}
	return strings.Join(out, "; "), silent
}

func decideLoad(outs *job.Outputs, g *Graph, parties []string) loadDecision {
	if msg, _ := failures(outs, parties); msg != "" {
		return loadDecision{Error: msg}
	}
	var d loadDecision
	var probs []string
	for _, name := range parties {
		var o loadOutput
		if err := decode(outs.Results[name], &o); err != nil {
			return loadDecision{Error: fmt.Sprintf("party %s: %v", name, err)}
		}
		if o.Unusable != "" {
			probs = append(probs, fmt.Sprintf("party %s: %s", name, o.Unusable))
			continue
		}
		if name == g.Tables[0].Party {
			d.Labels = o.Labels
		}
	}
	if len(probs) > 0 {
		return loadDecision{Error: strings.Join(probs, "; ")}
	}
	if len(d.Labels) == 0 || !slices.IsSorted(d.Labels) || len(slices.Compact(slices.Clone(d.Labels))) != len(d.Labels) {
		return loadDecision{Error: fmt.Sprintf("party %s: no usable class labels for table %q", g.Tables[0].Party, g.Target())}
	}
	return d
}

// partyCounts decodes every party's counts output and checks that all
// parties holding tables agree (each table sees the same join rows).
func partyCounts(outs *job.Outputs, parties []string, n, u int) ([][]uint64, []int, string, bool) {
	if msg, silent := failures(outs, parties); msg != "" {
		return nil, nil, msg, silent
	}
	var counts [][]uint64
	var empty []int
	first := ""
	for _, name := range parties {
		var o countsOutput
		if err := decode(outs.Results[name], &o); err != nil {
			return nil, nil, fmt.Sprintf("party %s: %v", name, err), false
		}
		if o.Unusable != "" {
			return nil, nil, fmt.Sprintf("party %s: %s", name, o.Unusable), false
		}
		if o.Aborted {
			return nil, nil, fmt.Sprintf("%sparty %s aborted", silentPrefix, name), true
		}
		empty = append(empty, o.EmptyEdges...)
		if !o.Tables {
			continue
		}
		if len(o.Counts) != n {
			return nil, nil, fmt.Sprintf("party %s: %d class-count vectors, want %d", name, len(o.Counts), n), false
		}
		for _, c := range o.Counts {
			if len(c) != u {
				return nil, nil, fmt.Sprintf("party %s: class counts of length %d, want %d", name, len(c), u), false
			}
		}
		if first == "" {
			first, counts = name, o.Counts
			continue
		}
		for i := range counts {
			if !slices.Equal(counts[i], o.Counts[i]) {
				return nil, nil, fmt.Sprintf("parties %s and %s disagree on the class counts of a node", first, name), false
			}
		}
	}
	if first == "" {
		return nil, nil, "no party holds a table of the join", false
	}
	slices.Sort(empty)
	return counts, slices.Compact(empty), "", false
}

func decidePropagate(outs *job.Outputs, g *Graph, parties []string, u int) propDecision {
	counts, empty, msg, _ := partyCounts(outs, parties, 1, u)
	if msg != "" {
		return propDecision{Error: msg}
	}
	if len(empty) > 0 {
		var names []string
		for _, e := range empty {
			if e >= 0 && e < len(g.Edges) {
				names = append(names, g.edgeName(e))
			}
		}
		return propDecision{Error: fmt.Sprintf("%v: edge %s: the tables have no join value in common", ErrEmptyJoin, strings.Join(names, "; edge "))}
	}
	var n uint64
	for _, x := range counts[0] {
		n += x
	}
	if n == 0 {
		return propDecision{Error: fmt.Sprintf("%v: no row of target table %q joins rows of every other table", ErrEmptyJoin, g.Target())}
	}
	return propDecision{Counts: counts[0]}
}

func decideGrow(outs *job.Outputs, parties []string, plan Plan, why string, u int) growDecision {
	if why != "" {
		if strings.HasPrefix(why, silentPrefix) {
			return growDecision{Retry: true}
		}
		return growDecision{Error: why}
	}
	n := 0
	for _, t := range plan.Splits {
		if t >= 0 {
			n += 2
		}
	}
	counts, _, msg, silent := partyCounts(outs, parties, n, u)
	if msg != "" {
		if silent {
			return growDecision{Retry: true}
		}
		return growDecision{Error: msg}
	}
	return growDecision{Splits: plan.Splits, Children: counts}
}

func decideFinish(outs *job.Outputs, parties []string, tested bool) finishDecision {
	if msg, _ := failures(outs, parties); msg != "" {
		return finishDecision{Error: msg}
	}
	d := finishDecision{Tested: tested}
	for _, name := range parties {
		var o finishOutput
		if err := decode(outs.Results[name], &o); err != nil {
			return finishDecision{Error: fmt.Sprintf("party %s: %v", name, err)}
		}
		if o.Target {
			if o.Correct > o.Total {
				return finishDecision{Error: fmt.Sprintf("party %s: %d correct of %d test join rows", name, o.Correct, o.Total)}
			}
			d.Correct, d.Total = o.Correct, o.Total
		}
	}
	return d
}

// skeletonTree builds the public skeleton as a tree (splits naming party
// and table only) and the id of each of its nodes.
func skeletonTree(g *Graph, nodes []skelNode, labels []string) (*tree.Tree, map[*tree.Node]int32) {
	ids := map[*tree.Node]int32{}
	var build func(id int32) *tree.Node
	build = func(id int32) *tree.Node {
		sn := nodes[id]
		n := &tree.Node{Counts: sn.counts}
		ids[n] = id
		if sn.table >= 0 {
			n.Split = &tree.Split{Party: g.Tables[sn.table].Party, Table: g.Tables[sn.table].Name}
			n.Left, n.Right = build(sn.left), build(sn.right)
		}
		return n
	}
	return &tree.Tree{Labels: labels, Root: build(0)}, ids
}

// finishOf lists the final skeleton's nodes in pre-order (parents first).
func finishOf(g *Graph, t *tree.Tree, ids map[*tree.Node]int32) finishArgs {
	var fa finishArgs
	var walk func(n *tree.Node)
	walk = func(n *tree.Node) {
		fn := finNode{ID: ids[n], Table: -1, Label: n.Label()}
		if !n.IsLeaf() {
			fn.Left, fn.Right = ids[n.Left], ids[n.Right]
			fn.Table = g.Index(n.Split.Table)
		}
		fa.Nodes = append(fa.Nodes, fn)
		if !n.IsLeaf() {
			walk(n.Left)
			walk(n.Right)
		}
	}
	walk(t.Root)
	return fa
}

// skeletonJSON is the public skeleton for result.json: DESIGN.md's tree
// format with each split naming only its party and table.
func skeletonJSON(t *tree.Tree, ids map[*tree.Node]int32, labels []string) map[string]any {
	var walk func(n *tree.Node) map[string]any
	walk = func(n *tree.Node) map[string]any {
		counts := map[string]uint64{}
		for i, c := range n.Counts {
			counts[labels[i]] = c
		}
		if n.IsLeaf() {
			return map[string]any{"id": ids[n], "leaf": labels[n.Label()], "counts": counts}
		}
		return map[string]any{"id": ids[n], "split": map[string]string{"party": n.Split.Party, "table": n.Split.Table},
			"counts": counts, "left": walk(n.Left), "right": walk(n.Right)}
	}
	return walk(t.Root)
}
