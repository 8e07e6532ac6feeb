package transform

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"

	"github.com/cohortdm/cohort/tree"
)

// ErrTree marks a tree file that is neither Cohort's tree JSON nor a valid
// scikit-learn-style export.
var ErrTree = errors.New("transform: bad tree file")

// MaxTreeBytes bounds a tree file.
const MaxTreeBytes = 256 << 20

// TreeFormat names a tree file format.
type TreeFormat string

// The tree file formats ParseTree reads.
const (
	FormatCohort  TreeFormat = "cohort"
	FormatSklearn TreeFormat = "sklearn"
)

// ParseTree reads a miner's tree: Cohort's tree JSON (package tree,
// the format of result.json) or, when the object has "children_left", the
// scikit-learn-style export (ParseSklearn). Errors name the place, never a
// value.
func ParseTree(data []byte) (*tree.Tree, TreeFormat, error) {
	if len(data) > MaxTreeBytes {
		return nil, "", fmt.Errorf("%w: larger than %d bytes", ErrTree, MaxTreeBytes)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, "", fmt.Errorf("%w: not a JSON object (%s)", ErrTree, jsonProblem(err))
	}
	if _, ok := probe["children_left"]; ok {
		t, err := ParseSklearn(data)
		return t, FormatSklearn, err
	}
	var t tree.Tree
	if err := t.UnmarshalJSON(data); err != nil {
		return nil, "", fmt.Errorf("%w: %s", ErrTree, redact(err.Error()))
	}
	return &t, FormatCohort, nil
}

// quoted matches a Go-quoted string in an error message.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// redact replaces the quoted strings of a message (package tree's errors
// quote labels and ops read from the file) by "…".
func redact(msg string) string { return quoted.ReplaceAllString(msg, `"…"`) }

// sklearnFile is the scikit-learn-style export: the arrays of a fitted
// DecisionTreeClassifier's tree_ (node 0 is the root, -1 marks a leaf's
// children, -2 its feature and threshold), the feature names and the
// classes as strings. value has shape (nodes, 1, classes), as tree_.value:
// class counts, or class fractions (scikit-learn >= 1.4), turned into
// counts with n_node_samples.
type sklearnFile struct {
	FeatureNames  []string      `json:"feature_names"`
	Classes       []string      `json:"classes"`
	ChildrenLeft  []int         `json:"children_left"`
	ChildrenRight []int         `json:"children_right"`
	Feature       []int         `json:"feature"`
	Threshold     []float64     `json:"threshold"`
	NNodeSamples  []uint64      `json:"n_node_samples"`
	Value         [][][]float64 `json:"value"`
}

// ParseSklearn reads a scikit-learn-style export strictly: every field
// present, no unknown field, nothing after the object, arrays of one
// length, a tree (every node but the root the child of exactly one node
// with a smaller index), leaves marked as scikit-learn marks them, counts
// that are whole, add up to n_node_samples and to their children's. The
// tree's splits are "feature <= threshold" with empty party and table;
// its labels are the classes, sorted.
func ParseSklearn(data []byte) (*tree.Tree, error) {
	var f sklearnFile
	if err := decodeStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%w: sklearn export: %w", ErrTree, err)
	}
	if err := f.checkShape(); err != nil {
		return nil, fmt.Errorf("%w: sklearn export: %w", ErrTree, err)
	}
	counts, err := f.counts()
	if err != nil {
		return nil, fmt.Errorf("%w: sklearn export: %w", ErrTree, err)
	}
	return f.build(counts), nil
}

// checkShape checks the fields' lengths, names and the tree structure.
func (f *sklearnFile) checkShape() error {
	n := len(f.ChildrenLeft)
	switch {
	case n == 0:
		return errors.New("children_left: empty")
	case len(f.ChildrenRight) != n || len(f.Feature) != n || len(f.Threshold) != n || len(f.NNodeSamples) != n || len(f.Value) != n:
		return errors.New("children_right, feature, threshold, n_node_samples and value: not one entry per node")
	case len(f.Classes) == 0:
		return errors.New("classes: empty")
	}
	for _, list := range []struct {
		name  string
		items []string
	}{{"classes", f.Classes}, {"feature_names", f.FeatureNames}} {
		seen := map[string]bool{}
		for i, s := range list.items {
			if s == "" || seen[s] {
				return fmt.Errorf("%s[%d]: empty or repeated", list.name, i)
			}
			seen[s] = true
		}
	}
	parents := make([]int, n)
	for i := range n {
		l, r := f.ChildrenLeft[i], f.ChildrenRight[i]
		if l == -1 || r == -1 {
			if l != -1 || r != -1 || f.Feature[i] != -2 || f.Threshold[i] != -2 {
				return fmt.Errorf("node %d: a leaf has children_left, children_right -1 and feature, threshold -2", i)
			}
			continue
		}
		if l <= i || r <= i || l >= n || r >= n || l == r {
			return fmt.Errorf("node %d: children must be two distinct later nodes", i)
		}
		parents[l]++
		parents[r]++
		if f.Feature[i] < 0 || f.Feature[i] >= len(f.FeatureNames) {
			return fmt.Errorf("node %d: feature: not an index into feature_names", i)
		}
		if math.IsNaN(f.Threshold[i]) || math.IsInf(f.Threshold[i], 0) {
			return fmt.Errorf("node %d: threshold: not finite", i)
		}
	}
	for i := 1; i < n; i++ {
		if parents[i] != 1 {
			return fmt.Errorf("node %d: not the child of exactly one node", i)
		}
	}
	return nil
}

// counts turns value into class counts per node (value·n/Σvalue, whole),
// and checks that a node's counts are its children's sums.
func (f *sklearnFile) counts() ([][]uint64, error) {
	out := make([][]uint64, len(f.Value))
	for i, v := range f.Value {
		if len(v) != 1 || len(v[0]) != len(f.Classes) {
			return nil, fmt.Errorf("node %d: value: want one output with one entry per class", i)
		}
		sum := 0.0
		for _, x := range v[0] {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				return nil, fmt.Errorf("node %d: value: not finite and non-negative", i)
			}
			sum += x
		}
		n := f.NNodeSamples[i]
		if sum <= 0 || n == 0 {
			return nil, fmt.Errorf("node %d: value or n_node_samples: zero", i)
		}
		out[i] = make([]uint64, len(v[0]))
		var total uint64
		for c, x := range v[0] {
			y := x * float64(n) / sum
			r := math.Round(y)
			if math.Abs(y-r) > 1e-6*max(1, float64(n)) {
				return nil, fmt.Errorf("node %d: value: not whole counts (weighted samples are not supported)", i)
			}
			out[i][c] = uint64(r)
			total += out[i][c]
		}
		if total != n {
			return nil, fmt.Errorf("node %d: value: counts do not add up to n_node_samples", i)
		}
	}
	for i, l := range f.ChildrenLeft {
		if l == -1 {
			continue
		}
		for c := range out[i] {
			if out[l][c]+out[f.ChildrenRight[i]][c] != out[i][c] {
				return nil, fmt.Errorf("node %d: value: not the sum of its children's", i)
			}
		}
	}
	return out, nil
}

// build assembles the tree bottom-up (children have larger indices), with
// labels sorted as strings.
func (f *sklearnFile) build(counts [][]uint64) *tree.Tree {
	labels := slices.Clone(f.Classes)
	slices.Sort(labels)
	perm := make([]int, len(labels)) // perm[c]: position of class c among the sorted labels
	for c, s := range f.Classes {
		perm[c], _ = slices.BinarySearch(labels, s)
	}
	nodes := make([]*tree.Node, len(counts))
	for i := len(counts) - 1; i >= 0; i-- {
		n := &tree.Node{Counts: make([]uint64, len(labels))}
		for c, x := range counts[i] {
			n.Counts[perm[c]] = x
		}
		if l := f.ChildrenLeft[i]; l != -1 {
			n.Split = &tree.Split{Column: f.FeatureNames[f.Feature[i]], Op: tree.OpLE, Num: f.Threshold[i]}
			n.Left, n.Right = nodes[l], nodes[f.ChildrenRight[i]]
		}
		nodes[i] = n
	}
	return &tree.Tree{Labels: labels, Root: nodes[0]}
}
