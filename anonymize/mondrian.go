package anonymize

import (
	"fmt"
	"math"
	"slices"

	"github.com/cohortdm/cohort/table"
)

// MondrianClass is one equivalence class of a Mondrian partitioning: its
// records and, per attribute, the published range [Lo, Hi] (numeric) or
// taxonomy node (categorical: the lowest common ancestor of its values).
type MondrianClass struct {
	Rows   []int32
	Lo, Hi []float64
	Node   []int32
}

// MondrianResult is a strict multidimensional partitioning.
type MondrianResult struct {
	Classes  []MondrianClass
	NCP      float64
	MinGroup int
}

// Mondrian is strict multidimensional Mondrian (LeFevre, DeWitt and
// Ramakrishnan, ICDE 2006): recursively cut a partition in two on one
// attribute so that both sides keep at least k records; classes do not
// overlap ("strict", as opposed to relaxed Mondrian, which may split the
// records holding the median value).
//
// Choices, written from the paper's description:
//   - attribute order: widest normalised range first (numeric (hi−lo)/domain
//     width, categorical NCP of the class's LCA node), ties by attribute order;
//     the first attribute with an allowable cut is cut;
//   - numeric cut: among the values t with k ≤ |{x ≤ t}| ≤ n−k, the one whose
//     left side is closest to n/2 (the median when that is allowable);
//   - categorical cut: along the taxonomy, one part per child of the LCA node,
//     allowable only if every non-empty part has at least k records (strict).
//
// The result is deterministic: classes come in depth-first order, left first.
func Mondrian(ds *Dataset, k int) (*MondrianResult, error) {
	return MondrianDiverse(ds, k, nil)
}

// Diversity asks Mondrian for classes that satisfy a sensitive model on a
// column aligned with the dataset's records: Model, and as a shorthand
// distinct l-diversity (at least L distinct values per class), or entropy
// l-diversity (class entropy ≥ log₂ L) when Entropy is set (Sun, thesis
// Def. 2.6).
type Diversity struct {
	Sensitive []string
	L         float64
	Entropy   bool
	Model     SensitiveModel
}

// model is the whole model: Model with the shorthand applied.
func (d *Diversity) model() SensitiveModel {
	m := d.Model
	switch {
	case d.L > 1 && d.Entropy:
		m.EntropyL = max(m.EntropyL, d.L)
	case d.L > 1:
		m.L = max(m.L, int(math.Ceil(d.L)))
	}
	return m
}

// MondrianDiverse is Mondrian whose cuts also keep every class l-diverse
// (div nil: k-anonymity only). The whole table must be l-diverse to start.
func MondrianDiverse(ds *Dataset, k int, div *Diversity) (*MondrianResult, error) {
	if k < 1 || k > ds.N {
		return nil, fmt.Errorf("%w: k = %d with %d records", ErrRequirement, k, ds.N)
	}
	var dc *Coded
	if div != nil {
		if len(div.Sensitive) != ds.N || div.L < 0 {
			return nil, fmt.Errorf("%w: diversity needs l ≥ 0 and one sensitive value per record (%d for %d)", ErrRequirement, len(div.Sensitive), ds.N)
		}
		var err error
		if dc, err = div.model().Code(div.Sensitive); err != nil {
			return nil, err
		}
	}
	return MondrianModel(ds, k, dc)
}

// MondrianModel is Mondrian whose cuts keep every class satisfying the
// sensitive model of dc (nil: k-anonymity only).
func MondrianModel(ds *Dataset, k int, dc *Coded) (*MondrianResult, error) {
	if k < 1 || k > ds.N {
		return nil, fmt.Errorf("%w: k = %d with %d records", ErrRequirement, k, ds.N)
	}
	if dc != nil && len(dc.Code) != ds.N {
		return nil, fmt.Errorf("%w: %d sensitive values for %d records", ErrRequirement, len(dc.Code), ds.N)
	}
	all := make([]int32, ds.N)
	for i := range all {
		all[i] = int32(i)
	}
	if !dc.Diverse(all) {
		return nil, fmt.Errorf("%w: the whole table does not satisfy %s on the sensitive column", ErrRequirement, dc.Model)
	}
	m := &mondrian{ds: ds, k: k, dc: dc, sorted: make([]int32, 0, ds.N)}
	res := &MondrianResult{MinGroup: ds.N}
	stack := [][]int32{all}
	for len(stack) > 0 {
		rows := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		c := ds.summarise(rows)
		parts := m.cut(rows, c)
		if parts == nil {
			res.Classes = append(res.Classes, c)
			res.MinGroup = min(res.MinGroup, len(rows))
			continue
		}
		for i := len(parts) - 1; i >= 0; i-- { // left first when popped
			stack = append(stack, parts[i])
		}
	}
	res.NCP = ds.classesNCP(res.Classes)
	return res, nil
}

// mondrian is one run's parameters and scratch memory.
type mondrian struct {
	ds     *Dataset
	k      int
	dc     *Coded
	sorted []int32
	order  []byWidth
}

type byWidth struct {
	a int
	w float64
}

// cut returns the parts of the first allowable cut of the class c (its
// records rows), trying attributes by decreasing width, or nil.
func (m *mondrian) cut(rows []int32, c MondrianClass) [][]int32 {
	for _, o := range m.byWidth(c) {
		if o.w == 0 {
			return nil
		}
		if parts := m.cutOn(o.a, rows, c); parts != nil {
			return parts
		}
	}
	return nil
}

// byWidth orders the attributes by decreasing width in class c, ties in
// attribute order.
func (m *mondrian) byWidth(c MondrianClass) []byWidth {
	m.order = m.order[:0]
	for a := range m.ds.Attrs {
		m.order = append(m.order, byWidth{a, m.ds.width(a, c)})
	}
	slices.SortStableFunc(m.order, func(x, y byWidth) int { return cmpFloat(y.w, x.w) })
	return m.order
}

// cutOn returns the parts of the allowable cut of class c on attribute a,
// or nil.
func (m *mondrian) cutOn(a int, rows []int32, c MondrianClass) [][]int32 {
	if m.ds.Attrs[a].Tax.Numeric {
		return m.numericCut(a, rows)
	}
	return m.categoricalCut(a, int(c.Node[a]), rows)
}

// numericCut cuts at the allowable value whose left side is closest to half
// the records; both sides keep k records (and diversity).
func (m *mondrian) numericCut(a int, rows []int32) [][]int32 {
	at := m.ds.Attrs[a]
	sorted := append(m.sorted[:0], rows...)
	m.sorted = sorted
	slices.SortStableFunc(sorted, func(x, y int32) int { return cmpFloat(at.Num[x], at.Num[y]) })
	n := len(sorted)
	var leftOK, rightOK []bool
	if m.dc != nil {
		leftOK = m.dc.scan(sorted)
		rev := slices.Clone(sorted)
		slices.Reverse(rev)
		rightOK = m.dc.scan(rev) // rightOK[j]: the last j+1 rows
	}
	best, bestD := 0.0, -1
	for i := m.k - 1; i < n-m.k; i++ {
		if at.Num[sorted[i]] == at.Num[sorted[i+1]] {
			continue
		}
		if m.dc != nil && (!leftOK[i] || !rightOK[n-i-2]) {
			continue
		}
		d := abs(2*(i+1) - n)
		if bestD < 0 || d < bestD {
			best, bestD = at.Num[sorted[i]], d
		}
	}
	if bestD < 0 {
		return nil
	}
	var left, right []int32
	for _, r := range rows {
		if at.Num[r] <= best {
			left = append(left, r)
		} else {
			right = append(right, r)
		}
	}
	return [][]int32{left, right}
}

// categoricalCut cuts along the taxonomy: one part per child of node, if
// every non-empty part keeps k records (and diversity) and there are two.
func (m *mondrian) categoricalCut(a, node int, rows []int32) [][]int32 {
	at := m.ds.Attrs[a]
	kids := at.Tax.Nodes[node].Children
	byKid := make(map[int][]int32, len(kids))
	for _, r := range rows {
		kid := childUnder(at.Tax, int(at.Leaf[r]), node)
		byKid[kid] = append(byKid[kid], r)
	}
	if len(byKid) < 2 {
		return nil
	}
	for _, p := range byKid {
		if len(p) < m.k || !m.dc.Diverse(p) {
			return nil
		}
	}
	var parts [][]int32
	for _, kid := range kids { // taxonomy order, not map order
		if p := byKid[kid]; len(p) > 0 {
			parts = append(parts, p)
		}
	}
	return parts
}

// classesNCP is the NCP of a partition into classes.
func (ds *Dataset) classesNCP(classes []MondrianClass) float64 {
	total := 0.0
	for _, c := range classes {
		s := 0.0
		for a := range ds.Attrs {
			s += ds.width(a, c)
		}
		total += s * float64(len(c.Rows))
	}
	return total / float64(ds.N) / float64(len(ds.Attrs))
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// summarise computes a class's ranges and LCA nodes.
func (ds *Dataset) summarise(rows []int32) MondrianClass {
	na := len(ds.Attrs)
	c := MondrianClass{Rows: rows, Lo: make([]float64, na), Hi: make([]float64, na), Node: make([]int32, na)}
	for a, at := range ds.Attrs {
		lca := int(at.Leaf[rows[0]])
		for _, r := range rows[1:] {
			if l := int(at.Leaf[r]); l != lca {
				lca = at.Tax.LCA(lca, l)
			}
		}
		c.Node[a] = int32(lca)
		if at.Tax.Numeric {
			lo, hi := at.Num[rows[0]], at.Num[rows[0]]
			for _, r := range rows[1:] {
				lo, hi = min(lo, at.Num[r]), max(hi, at.Num[r])
			}
			c.Lo[a], c.Hi[a] = lo, hi
		}
	}
	return c
}

// width is the NCP of attribute a in class c, which is also the normalised
// width that chooses the cut attribute.
func (ds *Dataset) width(a int, c MondrianClass) float64 {
	at := ds.Attrs[a]
	if at.Tax.Numeric {
		return at.RangePenalty(c.Lo[a], c.Hi[a])
	}
	return at.NodePenalty(int(c.Node[a]))
}

// Generalisation is the partition as taxonomy nodes: every record's class's
// lowest common ancestor per attribute (numeric ranges become the node
// covering them, as the distortion ratio needs).
func (m *MondrianResult) Generalisation(ds *Dataset) *Generalisation {
	g := &Generalisation{Node: make([][]int32, len(ds.Attrs))}
	for a := range ds.Attrs {
		g.Node[a] = make([]int32, ds.N)
		for _, c := range m.Classes {
			for _, r := range c.Rows {
				g.Node[a][r] = c.Node[a]
			}
		}
	}
	return g
}

// Publish writes the classes as a table: numeric ranges as "[lo-hi]" (or the
// value when lo = hi), categorical values as the LCA node's label.
func (m *MondrianResult) Publish(ds *Dataset) *table.Table {
	t := &table.Table{Name: "mondrian"}
	for _, at := range ds.Attrs {
		t.Columns = append(t.Columns, &table.Column{Name: at.Name, Kind: table.Categorical, Str: make([]string, ds.N)})
	}
	for _, c := range m.Classes {
		for a, at := range ds.Attrs {
			label := classLabel(at, c, a)
			for _, r := range c.Rows {
				t.Columns[a].Str[r] = label
			}
		}
	}
	return t
}
