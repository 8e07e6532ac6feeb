package boost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/tree"
)

// ErrModel: the parties' kept parts do not make one model.
var ErrModel = errors.New("boost: the parts of the model do not fit")

// kept is what a party keeps of the model (ModelSecret): its predicates,
// by table and ordinal; at the class holder also the base score, the
// positive label and the trees' skeletons with their leaf weights.
type kept struct {
	Holder   bool              `msgpack:"holder" json:"holder"`
	Base     float64           `msgpack:"base" json:"base_score"`
	Positive string            `msgpack:"positive" json:"positive_class,omitempty"`
	Trees    []*skelNode       `msgpack:"trees" json:"trees,omitempty"`
	Splits   map[string][]pred `msgpack:"splits" json:"splits"`
	Parties  map[string]string `msgpack:"parties" json:"parties"` // table -> party, of Splits' tables
}

// pred is one split of a table: column <= threshold.
type pred struct {
	Column string  `msgpack:"column" json:"column"`
	Num    float64 `msgpack:"num" json:"threshold"`
}

// skelNode is a node of a tree as the class holder knows it: the winning
// table and the ordinal of its split there, or a leaf's weight.
type skelNode struct {
	Table   string    `msgpack:"table" json:"table,omitempty"`
	Ordinal int       `msgpack:"ordinal" json:"ordinal,omitempty"`
	Leaf    float64   `msgpack:"leaf" json:"leaf"`
	Left    *skelNode `msgpack:"left" json:"left,omitempty"`
	Right   *skelNode `msgpack:"right" json:"right,omitempty"`
}

// skeleton is the holder's finished trees as skelNodes.
func (h *Holder) skeleton(names func(int) string) []*skelNode {
	var walk func(n *node) *skelNode
	walk = func(n *node) *skelNode {
		if n.split == nil {
			return &skelNode{Leaf: n.weight}
		}
		return &skelNode{Table: names(n.split.Table), Ordinal: n.split.Ordinal, Left: walk(n.left), Right: walk(n.right)}
	}
	out := make([]*skelNode, len(h.trees))
	for i, t := range h.trees {
		out[i] = walk(t)
	}
	return out
}

// assembleModel puts the model together from every party's kept part.
func assembleModel(parts []*kept) (*Model, error) {
	var holder *kept
	splits := map[string][]pred{}
	owner := map[string]string{}
	for _, k := range parts {
		if k.Holder {
			holder = k
		}
		for t, ps := range k.Splits {
			splits[t], owner[t] = ps, k.Parties[t]
		}
	}
	if holder == nil {
		return nil, fmt.Errorf("%w: no part from the class holder", ErrModel)
	}
	var walk func(n *skelNode) (*tree.RegNode, error)
	walk = func(n *skelNode) (*tree.RegNode, error) {
		if n == nil {
			return nil, fmt.Errorf("%w: a split without two children", ErrModel)
		}
		if n.Left == nil && n.Right == nil {
			return &tree.RegNode{Weight: n.Leaf}, nil
		}
		ps := splits[n.Table]
		if n.Ordinal < 0 || n.Ordinal >= len(ps) {
			return nil, fmt.Errorf("%w: table %q kept no split of the skeleton's ordinal", ErrModel, n.Table)
		}
		l, err := walk(n.Left)
		if err != nil {
			return nil, err
		}
		r, err := walk(n.Right)
		if err != nil {
			return nil, err
		}
		p := ps[n.Ordinal]
		s := tree.Split{Party: owner[n.Table], Table: n.Table, Column: p.Column, Op: tree.OpLE, Num: p.Num}
		return &tree.RegNode{Split: &s, Left: l, Right: r}, nil
	}
	m := &Model{BaseScore: holder.Base, PositiveClass: holder.Positive}
	for _, t := range holder.Trees {
		rt, err := walk(t)
		if err != nil {
			return nil, err
		}
		m.Trees = append(m.Trees, rt)
	}
	return m, nil
}

// Assemble puts the whole model into a `cohort sim` result from every
// party's kept part (job.Assembler); a result that holds the released
// model already is returned as it is.
func (Kind) Assemble(_ context.Context, spec *job.Spec, result []byte, parties map[string]job.Secrets, _ string) ([]byte, error) {
	var res map[string]any
	if err := json.Unmarshal(result, &res); err != nil {
		return nil, fmt.Errorf("boost: result: %w", err)
	}
	if _, ok := res["model"]; ok {
		return result, nil
	}
	name, _ := res["model_secret"].(string)
	if name == "" {
		return nil, fmt.Errorf("%w: the result names no model", ErrModel)
	}
	var parts []*kept
	for _, p := range spec.PartyNames() {
		s, ok := parties[p]
		if !ok {
			continue
		}
		b, err := s.ReadSecret(name)
		if err != nil {
			return nil, fmt.Errorf("boost: party %s's part of the model: %w", p, err)
		}
		var k kept
		if err := json.Unmarshal(b, &k); err != nil {
			return nil, fmt.Errorf("boost: party %s's part of the model: %w", p, err)
		}
		parts = append(parts, &k)
	}
	m, err := assembleModel(parts)
	if err != nil {
		return nil, err
	}
	mb, err := m.JSON()
	if err != nil {
		return nil, err
	}
	res["model"] = json.RawMessage(mb)
	return json.MarshalIndent(res, "", "  ")
}
