// Package tree is the decision tree model that sjc, pgen and transform
// share, kept outside every kind so that none imports another: the tree as
// it is written to result.json (`cohort sim`'s "tree": splits {party, table,
// column, op, value}, class counts, leaves with their label), its C4.5
// pessimistic pruning, the anonymity of its paths and the pruning that
// ensures it (anonymity.go, atp.go), its prediction walk, and the one-process
// grower (grow.go: pgen's parties and coordinator, kde's evaluation; with
// GrowParams.Multiway C4.5's multiway tree, growmulti.go and multiway.go,
// which only pgen reads). Both the join-aware
// builder (package sjc) and the plaintext join-then-build reference
// produce this type, so trees compare byte for byte through their JSON.
package tree

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Split ops, as result.json writes them.
const (
	OpLE = "<=" // numeric: Column <= Num
	OpEQ = "==" // categorical: Column == Cat
	OpIn = "in" // categorical, multiway: one branch per set of values (Node.Branches)
)

// Split is an internal node's predicate; the left child is where it holds.
// A multiway split (Op OpIn) has no value: its node's Branches name them.
type Split struct {
	Party, Table, Column string
	Op                   string
	Num                  float64 // threshold, for OpLE
	Cat                  string  // value, for OpEQ
}

// Holds evaluates the predicate on a value of the split column: x for a
// numeric column, s for a categorical one.
func (s *Split) Holds(x float64, str string) bool {
	if s.Op == OpLE {
		return x <= s.Num
	}
	return str == s.Cat
}

// String is the predicate as "party:table.column <= 3.5".
func (s *Split) String() string {
	v := strconv.Quote(s.Cat)
	switch s.Op {
	case OpLE:
		v = strconv.FormatFloat(s.Num, 'g', -1, 64)
	case OpIn:
		v = "(branches)"
	}
	return fmt.Sprintf("%s:%s.%s %s %s", s.Party, s.Table, s.Column, s.Op, v)
}

// Node is one node of a tree. Counts[i] is the number of training join rows
// of class Tree.Labels[i] at the node. A leaf has no Split. A binary split
// has Left and Right; a multiway one (Split.Op OpIn, multiway.go) has
// Branches instead, and only code of this package and pgen walks those.
type Node struct {
	Split       *Split
	Counts      []uint64
	Left, Right *Node
	Branches    []Branch
}

// IsLeaf reports whether n has no split.
func (n *Node) IsLeaf() bool { return n.Split == nil }

// Label is the index of the majority class of n's counts, ties to the
// smallest label (labels are sorted, so the smallest index).
func (n *Node) Label() int { return Majority(n.Counts) }

// Majority is the index of the largest count, the first on ties.
func Majority(counts []uint64) int {
	best := 0
	for i, c := range counts {
		if c > counts[best] {
			best = i
		}
	}
	return best
}

// Tree is a decision tree over class labels Labels (sorted).
type Tree struct {
	Labels []string
	Root   *Node
}

// Leaf walks from the root to a leaf, taking the left branch wherever
// holds(split) is true. At a multiway split it takes the branch one of
// whose values holds (asked as Column == value); when none does (a value
// none of the node's training rows had) the walk stops at that node, whose
// majority class is the one C4.5 gives such a value's empty branch.
func (t *Tree) Leaf(holds func(*Split) bool) *Node {
	n := t.Root
	for !n.IsLeaf() {
		if n.Split.Op == OpIn {
			next := n.branchOf(holds)
			if next == nil {
				return n
			}
			n = next
			continue
		}
		if holds(n.Split) {
			n = n.Left
		} else {
			n = n.Right
		}
	}
	return n
}

// Size returns the number of nodes and of leaves.
func (t *Tree) Size() (nodes, leaves int) {
	var walk func(*Node)
	walk = func(n *Node) {
		nodes++
		if n.IsLeaf() {
			leaves++
			return
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(t.Root)
	return nodes, leaves
}

// C4.5's confidence factor default.
const DefaultCF = 0.25

// Prune applies C4.5 pessimistic pruning bottom-up (Xu, thesis §3.3.3):
// an internal node n becomes a leaf when Leaf_error(n) <= Tree_error(n),
// where Leaf_error(n) = E + AddErrs(N, E) for the N training join rows at n,
// E of them not of n's majority class, and Tree_error(n) is the sum of
// Leaf_error over the leaves of n's (already pruned) subtree. AddErrs is
// C4.5's upper confidence limit, see AddErrs. Prune returns the number of
// internal nodes turned into leaves.
func (t *Tree) Prune(cf float64) int {
	pruned := 0
	var walk func(*Node) float64
	walk = func(n *Node) float64 {
		N, E := errorsAt(n)
		leafErr := E + AddErrs(N, E, cf)
		if n.IsLeaf() {
			return leafErr
		}
		treeErr := 0.0
		for _, c := range n.Children() {
			treeErr += walk(c)
		}
		if leafErr <= treeErr {
			n.makeLeaf()
			pruned++
			return leafErr
		}
		return treeErr
	}
	walk(t.Root)
	return pruned
}

func errorsAt(n *Node) (N, E float64) {
	var tot, maj uint64
	for _, c := range n.Counts {
		tot += c
	}
	maj = n.Counts[Majority(n.Counts)]
	return float64(tot), float64(tot - maj)
}

// AddErrs is the number of extra errors C4.5 adds to E observed errors
// among N cases at confidence factor cf: the upper limit of the binomial
// confidence interval times N, minus E. The formula is C4.5's (Quinlan,
// C4.5: Programs for Machine Learning, 1993, §4.2; release 8 stats.c
// AddErrs; the same in Weka's Stats.addErrs):
//
//	E = 0:        N·(1 − cf^(1/N))
//	0 < E < 1:    v0 + E·(AddErrs(N, 1) − v0),  v0 = AddErrs(N, 0)
//	E + 0.5 ≥ N:  0.67·(N − E)
//	otherwise:    N·p − E,  p = (E + 0.5 + z²/2 + sqrt(z²·((E+0.5)(1 − (E+0.5)/N) + z²/4))) / (N + z²)
//
// with z the normal deviate for cf, linearly interpolated in C4.5's table
// (cf 0.25 gives z = 0.6925). N = 0 gives 0.
func AddErrs(N, E, cf float64) float64 {
	if N <= 0 {
		return 0
	}
	if E < 1e-6 {
		return N * (1 - math.Exp(math.Log(cf)/N))
	}
	if E < 0.9999 {
		v0 := N * (1 - math.Exp(math.Log(cf)/N))
		return v0 + E*(AddErrs(N, 1, cf)-v0)
	}
	if E+0.5 >= N {
		return 0.67 * (N - E)
	}
	z2 := deviate(cf)
	z2 *= z2
	p := (E + 0.5 + z2/2 + math.Sqrt(z2*((E+0.5)*(1-(E+0.5)/N)+z2/4))) / (N + z2)
	return N*p - E
}

// deviate interpolates C4.5's table of normal deviates for confidence cf.
func deviate(cf float64) float64 {
	val := []float64{0, 0.001, 0.005, 0.01, 0.05, 0.10, 0.20, 0.40, 1.00}
	dev := []float64{100.0, 3.09, 2.58, 2.33, 1.65, 1.28, 0.84, 0.25, 0.00}
	i := 0
	for i < len(val)-1 && cf > val[i] {
		i++
	}
	if i == 0 {
		return dev[0]
	}
	return dev[i-1] + (dev[i]-dev[i-1])*(cf-val[i-1])/(val[i]-val[i-1])
}

// MarshalJSON writes the tree in result.json's format: the root node object.
func (t *Tree) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := t.writeNode(&b, t.Root); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (t *Tree) writeNode(b *bytes.Buffer, n *Node) error {
	if len(t.Labels) == 0 {
		return errors.New("tree: no class labels")
	}
	if len(n.Counts) != len(t.Labels) {
		return fmt.Errorf("tree: node has %d counts for %d labels", len(n.Counts), len(t.Labels))
	}
	b.WriteByte('{')
	if n.IsLeaf() {
		b.WriteString(`"leaf":`)
		writeString(b, t.Labels[n.Label()])
	} else {
		s := n.Split
		b.WriteString(`"split":{"party":`)
		writeString(b, s.Party)
		b.WriteString(`,"table":`)
		writeString(b, s.Table)
		b.WriteString(`,"column":`)
		writeString(b, s.Column)
		b.WriteString(`,"op":`)
		writeString(b, s.Op)
		if s.Op == OpIn {
			return t.writeMultiway(b, n)
		}
		b.WriteString(`,"value":`)
		switch s.Op {
		case OpLE:
			if math.IsNaN(s.Num) || math.IsInf(s.Num, 0) {
				return fmt.Errorf("tree: split %s: threshold is not finite", s)
			}
			b.WriteString(strconv.FormatFloat(s.Num, 'g', -1, 64))
		case OpEQ:
			writeString(b, s.Cat)
		default:
			return fmt.Errorf("tree: split on %s.%s: unknown op %q", s.Table, s.Column, s.Op)
		}
		b.WriteByte('}')
	}
	t.writeCounts(b, n)
	if !n.IsLeaf() {
		b.WriteString(`,"left":`)
		if err := t.writeNode(b, n.Left); err != nil {
			return err
		}
		b.WriteString(`,"right":`)
		if err := t.writeNode(b, n.Right); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

// writeCounts writes n's "counts" member, after a comma.
func (t *Tree) writeCounts(b *bytes.Buffer, n *Node) {
	b.WriteString(`,"counts":{`)
	for i, l := range t.Labels {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, l)
		b.WriteByte(':')
		b.WriteString(strconv.FormatUint(n.Counts[i], 10))
	}
	b.WriteByte('}')
}

// writeString writes s as a JSON string without HTML escaping, so that
// "<=" stays readable. (json.Marshal of a Tree re-escapes it as \u003c=;
// use an Encoder with SetEscapeHTML(false), or MarshalJSON directly.)
func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a string always encodes; writing to a Buffer never fails
	b.Truncate(b.Len() - 1) // Encode's newline
}

// jsonNode is the decoding form of a node.
type jsonNode struct {
	Leaf     *string           `json:"leaf"`
	Split    *jsonSplit        `json:"split"`
	Counts   map[string]uint64 `json:"counts"`
	Left     *jsonNode         `json:"left"`
	Right    *jsonNode         `json:"right"`
	Branches []jsonBranch      `json:"branches"`
}

type jsonSplit struct {
	Party  string          `json:"party"`
	Table  string          `json:"table"`
	Column string          `json:"column"`
	Op     string          `json:"op"`
	Value  json.RawMessage `json:"value"`
}

// ErrFormat marks a tree JSON that does not follow result.json's tree format.
var ErrFormat = errors.New("tree: malformed tree JSON")

// UnmarshalJSON reads result.json's tree format. The labels are the keys of the
// root's counts, sorted; every node must list the same labels. It refuses a
// multiway split (ErrMultiway): its callers walk Left and Right; use
// UnmarshalMultiway to read both forms.
func (t *Tree) UnmarshalJSON(data []byte) error { return t.unmarshal(data, false) }

func (t *Tree) unmarshal(data []byte, multiway bool) error {
	var root jsonNode
	if err := json.Unmarshal(data, &root); err != nil {
		return fmt.Errorf("%w: %w", ErrFormat, err)
	}
	t.Labels = nil
	for l := range root.Counts {
		t.Labels = append(t.Labels, l)
	}
	slices.Sort(t.Labels)
	if len(t.Labels) == 0 {
		return fmt.Errorf("%w: root: counts names no class label", ErrFormat)
	}
	n, err := t.readNode(&root, "root", multiway)
	if err != nil {
		return err
	}
	t.Root = n
	return nil
}

func (t *Tree) readNode(j *jsonNode, path string, multiway bool) (*Node, error) {
	if len(j.Counts) != len(t.Labels) {
		return nil, fmt.Errorf("%w: %s: counts has %d labels, the root %d", ErrFormat, path, len(j.Counts), len(t.Labels))
	}
	n := &Node{Counts: make([]uint64, len(t.Labels))}
	for i, l := range t.Labels {
		c, ok := j.Counts[l]
		if !ok {
			return nil, fmt.Errorf("%w: %s: counts lacks label %q", ErrFormat, path, l)
		}
		n.Counts[i] = c
	}
	if (j.Split == nil) == (j.Leaf == nil) {
		return nil, fmt.Errorf("%w: %s: a node has either split or leaf", ErrFormat, path)
	}
	if j.Leaf != nil {
		if j.Left != nil || j.Right != nil || j.Branches != nil {
			return nil, fmt.Errorf("%w: %s: leaf with children", ErrFormat, path)
		}
		return n, nil
	}
	s := &Split{Party: j.Split.Party, Table: j.Split.Table, Column: j.Split.Column, Op: j.Split.Op}
	if s.Op == OpIn {
		if !multiway {
			return nil, fmt.Errorf("%w: %s: %w", ErrFormat, path, ErrMultiway)
		}
		n.Split = s
		return n, t.readBranches(n, j, path)
	}
	if j.Branches != nil {
		return nil, fmt.Errorf("%w: %s: branches under a binary split", ErrFormat, path)
	}
	var err error
	switch s.Op {
	case OpLE:
		err = json.Unmarshal(j.Split.Value, &s.Num)
	case OpEQ:
		err = json.Unmarshal(j.Split.Value, &s.Cat)
	default:
		err = fmt.Errorf("unknown op %q", s.Op)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: split value: %w", ErrFormat, path, err)
	}
	n.Split = s
	if j.Left == nil || j.Right == nil {
		return nil, fmt.Errorf("%w: %s: split without two children", ErrFormat, path)
	}
	if n.Left, err = t.readNode(j.Left, path+".left", multiway); err != nil {
		return nil, err
	}
	if n.Right, err = t.readNode(j.Right, path+".right", multiway); err != nil {
		return nil, err
	}
	return n, nil
}

// Diff describes the first difference between two trees (labels, then
// nodes in pre-order), or returns "" when they are identical.
func Diff(a, b *Tree) string {
	if !slices.Equal(a.Labels, b.Labels) {
		return fmt.Sprintf("labels %q vs %q", a.Labels, b.Labels)
	}
	var walk func(x, y *Node, path string) string
	walk = func(x, y *Node, path string) string {
		if !slices.Equal(x.Counts, y.Counts) {
			return fmt.Sprintf("%s: counts %v vs %v", path, x.Counts, y.Counts)
		}
		if x.IsLeaf() != y.IsLeaf() {
			return fmt.Sprintf("%s: leaf %v vs %v", path, x.IsLeaf(), y.IsLeaf())
		}
		if x.IsLeaf() {
			return ""
		}
		if *x.Split != *y.Split {
			return fmt.Sprintf("%s: split %s vs %s", path, x.Split, y.Split)
		}
		if x.Split.Op == OpIn {
			return diffBranches(x, y, path, walk)
		}
		if d := walk(x.Left, y.Left, path+".left"); d != "" {
			return d
		}
		return walk(x.Right, y.Right, path+".right")
	}
	return walk(a.Root, b.Root, "root")
}

// Midpoint is the numeric threshold of a split between adjacent distinct
// values a < b present at a node: (a+b)/2 in float64; should rounding make
// it b (a and b adjacent floats), a, so that a goes left and b right. Every
// builder of trees in this format (sjc, its reference builders, transform's
// decoder) places thresholds by it, so their trees compare exactly.
func Midpoint(a, b float64) float64 {
	t := (a + b) / 2
	if math.IsInf(t, 0) {
		t = a/2 + b/2
	}
	if t >= b {
		t = a
	}
	return t
}
