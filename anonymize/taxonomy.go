package anonymize

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/cohortdm/cohort/internal/strictyaml"
)

// Errors callers may tell apart with errors.Is. Every returned error wraps one
// of them and names the column and value concerned.
var (
	// ErrTaxonomy marks a malformed taxonomy: ragged ARX rows, a label with two
	// parents, several roots, overlapping or non-partitioning intervals.
	ErrTaxonomy = errors.New("anonymize: invalid taxonomy")
	// ErrNotCovered marks a data value that no leaf of the column's taxonomy covers.
	ErrNotCovered = errors.New("anonymize: value not in taxonomy")
	// ErrRequirement marks an invalid privacy requirement or parameter
	// (k < 1, k larger than the table, an unknown QID column, ...).
	ErrRequirement = errors.New("anonymize: invalid requirement")
	// ErrViolation is returned by the checkers when a table fails a model.
	ErrViolation = errors.New("anonymize: privacy model violated")
)

// Node is one value of a taxonomy: a leaf (a raw value, or for numeric
// taxonomies given as intervals, the finest interval) or a generalisation.
// Lo and Hi are the closed range of the leaf values below a numeric node.
type Node struct {
	Label    string
	Parent   int // -1 for the root
	Children []int
	Depth    int // root 0
	Height   int // leaf 0
	Leaves   int // leaves in the subtree; Reddy et al.'s privacy strength P for categorical nodes
	Lo, Hi   float64
}

// Taxonomy is a generalisation tree for one column: a categorical tree, or a
// numeric interval tree whose children partition their parent's range.
// Node 0 is the root. Node ids are stable: the order of first appearance in
// the source, so two loads of one file give the same ids. A Taxonomy is
// immutable after loading and safe for concurrent use.
type Taxonomy struct {
	Column  string
	Numeric bool
	Nodes   []Node
	leaf    map[string]int // leaf label -> node id
	ordered []int          // numeric: leaf ids sorted by Lo, for interval lookup
}

// Root is the id of the most general node.
func (t *Taxonomy) Root() int { return 0 }

// IsLeaf reports whether node id has no children.
func (t *Taxonomy) IsLeaf(id int) bool { return len(t.Nodes[id].Children) == 0 }

// MaxLevel is the largest number of generalisation steps from a leaf to the
// root (the height of the root); levels 0..MaxLevel are the full-domain levels.
func (t *Taxonomy) MaxLevel() int { return t.Nodes[0].Height }

// NumLeaves is the number of leaves (|A| in the NCP of Xu et al.).
func (t *Taxonomy) NumLeaves() int { return t.Nodes[0].Leaves }

// Leaf returns the leaf node covering value: the leaf with that label, or for
// a numeric taxonomy the leaf interval containing the number.
func (t *Taxonomy) Leaf(value string) (int, error) {
	if id, ok := t.leaf[value]; ok {
		return id, nil
	}
	if t.Numeric {
		x, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err == nil {
			// binary search over leaves ordered by Lo
			i, _ := slices.BinarySearchFunc(t.ordered, x, func(id int, x float64) int {
				switch {
				case t.Nodes[id].Hi < x:
					return -1
				case t.Nodes[id].Lo > x:
					return 1
				}
				return 0
			})
			if i < len(t.ordered) {
				if n := t.Nodes[t.ordered[i]]; n.Lo <= x && x <= n.Hi {
					return t.ordered[i], nil
				}
			}
		}
	}
	return 0, fmt.Errorf("%w: column %q: value %q", ErrNotCovered, t.Column, value)
}

// Ancestor returns the node level steps above id, stopping at the root.
func (t *Taxonomy) Ancestor(id, level int) int {
	for ; level > 0 && t.Nodes[id].Parent >= 0; level-- {
		id = t.Nodes[id].Parent
	}
	return id
}

// Generalise returns the label of value generalised level steps up its
// taxonomy (level 0 is the leaf; levels beyond the root give the root).
func (t *Taxonomy) Generalise(value string, level int) (string, error) {
	if level < 0 {
		return "", fmt.Errorf("%w: column %q: negative level %d", ErrRequirement, t.Column, level)
	}
	id, err := t.Leaf(value)
	if err != nil {
		return "", err
	}
	return t.Nodes[t.Ancestor(id, level)].Label, nil
}

// Covers reports whether node anc is id or one of its ancestors.
func (t *Taxonomy) Covers(anc, id int) bool {
	for ; id >= 0; id = t.Nodes[id].Parent {
		if id == anc {
			return true
		}
	}
	return false
}

// LCA returns the lowest common ancestor of a and b.
func (t *Taxonomy) LCA(a, b int) int {
	for t.Nodes[a].Depth > t.Nodes[b].Depth {
		a = t.Nodes[a].Parent
	}
	for t.Nodes[b].Depth > t.Nodes[a].Depth {
		b = t.Nodes[b].Parent
	}
	for a != b {
		a, b = t.Nodes[a].Parent, t.Nodes[b].Parent
	}
	return a
}

// Find returns the id of the node labelled label (labels are unique within a
// taxonomy once loaded, see Validate).
func (t *Taxonomy) Find(label string) (int, bool) {
	for i := range t.Nodes {
		if t.Nodes[i].Label == label {
			return i, true
		}
	}
	return 0, false
}

// PrivacyStrength is Reddy et al.'s P(v): the leaf count for categorical nodes,
// hi − lo + 1 for numeric ones (this reproduces their listing of P).
func (t *Taxonomy) PrivacyStrength(id int) float64 {
	if t.Numeric {
		return t.Nodes[id].Hi - t.Nodes[id].Lo + 1
	}
	return float64(t.Nodes[id].Leaves)
}

// Informativeness is Reddy et al.'s I(v) = depth / (depth + height); a root that
// is also a leaf gets 1 (their formula is undefined there).
func (t *Taxonomy) Informativeness(id int) float64 {
	n := t.Nodes[id]
	if n.Depth+n.Height == 0 {
		return 1
	}
	return float64(n.Depth) / float64(n.Depth+n.Height)
}

// CheckCovers returns an error naming the first value (in order) that no leaf covers.
func (t *Taxonomy) CheckCovers(values []string) error {
	for _, v := range values {
		if _, err := t.Leaf(v); err != nil {
			return err
		}
	}
	return nil
}

// LoadARXFile reads an ARX hierarchy CSV file; see ReadARX.
func LoadARXFile(path, column string, numeric bool) (*Taxonomy, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("anonymize: taxonomy of column %q: %w", column, err)
	}
	defer f.Close()
	return ReadARX(f, column, numeric)
}

// ReadARX reads an ARX hierarchy: one row per leaf value, `;`-separated, from
// the value to the root, every row the same length, one root label. Each
// level must be a function of the level below it (a label at one level has a
// single parent). For numeric columns every leaf must parse as a number; a
// node's range is the range of its leaves, and sibling ranges must not
// overlap (so the children partition their parent's leaves).
func ReadARX(r io.Reader, column string, numeric bool) (*Taxonomy, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var rows [][]string
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(s) == "" {
			continue
		}
		f := strings.Split(s, ";")
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
			if f[i] == "" {
				return nil, fmt.Errorf("%w: column %q: line %d: empty label", ErrTaxonomy, column, line)
			}
		}
		if len(rows) > 0 && len(f) != len(rows[0]) {
			return nil, fmt.Errorf("%w: column %q: line %d has %d levels, line 1 has %d", ErrTaxonomy, column, line, len(f), len(rows[0]))
		}
		rows = append(rows, f)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("anonymize: taxonomy of column %q: %w", column, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%w: column %q: empty hierarchy", ErrTaxonomy, column)
	}
	levels := len(rows[0])
	root := rows[0][levels-1]
	t := &Taxonomy{Column: column, Numeric: numeric, leaf: map[string]int{}}
	t.Nodes = append(t.Nodes, Node{Label: root, Parent: -1})
	// ids per level: label -> node id; the top level has only the root.
	ids := make([]map[string]int, levels)
	for j := range ids {
		ids[j] = map[string]int{}
	}
	ids[levels-1][root] = 0
	for ri, f := range rows {
		if f[levels-1] != root {
			return nil, fmt.Errorf("%w: column %q: line %d: second root %q (first %q)", ErrTaxonomy, column, ri+1, f[levels-1], root)
		}
		parent := 0
		for j := levels - 2; j >= 0; j-- {
			id, ok := ids[j][f[j]]
			if !ok {
				id = len(t.Nodes)
				t.Nodes = append(t.Nodes, Node{Label: f[j], Parent: parent})
				t.Nodes[parent].Children = append(t.Nodes[parent].Children, id)
				ids[j][f[j]] = id
			} else if t.Nodes[id].Parent != parent {
				return nil, fmt.Errorf("%w: column %q: label %q has two parents, %q and %q", ErrTaxonomy, column, f[j], t.Nodes[t.Nodes[id].Parent].Label, t.Nodes[parent].Label)
			}
			parent = id
		}
		if levels == 1 {
			return nil, fmt.Errorf("%w: column %q: a hierarchy needs a value and a root", ErrTaxonomy, column)
		}
		if _, dup := t.leaf[f[0]]; dup {
			return nil, fmt.Errorf("%w: column %q: leaf %q listed twice", ErrTaxonomy, column, f[0])
		}
		t.leaf[f[0]] = parent
	}
	if numeric {
		for _, f := range rows { // file order, so the first bad leaf is named
			x, err := strconv.ParseFloat(f[0], 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("%w: column %q: numeric leaf %q is not a number", ErrTaxonomy, column, f[0])
			}
			id := t.leaf[f[0]]
			t.Nodes[id].Lo, t.Nodes[id].Hi = x, x
		}
	}
	if err := t.finish(true); err != nil {
		return nil, err
	}
	return t, nil
}

// yamlNode is the YAML form of a taxonomy node. Categorical:
//
//	column: sex
//	root: {label: Any, children: [{label: Male}, {label: Female}]}
//
// Numeric interval trees give closed ranges, children partitioning the parent:
//
//	column: age
//	numeric: true
//	root: {label: "[1-60]", lo: 1, hi: 60, children: [{label: "[1-25]", lo: 1, hi: 25}, ...]}
type yamlNode struct {
	Label    string     `yaml:"label"`
	Lo       *float64   `yaml:"lo"`
	Hi       *float64   `yaml:"hi"`
	Children []yamlNode `yaml:"children"`
}

type yamlTaxonomy struct {
	Column  string   `yaml:"column"`
	Numeric bool     `yaml:"numeric"`
	Step    *float64 `yaml:"step"`
	Root    yamlNode `yaml:"root"`
}

// ReadYAML reads a taxonomy in the YAML form documented on yamlNode. For
// numeric trees, children must partition their parent: sorted by lo, the
// first starts at the parent's lo, the last ends at its hi, and each starts
// one step (default 1, integer data; `step: 0` for real intervals sharing
// endpoints is not supported) after the previous one's hi. Overlaps and gaps
// are errors naming the intervals.
func ReadYAML(r io.Reader) (*Taxonomy, error) {
	var y yamlTaxonomy
	if err := strictyaml.Decode(r, &y); err != nil {
		return nil, fmt.Errorf("%w: yaml: %w", ErrTaxonomy, err)
	}
	if y.Column == "" {
		return nil, fmt.Errorf("%w: yaml taxonomy without column", ErrTaxonomy)
	}
	step := 1.0
	if y.Step != nil {
		step = *y.Step
		if step <= 0 {
			return nil, fmt.Errorf("%w: column %q: step must be positive", ErrTaxonomy, y.Column)
		}
	}
	t := &Taxonomy{Column: y.Column, Numeric: y.Numeric, leaf: map[string]int{}}
	var add func(n yamlNode, parent int) error
	add = func(n yamlNode, parent int) error {
		if n.Label == "" {
			return fmt.Errorf("%w: column %q: node without label", ErrTaxonomy, y.Column)
		}
		id := len(t.Nodes)
		t.Nodes = append(t.Nodes, Node{Label: n.Label, Parent: parent})
		if parent >= 0 {
			t.Nodes[parent].Children = append(t.Nodes[parent].Children, id)
		}
		if y.Numeric {
			if n.Lo == nil || n.Hi == nil {
				return fmt.Errorf("%w: column %q: interval %q needs lo and hi", ErrTaxonomy, y.Column, n.Label)
			}
			if *n.Lo > *n.Hi {
				return fmt.Errorf("%w: column %q: interval %q has lo > hi", ErrTaxonomy, y.Column, n.Label)
			}
			t.Nodes[id].Lo, t.Nodes[id].Hi = *n.Lo, *n.Hi
		}
		if len(n.Children) == 0 {
			if _, dup := t.leaf[n.Label]; dup {
				return fmt.Errorf("%w: column %q: leaf %q listed twice", ErrTaxonomy, y.Column, n.Label)
			}
			t.leaf[n.Label] = id
		}
		for _, c := range n.Children {
			if err := add(c, id); err != nil {
				return err
			}
		}
		if y.Numeric && len(n.Children) > 0 {
			kids := slices.Clone(t.Nodes[id].Children)
			slices.SortFunc(kids, func(a, b int) int { return cmpFloat(t.Nodes[a].Lo, t.Nodes[b].Lo) })
			prevHi := t.Nodes[id].Lo - step
			prev := ""
			for _, c := range kids {
				cn := t.Nodes[c]
				switch {
				case prev != "" && cn.Lo <= prevHi:
					return fmt.Errorf("%w: column %q: intervals %q and %q overlap", ErrTaxonomy, y.Column, prev, cn.Label)
				case cn.Lo != prevHi+step:
					return fmt.Errorf("%w: column %q: children of %q do not partition it (gap or overflow before %q)", ErrTaxonomy, y.Column, n.Label, cn.Label)
				}
				prevHi, prev = cn.Hi, cn.Label
			}
			if prevHi != t.Nodes[id].Hi {
				return fmt.Errorf("%w: column %q: children of %q end at %v, not at its hi %v", ErrTaxonomy, y.Column, n.Label, prevHi, t.Nodes[id].Hi)
			}
		}
		return nil
	}
	if err := add(y.Root, -1); err != nil {
		return nil, err
	}
	if err := t.finish(false); err != nil {
		return nil, err
	}
	return t, nil
}

// LoadYAMLFile reads a YAML taxonomy file; see ReadYAML.
func LoadYAMLFile(path string) (*Taxonomy, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("anonymize: taxonomy: %w", err)
	}
	defer f.Close()
	return ReadYAML(f)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// finish computes depth, height, leaf counts and numeric ranges bottom-up,
// then validates: unique labels, numeric sibling ranges disjoint.
func (t *Taxonomy) finish(derive bool) error {
	seen := make(map[string]int, len(t.Nodes))
	for i, n := range t.Nodes {
		if j, dup := seen[n.Label]; dup {
			// ARX files repeat a label on two levels only for a chain
			// (a value whose generalisation keeps its name): allow it
			// when one is the other's parent.
			if n.Parent != j {
				return fmt.Errorf("%w: column %q: label %q used by two different nodes", ErrTaxonomy, t.Column, n.Label)
			}
		}
		seen[n.Label] = i
	}
	// nodes are created parent-first, so a reverse scan is bottom-up.
	for i := range t.Nodes {
		if i > 0 {
			t.Nodes[i].Depth = t.Nodes[t.Nodes[i].Parent].Depth + 1
		}
	}
	for i := len(t.Nodes) - 1; i >= 0; i-- {
		n := &t.Nodes[i]
		if len(n.Children) == 0 {
			n.Leaves, n.Height = 1, 0
			continue
		}
		n.Leaves, n.Height = 0, 0
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, c := range n.Children {
			cn := t.Nodes[c]
			n.Leaves += cn.Leaves
			n.Height = max(n.Height, cn.Height+1)
			lo, hi = math.Min(lo, cn.Lo), math.Max(hi, cn.Hi)
		}
		if t.Numeric {
			if derive { // ARX: a node's range is its leaves' range
				n.Lo, n.Hi = lo, hi
			} else if n.Lo > lo || n.Hi < hi {
				return fmt.Errorf("%w: column %q: children of %q exceed its range", ErrTaxonomy, t.Column, n.Label)
			}
		}
	}
	if t.Numeric {
		for i, n := range t.Nodes {
			kids := slices.Clone(n.Children)
			slices.SortFunc(kids, func(a, b int) int { return cmpFloat(t.Nodes[a].Lo, t.Nodes[b].Lo) })
			for j := 1; j < len(kids); j++ {
				a, b := t.Nodes[kids[j-1]], t.Nodes[kids[j]]
				if b.Lo <= a.Hi {
					return fmt.Errorf("%w: column %q: intervals %q and %q under %q overlap", ErrTaxonomy, t.Column, a.Label, b.Label, t.Nodes[i].Label)
				}
			}
		}
		for _, id := range t.leaf {
			t.ordered = append(t.ordered, id)
		}
		slices.SortFunc(t.ordered, func(a, b int) int { return cmpFloat(t.Nodes[a].Lo, t.Nodes[b].Lo) })
	}
	return nil
}
