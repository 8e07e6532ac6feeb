package anonymize

import (
	"fmt"
	"math"
	"strconv"

	"github.com/cohortdm/cohort/table"
)

// Attr is one quasi-identifier column encoded against its taxonomy: Leaf[r]
// is the leaf node of record r, Num[r] its numeric value (numeric columns).
type Attr struct {
	Name string
	Tax  *Taxonomy
	Leaf []int32
	Num  []float64
	// DomLo, DomHi: the column's range in the data, the NCP denominator of
	// numeric attributes.
	DomLo, DomHi float64
}

// Dataset is a table's quasi-identifiers encoded as taxonomy leaves, ready for
// the algorithms. It is read-only for them.
type Dataset struct {
	N     int
	Attrs []*Attr
}

// Encode encodes the columns qid of t against their taxonomies. A value that
// no leaf covers is an error naming the column and the value (ErrNotCovered).
func Encode(t *table.Table, qid []string, tax map[string]*Taxonomy) (*Dataset, error) {
	ds := &Dataset{N: t.NumRows()}
	for _, q := range qid {
		c, err := t.Column(q)
		if err != nil {
			return nil, fmt.Errorf("%w: QID column %q: %w", ErrRequirement, q, err)
		}
		tx, ok := tax[q]
		if !ok {
			return nil, fmt.Errorf("%w: column %q has no taxonomy", ErrRequirement, q)
		}
		a := &Attr{Name: q, Tax: tx, Leaf: make([]int32, ds.N)}
		cache := map[string]int32{}
		for r, v := range c.Str {
			id, ok := cache[v]
			if !ok {
				n, err := tx.Leaf(v)
				if err != nil {
					return nil, fmt.Errorf("row %d: %w", r+1, err)
				}
				id = int32(n)
				cache[v] = id
			}
			a.Leaf[r] = id
		}
		if tx.Numeric {
			a.Num = make([]float64, ds.N)
			a.DomLo, a.DomHi = math.Inf(1), math.Inf(-1)
			for r, v := range c.Str {
				x, err := strconv.ParseFloat(v, 64)
				if err != nil {
					// an interval leaf label: use the leaf's midpoint
					n := tx.Nodes[a.Leaf[r]]
					x = (n.Lo + n.Hi) / 2
				}
				a.Num[r] = x
				a.DomLo, a.DomHi = math.Min(a.DomLo, x), math.Max(a.DomHi, x)
			}
		}
		ds.Attrs = append(ds.Attrs, a)
	}
	return ds, nil
}

// UsePublicRanges makes every numeric attribute's NCP denominator its
// taxonomy's root range (public) instead of its range in the data (its
// owner's): NCP, Mondrian's widths and RangePenalty then reveal no data
// range, and agree between parties that hold different columns.
func (ds *Dataset) UsePublicRanges() {
	for _, a := range ds.Attrs {
		if a.Tax.Numeric {
			a.DomLo, a.DomHi = a.Tax.Nodes[0].Lo, a.Tax.Nodes[0].Hi
		}
	}
}

// Index returns the position of the attribute called name, or -1.
func (ds *Dataset) Index(name string) int {
	for i, a := range ds.Attrs {
		if a.Name == name {
			return i
		}
	}
	return -1
}

// NodePenalty is the normalised certainty penalty of publishing node id of
// attribute a (Xu, Wang, Pei et al., "Utility-based anonymization", KDD 2006):
// 0 for a leaf; categorical: leaves(node)/leaves(root); numeric: the width
// of the node's range over the width of the column's range in the data,
// capped at 1.
func (a *Attr) NodePenalty(id int) float64 {
	t := a.Tax
	if t.IsLeaf(id) && (!t.Numeric || t.Nodes[id].Lo == t.Nodes[id].Hi) {
		return 0
	}
	if !t.Numeric {
		return float64(t.Nodes[id].Leaves) / float64(t.NumLeaves())
	}
	return a.RangePenalty(t.Nodes[id].Lo, t.Nodes[id].Hi)
}

// PublicPenalty is the NCP of publishing node id measured against the
// taxonomy alone: as NodePenalty, but a numeric node's width is divided by
// the width of the taxonomy's root range, which is public (the taxonomy is in
// the spec), instead of the column's range in the data, which is its
// owner's. The n-party jobs use it so that their committed NCP reveals no
// party's data range.
func (t *Taxonomy) PublicPenalty(id int) float64 {
	n := t.Nodes[id]
	if t.IsLeaf(id) && (!t.Numeric || n.Lo == n.Hi) {
		return 0
	}
	if !t.Numeric {
		return float64(n.Leaves) / float64(t.NumLeaves())
	}
	return publicRange(t, n.Lo, n.Hi)
}

// publicRange is the NCP of the numeric range [lo, hi] against the
// taxonomy's root range.
func publicRange(t *Taxonomy, lo, hi float64) float64 {
	w := t.Nodes[0].Hi - t.Nodes[0].Lo
	if w <= 0 {
		return 0
	}
	return math.Min(1, (hi-lo)/w)
}

// RangePenalty is the NCP of publishing the numeric range [lo, hi].
func (a *Attr) RangePenalty(lo, hi float64) float64 {
	w := a.DomHi - a.DomLo
	if w <= 0 {
		return 0
	}
	return math.Min(1, (hi-lo)/w)
}

// Generalisation says, for each attribute and record, which taxonomy node is
// published: Node[attr][record]. It is the output of global and local
// recoding alike (Mondrian publishes the nodes covering its partitions).
type Generalisation struct {
	Node [][]int32
}

// NCP is the table's normalised certainty penalty in [0, 1]: the mean over
// records and attributes of NodePenalty.
func (ds *Dataset) NCP(g *Generalisation) float64 {
	if ds.N == 0 || len(ds.Attrs) == 0 {
		return 0
	}
	total := 0.0
	for i, a := range ds.Attrs {
		memo := map[int32]float64{}
		s := 0.0
		for _, id := range g.Node[i] {
			p, ok := memo[id]
			if !ok {
				p = a.NodePenalty(int(id))
				memo[id] = p
			}
			s += p
		}
		total += s / float64(ds.N)
	}
	return total / float64(len(ds.Attrs))
}

// FullDomain is the full-domain generalisation that lifts every value of
// attribute a levels[a] steps up its taxonomy (stopping at the root).
func (ds *Dataset) FullDomain(levels []int) *Generalisation {
	g := &Generalisation{Node: make([][]int32, len(ds.Attrs))}
	for a, at := range ds.Attrs {
		g.Node[a] = make([]int32, ds.N)
		memo := map[int32]int32{}
		for r, leaf := range at.Leaf {
			n, ok := memo[leaf]
			if !ok {
				n = int32(at.Tax.Ancestor(int(leaf), levels[a]))
				memo[leaf] = n
			}
			g.Node[a][r] = n
		}
	}
	return g
}

// PublicNCP is NCP with public denominators (Taxonomy.PublicPenalty): the
// figure the n-party jobs commit.
func (ds *Dataset) PublicNCP(g *Generalisation) float64 {
	if ds.N == 0 || len(ds.Attrs) == 0 {
		return 0
	}
	total := 0.0
	for i, a := range ds.Attrs {
		s := 0.0
		for _, id := range g.Node[i] {
			s += a.Tax.PublicPenalty(int(id))
		}
		total += s / float64(ds.N)
	}
	return total / float64(len(ds.Attrs))
}

// Publish writes the generalised quasi-identifiers as a table of labels (the
// columns of integrated.csv), in attribute order.
func (ds *Dataset) Publish(g *Generalisation) *table.Table {
	t := &table.Table{Name: "anonymized"}
	for i, a := range ds.Attrs {
		c := &table.Column{Name: a.Name, Kind: table.Categorical, Str: make([]string, ds.N)}
		for r, id := range g.Node[i] {
			c.Str[r] = a.Tax.Nodes[id].Label
		}
		t.Columns = append(t.Columns, c)
	}
	return t
}

// GroupSizes returns the sizes of the equivalence classes of g over all
// attributes, in order of first appearance.
func (ds *Dataset) GroupSizes(g *Generalisation) []int {
	idx := map[string]int{}
	var sizes []int
	key := make([]byte, 0, 4*len(ds.Attrs))
	for r := 0; r < ds.N; r++ {
		key = key[:0]
		for i := range ds.Attrs {
			v := g.Node[i][r]
			key = append(key, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
		}
		j, ok := idx[string(key)]
		if !ok {
			j = len(sizes)
			idx[string(key)] = j
			sizes = append(sizes, 0)
		}
		sizes[j]++
	}
	return sizes
}

// Discernibility is DM = Σ_G |G|² over the equivalence classes (Bayardo and
// Agrawal; Sun, thesis §3.5, without a suppression term since nothing is suppressed).
func Discernibility(sizes []int) float64 {
	s := 0.0
	for _, n := range sizes {
		s += float64(n) * float64(n)
	}
	return s
}

// AvgClassSize is C_AVG = (records / classes) / k (LeFevre et al.; Sun, thesis §3.5).
func AvgClassSize(sizes []int, k int) float64 {
	if len(sizes) == 0 || k <= 0 {
		return 0
	}
	n := 0
	for _, s := range sizes {
		n += s
	}
	return float64(n) / float64(len(sizes)) / float64(k)
}

// DistortionRatio is Sun's distortion ratio (thesis §3.5): the sum over
// records and attributes of the height h_ij of the published node above the
// record's leaf, over the same sum when every value is generalised to its
// taxonomy's root (each value's own depth, so unbalanced trees count
// right).
func (ds *Dataset) DistortionRatio(g *Generalisation) float64 {
	num, den := 0, 0
	for a, at := range ds.Attrs {
		for r, leaf := range at.Leaf {
			d := at.Tax.Nodes[leaf].Depth
			num += d - at.Tax.Nodes[g.Node[a][r]].Depth
			den += d
		}
	}
	if den == 0 {
		return 0
	}
	return float64(num) / float64(den)
}

// Summary holds the figures a job reports beside a publication (the
// result.json fields min_group and ncp, and the other utility metrics).
type Summary struct {
	MinGroup       int     `json:"min_group"`      // smallest class over the requirements' QIDs
	NCP            float64 `json:"ncp"`            // in [0, 1]
	Discernibility float64 `json:"discernibility"` // over all quasi-identifiers
	AvgClassSize   float64 `json:"avg_class_size"` // C_AVG with the largest k of the requirements
	Classes        int     `json:"classes"`        // over all quasi-identifiers
	Distortion     float64 `json:"distortion"`     // Sun's distortion ratio
}

// Summarise computes a Summary of the publication g of ds under reqs; it
// reads only the published labels for min_group (as an outsider would).
func Summarise(ds *Dataset, g *Generalisation, reqs []Requirement) (Summary, error) {
	pub := ds.Publish(g)
	s := Summary{NCP: ds.NCP(g), MinGroup: ds.N}
	kmax := 1
	for _, r := range reqs {
		m, err := MinGroup(pub, r.QID)
		if err != nil {
			return Summary{}, err
		}
		s.MinGroup = min(s.MinGroup, m)
		kmax = max(kmax, r.K)
	}
	names := make([]string, len(ds.Attrs))
	for a, at := range ds.Attrs {
		names[a] = at.Name
	}
	cp := Compact(pub)
	sizes, err := cp.ClassSizes(names) // the published labels' classes
	if err != nil {
		return Summary{}, err
	}
	s.Classes = len(sizes)
	s.Discernibility = Discernibility(sizes)
	s.AvgClassSize = AvgClassSize(sizes, kmax)
	s.Distortion = ds.DistortionRatio(g)
	return s, nil
}
