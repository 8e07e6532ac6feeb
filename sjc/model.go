package sjc

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/tree"
)

// ModelPart is what a party keeps of a trained model (ModelSecret): the
// predicates of the skeleton nodes its tables split. With the public
// skeleton (result.json's "skeleton") and every party's part, the tree is
// whole; each party alone can answer only for its own nodes.
type ModelPart struct {
	Job    string       `json:"job"`
	Party  string       `json:"party"`
	Labels []string     `json:"labels"`
	Splits []ModelSplit `json:"splits"`
	// Nodes is the public skeleton of the final tree, parents first, so
	// that a later sjc-predict job can walk it.
	Nodes []ModelNode `json:"nodes"`
}

// ModelNode is one node of the final skeleton: a split on Table (its
// predicate kept by the table's party) or, when Table is empty, a leaf
// labelled Labels[Label].
type ModelNode struct {
	ID    int32  `json:"id" msgpack:"id"`
	Table string `json:"table,omitempty" msgpack:"table"`
	Left  int32  `json:"left,omitempty" msgpack:"left"`
	Right int32  `json:"right,omitempty" msgpack:"right"`
	Label int    `json:"label" msgpack:"label"`
}

// ModelSplit is one node's predicate.
type ModelSplit struct {
	Node   int32   `json:"node"`
	Table  string  `json:"table"`
	Column string  `json:"column"`
	Op     string  `json:"op"`
	Num    float64 `json:"num,omitempty"`
	Cat    string  `json:"cat,omitempty"`
}

// split is the predicate as a tree.Split of party.
func (m ModelSplit) split(party string) *tree.Split {
	return &tree.Split{Party: party, Table: m.Table, Column: m.Column, Op: m.Op, Num: m.Num, Cat: m.Cat}
}

// finish keeps the party's predicates of the final skeleton, which must
// be the one the log determines (the committed skeleton, pruned), and
// classifies the test join rows when the spec has a test set.
func (s *session) finish(ctx context.Context, step job.Step, gr *growth, a finishArgs) (finishOutput, error) {
	want, err := gr.finishArgs()
	if err != nil {
		return finishOutput{}, s.refuse(step, "%v", err)
	}
	if !slices.Equal(a.Nodes, want.Nodes) {
		return finishOutput{}, s.refuse(step, "asks to keep a tree of %d nodes that is not the log's final skeleton", len(a.Nodes))
	}
	if len(s.own) == 0 {
		return finishOutput{}, nil
	}
	if err := s.prepare(gr); err != nil {
		return finishOutput{}, err
	}
	won, err := s.finalSplits(step, gr)
	if err != nil {
		return finishOutput{}, err
	}
	if err := s.keepModel(a, won); err != nil {
		return finishOutput{}, err
	}
	out := finishOutput{Target: s.owns(0)}
	if len(s.p.Spec().Test) > 0 {
		if out.Correct, out.Total, err = s.evaluate(ctx, step, a, won); err != nil {
			return finishOutput{}, err
		}
	}
	// The training state is no longer needed.
	return out, s.dropStates()
}

// keepModel writes the party's ModelPart: the final skeleton and its
// predicates of it.
func (s *session) keepModel(a finishArgs, won map[int32]*tree.Split) error {
	mp := ModelPart{Job: s.p.JobID(), Party: s.p.Self(), Labels: s.labels, Splits: []ModelSplit{}}
	for _, n := range a.Nodes {
		mn := ModelNode{ID: n.ID, Label: n.Label}
		if n.Table >= 0 {
			mn.Table, mn.Left, mn.Right = s.g.Tables[n.Table].Name, n.Left, n.Right
		}
		mp.Nodes = append(mp.Nodes, mn)
		if n.Table < 0 || !s.owns(n.Table) {
			continue
		}
		sp := won[n.ID]
		if sp == nil {
			return fmt.Errorf("sjc: party %s has no predicate for tree node %d", s.p.Self(), n.ID)
		}
		mp.Splits = append(mp.Splits, ModelSplit{Node: n.ID, Table: sp.Table, Column: sp.Column, Op: sp.Op, Num: sp.Num, Cat: sp.Cat})
	}
	b, err := json.MarshalIndent(&mp, "", "  ")
	if err != nil {
		return err
	}
	if err := s.p.Secrets().WriteSecret(ModelSecret(s.p.JobID()), append(b, '\n')); err != nil {
		return fmt.Errorf("party %s: keep its part of the model: %w", s.p.Self(), err)
	}
	return nil
}

// finalSplits returns the party's won predicates by node: from its kept
// state (whose nodes' counts it checks against the log's), or, when an
// earlier attempt of finish has already kept the model and emptied the
// state, from its kept model part.
func (s *session) finalSplits(step job.Step, gr *growth) (map[int32]*tree.Split, error) {
	won := map[int32]*tree.Split{}
	base, err := s.base(gr)
	if err == nil {
		if err := s.checkCounts(step, gr, base); err != nil {
			return nil, err
		}
		for i := range base.Won {
			won[base.Won[i].Node] = &base.Won[i].Split
		}
		return won, nil
	}
	b, rerr := s.p.Secrets().ReadSecret(ModelSecret(s.p.JobID()))
	if rerr != nil {
		return nil, err
	}
	var mp ModelPart
	if jerr := json.Unmarshal(b, &mp); jerr != nil || mp.Job != s.p.JobID() {
		return nil, err
	}
	for _, m := range mp.Splits {
		won[m.Node] = m.split(s.p.Self())
	}
	return won, nil
}
