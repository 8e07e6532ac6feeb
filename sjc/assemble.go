package sjc

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/tree"
)

// skel is the public skeleton as result.json holds it.
type skel struct {
	ID     int32                          `json:"id"`
	Leaf   *string                        `json:"leaf"`
	Split  *struct{ Party, Table string } `json:"split"`
	Counts map[string]uint64              `json:"counts"`
	Left   *skel                          `json:"left"`
	Right  *skel                          `json:"right"`
}

// Assemble puts the whole tree together in `cohort sim`, which owns every
// party: the public skeleton of the result with each party's kept
// predicates (ModelSecret). It adds "tree" (the tree format of result.json) to the
// result.
func (Kind) Assemble(_ context.Context, spec *job.Spec, result []byte, parties map[string]job.Secrets, dir string) ([]byte, error) {
	var res map[string]json.RawMessage
	if err := json.Unmarshal(result, &res); err != nil {
		return nil, fmt.Errorf("sjc: result: %w", err)
	}
	var model string
	var labels []string
	var sk skel
	for k, v := range map[string]any{"model": &model, "labels": &labels, "skeleton": &sk} {
		if err := json.Unmarshal(res[k], v); err != nil {
			return nil, fmt.Errorf("sjc: result field %s: %w", k, err)
		}
	}
	splits := map[int32]tree.Split{}
	for _, name := range spec.PartyNames() {
		sec, ok := parties[name]
		if !ok {
			return nil, fmt.Errorf("sjc: no data dir of party %s", name)
		}
		b, err := sec.ReadSecret(model)
		if err != nil {
			return nil, fmt.Errorf("sjc: party %s's part of the model: %w", name, err)
		}
		var mp ModelPart
		if err := json.Unmarshal(b, &mp); err != nil {
			return nil, fmt.Errorf("sjc: party %s's part of the model: %w", name, err)
		}
		for _, s := range mp.Splits {
			splits[s.Node] = tree.Split{Party: name, Table: s.Table, Column: s.Column, Op: s.Op, Num: s.Num, Cat: s.Cat}
		}
	}
	t, err := assembleTree(&sk, labels, splits)
	if err != nil {
		return nil, err
	}
	tj, err := t.MarshalJSON()
	if err != nil {
		return nil, err
	}
	res["tree"] = tj
	return json.Marshal(res)
}

// assembleTree joins a skeleton and the predicates of its split nodes.
func assembleTree(sk *skel, labels []string, splits map[int32]tree.Split) (*tree.Tree, error) {
	if !slices.IsSorted(labels) || len(labels) == 0 {
		return nil, fmt.Errorf("sjc: skeleton labels %q are not sorted", labels)
	}
	var walk func(s *skel) (*tree.Node, error)
	walk = func(s *skel) (*tree.Node, error) {
		if s == nil {
			return nil, fmt.Errorf("%w: skeleton node missing", tree.ErrFormat)
		}
		n := &tree.Node{Counts: make([]uint64, len(labels))}
		for l, c := range s.Counts {
			k, ok := slices.BinarySearch(labels, l)
			if !ok {
				return nil, fmt.Errorf("%w: skeleton node %d counts label %q", tree.ErrFormat, s.ID, l)
			}
			n.Counts[k] = c
		}
		if s.Split == nil {
			return n, nil
		}
		sp, ok := splits[s.ID]
		if !ok || sp.Party != s.Split.Party || sp.Table != s.Split.Table {
			return nil, fmt.Errorf("sjc: no party kept the predicate of node %d (table %s of party %s)", s.ID, s.Split.Table, s.Split.Party)
		}
		n.Split = &sp
		var err error
		if n.Left, err = walk(s.Left); err != nil {
			return nil, err
		}
		if n.Right, err = walk(s.Right); err != nil {
			return nil, err
		}
		return n, nil
	}
	root, err := walk(sk)
	if err != nil {
		return nil, err
	}
	return &tree.Tree{Labels: labels, Root: root}, nil
}
