package sjc

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/tree"
)

// growth is the tree as far as the committed steps have grown it: the
// public skeleton, the open nodes of the level and, once chosen, their
// winners. It is a fold over the job's records, like raft's FSM.Apply: the
// coordinator folds each step it commits to decide the next; every party
// folds its History to derive the one step the coordinator may ask next
// (expect) and refuses any other. A coordinator is not trusted to extract
// (Xu, thesis §3.3 assumes an honest one): it may not open a node the log
// has closed, grow past max_depth, or have a table split that the log
// does not name the winner.
type growth struct {
	g       *Graph
	p       Params
	labels  []string
	nodes   []skelNode // by id
	open    []int32    // the level's nodes to split, in id order
	level   int
	winners []winner // committed for open, not yet split; nil before the choice
	// base names the committed step whose state the next step starts from:
	// the last propagate or split that was not a retry.
	base string
	// phase is the next step's ("" once the job is finished), rounds the
	// next round of each phase, retries the retried steps in a row.
	phase   string
	rounds  map[string]int
	retries int
}

// skelNode is one node of the public skeleton.
type skelNode struct {
	depth       int
	counts      []uint64
	table       int // the winning table, -1 for a leaf
	left, right int32
}

// errLog: a committed decision that a party cannot fold (malformed, or
// out of turn): the coordinator that committed it misbehaved.
var errLog = errors.New("sjc: the log holds a decision that does not fit the job")

func newGrowth(g *Graph, p Params) *growth {
	return &growth{g: g, p: p, phase: loadRound.Phase, rounds: map[string]int{}}
}

// replayGrowth folds a job's history.
func replayGrowth(g *Graph, p Params, hist []*job.Record) (*growth, error) {
	gr := newGrowth(g, p)
	for _, rec := range hist {
		if err := gr.fold(rec); err != nil {
			return nil, fmt.Errorf("%s round %d, committed by coordinator %s: %w", rec.Step.Phase, rec.Step.Round, rec.Coordinator, err)
		}
	}
	return gr, nil
}

// stepKey names a step: "phase/round".
func stepKey(st job.Step) string { return fmt.Sprintf("%s/%d", st.Phase, st.Round) }

// fold applies one committed record, which must be the step due.
func (gr *growth) fold(rec *job.Record) error {
	if rec.Step.Phase != gr.phase || rec.Step.Round != gr.rounds[gr.phase] {
		return fmt.Errorf("%w: step %s where %s round %d was due", errLog, stepKey(rec.Step), gr.phase, gr.rounds[gr.phase])
	}
	gr.rounds[gr.phase]++
	switch gr.phase {
	case loadRound.Phase:
		d, err := loadRound.Decision(rec)
		if err != nil {
			return err
		}
		return gr.loaded(d)
	case propagateRound.Phase:
		d, err := propagateRound.Decision(rec)
		if err != nil {
			return err
		}
		return gr.propagated(d, stepKey(rec.Step))
	case chooseRound.Phase:
		d, err := chooseRound.Decision(rec)
		if err != nil {
			return err
		}
		return gr.chosen(d)
	case splitRound.Phase:
		d, err := splitRound.Decision(rec)
		if err != nil {
			return err
		}
		return gr.split(d, stepKey(rec.Step))
	}
	gr.phase = "" // finish
	return nil
}

func (gr *growth) loaded(d loadDecision) error {
	if len(d.Labels) == 0 || !slices.IsSorted(d.Labels) || len(slices.Compact(slices.Clone(d.Labels))) != len(d.Labels) {
		return fmt.Errorf("%w: class labels that are not sorted and distinct", errLog)
	}
	gr.labels, gr.phase = d.Labels, propagateRound.Phase
	return nil
}

func (gr *growth) propagated(d propagateDecision, key string) error {
	if len(d.Counts) != len(gr.labels) {
		return fmt.Errorf("%w: %d root counts for %d labels", errLog, len(d.Counts), len(gr.labels))
	}
	gr.nodes = []skelNode{{counts: d.Counts, table: -1}}
	gr.base = key
	gr.openLevel([]int32{0})
	return nil
}

// openLevel makes the nodes among ids that do not Stop the next level's.
func (gr *growth) openLevel(ids []int32) {
	gr.open = nil
	for _, id := range ids {
		if n := gr.nodes[id]; !Stop(n.counts, n.depth, gr.p) {
			gr.open = append(gr.open, id)
		}
	}
	gr.winners = nil
	gr.phase = chooseRound.Phase
	if len(gr.open) == 0 {
		gr.phase = finishRound.Phase
	}
}

func (gr *growth) chosen(d chooseDecision) error {
	if d.Retry {
		gr.retries++
		return nil
	}
	gr.retries = 0
	if len(d.Winners) != len(gr.open) {
		return fmt.Errorf("%w: winners for %d nodes, %d open", errLog, len(d.Winners), len(gr.open))
	}
	splits := 0
	for _, w := range d.Winners {
		// A leaf carries no gain: the log holds only the gains of splits,
		// which their children's counts give anyway (split).
		badGain := w.Table < 0 && w.Gain != 0 || w.Table >= 0 && !(w.Gain > Eps && w.Gain <= 64)
		if gr.p.HideGains {
			badGain = w.Gain != 0 // the log holds no gain
		}
		if w.Table < -1 || w.Table >= len(gr.g.Tables) || badGain {
			return fmt.Errorf("%w: a winner that is no table's, or a gain that is no split's", errLog)
		}
		if w.Table >= 0 {
			splits++
		}
	}
	if splits == 0 { // every open node is a leaf: the level closes unsplit
		gr.level++
		gr.openLevel(nil)
		return nil
	}
	gr.winners, gr.phase = d.Winners, splitRound.Phase
	return nil
}

// split adds the children of the level's split nodes and opens the next
// level. Each child's counts are checked against its winner's gain: the
// gain the coordinator committed is that of the split the children make.
func (gr *growth) split(d splitDecision, key string) error {
	if d.Retry {
		gr.retries++
		return nil
	}
	gr.retries = 0
	var next []int32
	k := 0
	for i, id := range gr.open {
		w := gr.winners[i]
		if w.Table < 0 {
			continue
		}
		if k+2 > len(d.Children) {
			return fmt.Errorf("%w: %d children's counts for more split nodes", errLog, len(d.Children))
		}
		l, r := d.Children[k], d.Children[k+1]
		k += 2
		if len(l) != len(gr.labels) || len(r) != len(gr.labels) || !gr.p.HideGains && Gain(gr.nodes[id].counts, l, r) != w.Gain {
			return fmt.Errorf("%w: node %d's children's counts do not make its winner's split", errLog, id)
		}
		lid := int32(len(gr.nodes))
		gr.nodes[id].table, gr.nodes[id].left, gr.nodes[id].right = w.Table, lid, lid+1
		depth := gr.nodes[id].depth + 1
		gr.nodes = append(gr.nodes, skelNode{depth: depth, counts: l, table: -1}, skelNode{depth: depth, counts: r, table: -1})
		next = append(next, lid, lid+1)
	}
	if k != len(d.Children) {
		return fmt.Errorf("%w: %d children's counts for %d split nodes", errLog, len(d.Children), k/2)
	}
	gr.base = key
	gr.level++
	gr.openLevel(next)
	return nil
}

// expect checks that step is the one the log determines next; the args
// are checked by each phase against chooseArgs, splitArgs and finishArgs.
func (gr *growth) expect(step job.Step) error {
	if step.Phase != gr.phase || step.Round != gr.rounds[gr.phase] {
		return fmt.Errorf("the log determines %s", gr.due())
	}
	if gr.retries > maxRetries {
		return fmt.Errorf("the log has retried the step %d times, and the job should have failed", gr.retries)
	}
	return nil
}

// due names the step the log determines next.
func (gr *growth) due() string {
	if gr.phase == "" {
		return "no further step"
	}
	return fmt.Sprintf("%s round %d next", gr.phase, gr.rounds[gr.phase])
}

func (gr *growth) chooseArgs() chooseArgs { return chooseArgs{Level: gr.level, Open: gr.open} }

func (gr *growth) splitArgs() splitArgs {
	return splitArgs{Level: gr.level, NextID: int32(len(gr.nodes))}
}

// finalTree is the finished skeleton as a tree, pruned as the params say
// (Params.PruneTree), with each node's id and the internal nodes each
// pruning made leaves.
type finalTree struct {
	t            *tree.Tree
	ids          map[*tree.Node]int32
	c45, release int
}

// final is the finished, pruned skeleton; an error when release pruning
// cannot make it anonymous (the job fails before finish).
func (gr *growth) final() (*finalTree, error) {
	ids := map[*tree.Node]int32{}
	var build func(id int32) *tree.Node
	build = func(id int32) *tree.Node {
		sn := gr.nodes[id]
		n := &tree.Node{Counts: sn.counts}
		ids[n] = id
		if sn.table >= 0 {
			n.Split = &tree.Split{Party: gr.g.Tables[sn.table].Party, Table: gr.g.Tables[sn.table].Name}
			n.Left, n.Right = build(sn.left), build(sn.right)
		}
		return n
	}
	ft := &finalTree{t: &tree.Tree{Labels: gr.labels, Root: build(0)}, ids: ids}
	var err error
	ft.c45, ft.release, err = gr.p.PruneTree(ft.t)
	return ft, err
}

// finishArgs lists the final skeleton's nodes in pre-order (parents first).
func (gr *growth) finishArgs() (finishArgs, error) {
	ft, err := gr.final()
	if err != nil {
		return finishArgs{}, err
	}
	t, ids := ft.t, ft.ids
	var fa finishArgs
	var walk func(n *tree.Node)
	walk = func(n *tree.Node) {
		fn := finNode{ID: ids[n], Table: -1, Label: n.Label()}
		if !n.IsLeaf() {
			fn.Left, fn.Right = ids[n.Left], ids[n.Right]
			fn.Table = gr.g.Index(n.Split.Table)
		}
		fa.Nodes = append(fa.Nodes, fn)
		if !n.IsLeaf() {
			walk(n.Left)
			walk(n.Right)
		}
	}
	walk(t.Root)
	return fa, nil
}

// skeletonJSON is the public skeleton for result.json: the tree format of
// the result with each split naming only its party and table, and node ids.
func skeletonJSON(t *tree.Tree, ids map[*tree.Node]int32) map[string]any {
	var walk func(n *tree.Node) map[string]any
	walk = func(n *tree.Node) map[string]any {
		counts := map[string]uint64{}
		for i, c := range n.Counts {
			counts[t.Labels[i]] = c
		}
		if n.IsLeaf() {
			return map[string]any{"id": ids[n], "leaf": t.Labels[n.Label()], "counts": counts}
		}
		return map[string]any{"id": ids[n], "split": map[string]string{"party": n.Split.Party, "table": n.Split.Table},
			"counts": counts, "left": walk(n.Left), "right": walk(n.Right)}
	}
	return walk(t.Root)
}
