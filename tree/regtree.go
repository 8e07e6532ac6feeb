package tree

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// RegNode is a node of a regression tree (a boosted model's tree): an
// internal node has a Split, a leaf a Weight, its contribution to the
// margin of every row that reaches it.
type RegNode struct {
	Split       *Split
	Weight      float64
	Left, Right *RegNode
}

// IsLeaf reports whether n has no split.
func (n *RegNode) IsLeaf() bool { return n.Split == nil }

// Leaf walks from n to a leaf, taking the left branch wherever holds(split)
// is true.
func (n *RegNode) Leaf(holds func(*Split) bool) *RegNode {
	for !n.IsLeaf() {
		if holds(n.Split) {
			n = n.Left
		} else {
			n = n.Right
		}
	}
	return n
}

// MarshalJSON writes the tree in result.json's form: splits as Tree's,
// leaves {"leaf": weight}.
func (n *RegNode) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := n.write(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (n *RegNode) write(b *bytes.Buffer) error {
	if n.IsLeaf() {
		if math.IsNaN(n.Weight) || math.IsInf(n.Weight, 0) {
			return fmt.Errorf("tree: leaf weight is not finite")
		}
		b.WriteString(`{"leaf":`)
		b.WriteString(strconv.FormatFloat(n.Weight, 'g', -1, 64))
		b.WriteByte('}')
		return nil
	}
	s := n.Split
	if s.Op != OpLE || math.IsNaN(s.Num) || math.IsInf(s.Num, 0) {
		return fmt.Errorf("tree: split on %s.%s: a regression tree splits numeric columns with a finite threshold", s.Table, s.Column)
	}
	b.WriteString(`{"split":{"party":`)
	writeString(b, s.Party)
	b.WriteString(`,"table":`)
	writeString(b, s.Table)
	b.WriteString(`,"column":`)
	writeString(b, s.Column)
	b.WriteString(`,"op":"<=","value":`)
	b.WriteString(strconv.FormatFloat(s.Num, 'g', -1, 64))
	b.WriteString(`},"left":`)
	if err := n.Left.write(b); err != nil {
		return err
	}
	b.WriteString(`,"right":`)
	if err := n.Right.write(b); err != nil {
		return err
	}
	b.WriteByte('}')
	return nil
}

type jsonRegNode struct {
	Leaf  *float64     `json:"leaf"`
	Split *jsonSplit   `json:"split"`
	Left  *jsonRegNode `json:"left"`
	Right *jsonRegNode `json:"right"`
}

// UnmarshalJSON reads MarshalJSON's form.
func (n *RegNode) UnmarshalJSON(data []byte) error {
	var j jsonRegNode
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return fmt.Errorf("%w: %w", ErrFormat, err)
	}
	m, err := readReg(&j, "root")
	if err != nil {
		return err
	}
	*n = *m
	return nil
}

func readReg(j *jsonRegNode, path string) (*RegNode, error) {
	if j == nil {
		return nil, fmt.Errorf("%w: %s: missing node", ErrFormat, path)
	}
	if j.Split == nil {
		if j.Leaf == nil || j.Left != nil || j.Right != nil {
			return nil, fmt.Errorf("%w: %s: a leaf has a weight and no children", ErrFormat, path)
		}
		return &RegNode{Weight: *j.Leaf}, nil
	}
	if j.Leaf != nil || j.Split.Op != OpLE {
		return nil, fmt.Errorf("%w: %s: a split node has op <= and no leaf weight", ErrFormat, path)
	}
	var x float64
	if err := json.Unmarshal(j.Split.Value, &x); err != nil {
		return nil, fmt.Errorf("%w: %s: split value: %w", ErrFormat, path, err)
	}
	s := &Split{Party: j.Split.Party, Table: j.Split.Table, Column: j.Split.Column, Op: OpLE, Num: x}
	l, err := readReg(j.Left, path+".left")
	if err != nil {
		return nil, err
	}
	r, err := readReg(j.Right, path+".right")
	if err != nil {
		return nil, err
	}
	return &RegNode{Split: s, Left: l, Right: r}, nil
}
