package tree

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
)

// A multiway split is C4.5's test on a nominal attribute (Quinlan, C4.5:
// Programs for Machine Learning, 1993, §2.2): one branch per value of the
// attribute at the node, where a binary split tests one value against the
// rest. ATP (anonymity.go) merges branches, so a branch holds a set of
// values. It is written to JSON as
//
//	{"split": {"party", "table", "column", "op": "in"}, "counts": {...},
//	 "branches": [{"values": ["a", "b"], "node": {...}}, ...]}
//
// Tree.UnmarshalJSON refuses that form (ErrMultiway), so that sjc, boost,
// transform and kde, which walk Left and Right, never get such a tree from
// JSON; UnmarshalMultiway reads both forms.

// Branch is one branch of a multiway split: the values that lead to it
// (sorted, at least one, no value in two branches of a node) and its
// subtree.
type Branch struct {
	Values []string
	Child  *Node
}

// ErrMultiway marks a tree JSON with a multiway split read by a reader of
// binary trees (Tree.UnmarshalJSON); it is wrapped with ErrFormat.
var ErrMultiway = errors.New(`a multiway split (op "in"), which this reader does not take: it reads binary trees only`)

// UnmarshalMultiway reads result.json's tree format with multiway splits
// as well as binary ones.
func UnmarshalMultiway(data []byte) (*Tree, error) {
	t := &Tree{}
	if err := t.unmarshal(data, true); err != nil {
		return nil, err
	}
	return t, nil
}

// Multiway reports whether some node of t has a multiway split.
func (t *Tree) Multiway() bool {
	var walk func(*Node) bool
	walk = func(n *Node) bool {
		if n.IsLeaf() {
			return false
		}
		if n.Split.Op == OpIn {
			return true
		}
		return walk(n.Left) || walk(n.Right)
	}
	return walk(t.Root)
}

// Children are n's children in order: Left and Right for a binary split,
// each branch's for a multiway one, none for a leaf.
func (n *Node) Children() []*Node {
	switch {
	case n.IsLeaf():
		return nil
	case n.Split.Op == OpIn:
		c := make([]*Node, len(n.Branches))
		for i, b := range n.Branches {
			c[i] = b.Child
		}
		return c
	}
	return []*Node{n.Left, n.Right}
}

// makeLeaf drops n's split and children.
func (n *Node) makeLeaf() {
	n.Split, n.Left, n.Right, n.Branches = nil, nil, nil, nil
}

// branchOf is the child of multiway node n one of whose values holds (as
// Column == value), nil when none does.
func (n *Node) branchOf(holds func(*Split) bool) *Node {
	eq := *n.Split
	eq.Op = OpEQ
	for _, b := range n.Branches {
		for _, v := range b.Values {
			eq.Cat = v
			if holds(&eq) {
				return b.Child
			}
		}
	}
	return nil
}

// writeMultiway ends the split object writeNode began and writes n's
// counts and branches.
func (t *Tree) writeMultiway(b *bytes.Buffer, n *Node) error {
	if len(n.Branches) < 2 {
		return fmt.Errorf("tree: multiway split on %s.%s: %d branches", n.Split.Table, n.Split.Column, len(n.Branches))
	}
	b.WriteByte('}')
	t.writeCounts(b, n)
	b.WriteString(`,"branches":[`)
	for i, br := range n.Branches {
		if i > 0 {
			b.WriteByte(',')
		}
		if len(br.Values) == 0 {
			return fmt.Errorf("tree: multiway split on %s.%s: a branch without values", n.Split.Table, n.Split.Column)
		}
		b.WriteString(`{"values":[`)
		for j, v := range br.Values {
			if j > 0 {
				b.WriteByte(',')
			}
			writeString(b, v)
		}
		b.WriteString(`],"node":`)
		if err := t.writeNode(b, br.Child); err != nil {
			return err
		}
		b.WriteByte('}')
	}
	b.WriteString("]}")
	return nil
}

type jsonBranch struct {
	Values []string  `json:"values"`
	Node   *jsonNode `json:"node"`
}

// readBranches reads multiway node n's branches: at least two, each with
// values and a node, no value in two branches, no left or right.
func (t *Tree) readBranches(n *Node, j *jsonNode, path string) error {
	if j.Left != nil || j.Right != nil {
		return fmt.Errorf("%w: %s: a multiway split with left or right", ErrFormat, path)
	}
	if len(j.Branches) < 2 {
		return fmt.Errorf("%w: %s: a multiway split without two branches", ErrFormat, path)
	}
	seen := map[string]bool{}
	for i, jb := range j.Branches {
		bpath := fmt.Sprintf("%s.branches[%d]", path, i)
		if len(jb.Values) == 0 || jb.Node == nil {
			return fmt.Errorf("%w: %s: a branch needs values and a node", ErrFormat, bpath)
		}
		for _, v := range jb.Values {
			if seen[v] {
				return fmt.Errorf("%w: %s: a value in two branches", ErrFormat, bpath)
			}
			seen[v] = true
		}
		child, err := t.readNode(jb.Node, bpath, true)
		if err != nil {
			return err
		}
		n.Branches = append(n.Branches, Branch{Values: slices.Clone(jb.Values), Child: child})
	}
	return nil
}

// diffBranches is Diff's step at two multiway nodes with equal splits.
func diffBranches(x, y *Node, path string, walk func(x, y *Node, path string) string) string {
	if len(x.Branches) != len(y.Branches) {
		return fmt.Sprintf("%s: %d branches vs %d", path, len(x.Branches), len(y.Branches))
	}
	for i := range x.Branches {
		bpath := fmt.Sprintf("%s.branches[%d]", path, i)
		if !slices.Equal(x.Branches[i].Values, y.Branches[i].Values) {
			return fmt.Sprintf("%s: values %q vs %q", bpath, x.Branches[i].Values, y.Branches[i].Values)
		}
		if d := walk(x.Branches[i].Child, y.Branches[i].Child, bpath); d != "" {
			return d
		}
	}
	return ""
}
