package integrate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cohortdm/cohort/anonymize"
)

// Reddy is Reddy, Raju and Valli Kumari's measures ("A Dynamic Programming
// Approach for Privacy Preserving Collaborative Data Publishing", §4) of
// one requirement's QID on the publication, computed from it and the
// public taxonomies alone: every published value of a TDS publication is a
// taxonomy node. Per QID attribute, in the requirement's order: the
// record-weighted mean privacy strength P of the published nodes (the leaf
// count, or hi − lo + 1 for an interval; anonymize.Taxonomy.PrivacyStrength)
// and their mean informativeness I (depth / (depth + height)). Value is the
// subset dynamic programme's objective on the publication, Σ over records
// of the mean I of their nodes (anonymize.SubsetDP's value(c) = |R_c| ·
// mean_j I(v_j), summed over the published classes). Cells is the number of
// the paper's valid subsets (Table 3) over the publication: node
// combinations at or above the published values holding at least k records
// (anonymize.EnumerateCells over the published table); CellList lists them
// when there are at most maxCellList, in taxonomy order, the first
// attribute slowest. The enumeration is skipped (Enumerated false) when
// the combinations to visit exceed maxCombinations.
type Reddy struct {
	Strength        []float64   `msgpack:"strength" json:"strength"`
	Informativeness []float64   `msgpack:"informativeness" json:"informativeness"`
	Value           float64     `msgpack:"value" json:"value"`
	Enumerated      bool        `msgpack:"enumerated" json:"enumerated"`
	Cells           int         `msgpack:"cells" json:"cells"`
	CellList        []ReddyCell `msgpack:"cell_list,omitempty" json:"cell_list,omitempty"`
}

// ReddyCell is one valid subset: a node per QID attribute (its label),
// their P and I, and the records under all of them.
type ReddyCell struct {
	Labels  []string  `msgpack:"labels" json:"labels"`
	P       []float64 `msgpack:"p" json:"p"`
	I       []float64 `msgpack:"i" json:"i"`
	Records int       `msgpack:"records" json:"records"`
}

// The enumeration's bounds.
const (
	maxCellList     = 64
	maxCombinations = 1 << 18
)

// reddyScores computes Reddy for every requirement on a TDS publication.
// An error names the column, never a value.
func reddyScores(pub anonymize.Published, reqs []anonymize.Requirement, tax map[string]*anonymize.Taxonomy) ([]Reddy, error) {
	out := make([]Reddy, len(reqs))
	for i, r := range reqs {
		tuples, txs, err := qidNodes(pub, r.QID, tax)
		if err != nil {
			return nil, fmt.Errorf("requirements[%d]: %w", i, err)
		}
		out[i] = reddyOf(tuples, txs, r.K, maxCombinations)
	}
	return out, nil
}

// nodeTuple is a distinct combination of published nodes and its records.
type nodeTuple struct {
	nodes []int
	n     int
}

// qidNodes maps the publication's rows to their nodes on qid, merged into
// distinct tuples in order of node ids.
func qidNodes(pub anonymize.Published, qid []string, tax map[string]*anonymize.Taxonomy) ([]nodeTuple, []*anonymize.Taxonomy, error) {
	cols := make([]int, len(qid))
	txs := make([]*anonymize.Taxonomy, len(qid))
	ids := make([]map[string]int, len(qid))
	for j, q := range qid {
		if cols[j] = slices.Index(pub.Columns, q); cols[j] < 0 || tax[q] == nil {
			return nil, nil, fmt.Errorf("%w: column %q is not a published column with a taxonomy", anonymize.ErrRequirement, q)
		}
		txs[j], ids[j] = tax[q], map[string]int{}
		for id, nd := range tax[q].Nodes {
			ids[j][nd.Label] = id
		}
	}
	byKey := map[string]int{}
	var tuples []nodeTuple
	for _, row := range pub.Rows {
		nodes := make([]int, len(qid))
		for j, c := range cols {
			id, ok := ids[j][row.Values[c]]
			if !ok {
				return nil, nil, fmt.Errorf("%w: a published value of column %q is not a node of its taxonomy", anonymize.ErrRequirement, qid[j])
			}
			nodes[j] = id
		}
		k := key(nodes)
		if t, ok := byKey[k]; ok {
			tuples[t].n += row.Count
			continue
		}
		byKey[k] = len(tuples)
		tuples = append(tuples, nodeTuple{nodes: nodes, n: row.Count})
	}
	slices.SortFunc(tuples, func(a, b nodeTuple) int { return slices.Compare(a.nodes, b.nodes) })
	return tuples, txs, nil
}

func key(nodes []int) string {
	var b strings.Builder
	for _, id := range nodes {
		b.WriteString(strconv.Itoa(id))
		b.WriteByte(',')
	}
	return b.String()
}

// reddyOf computes the measures of one QID from its node tuples,
// enumerating the subsets when there are at most limit combinations.
func reddyOf(tuples []nodeTuple, txs []*anonymize.Taxonomy, k, limit int) Reddy {
	q := len(txs)
	rd := Reddy{Strength: make([]float64, q), Informativeness: make([]float64, q)}
	records, combos := 0, 0
	for _, t := range tuples {
		records += t.n
		c := 1
		for j, id := range t.nodes {
			p, in := txs[j].PrivacyStrength(id), txs[j].Informativeness(id)
			rd.Strength[j] += p * float64(t.n)
			rd.Informativeness[j] += in * float64(t.n)
			rd.Value += in * float64(t.n) / float64(q)
			c *= txs[j].Nodes[id].Depth + 1
		}
		combos += c
	}
	for j := range txs {
		rd.Strength[j] /= float64(max(records, 1))
		rd.Informativeness[j] /= float64(max(records, 1))
	}
	if combos > limit {
		return rd
	}
	rd.Enumerated = true
	cells := enumerate(tuples, txs)
	var valid [][]int
	for _, c := range cells {
		if c.n >= k {
			valid = append(valid, c.nodes)
			if len(valid) <= maxCellList {
				rd.CellList = append(rd.CellList, cellOf(c, txs))
			}
		}
	}
	rd.Cells = len(valid)
	if rd.Cells > maxCellList {
		rd.CellList = nil
	}
	return rd
}

// enumerate returns every node combination at or above some tuple's nodes
// with its records, in order of node ids (the first attribute slowest).
func enumerate(tuples []nodeTuple, txs []*anonymize.Taxonomy) []nodeTuple {
	counts := map[string]int{}
	var cells []nodeTuple
	cur := make([]int, len(txs))
	var walk func(t nodeTuple, j int)
	walk = func(t nodeTuple, j int) {
		if j == len(txs) {
			k := key(cur)
			if c, ok := counts[k]; ok {
				cells[c].n += t.n
				return
			}
			counts[k] = len(cells)
			cells = append(cells, nodeTuple{nodes: slices.Clone(cur), n: t.n})
			return
		}
		for id := t.nodes[j]; id >= 0; id = txs[j].Nodes[id].Parent {
			cur[j] = id
			walk(t, j+1)
		}
	}
	for _, t := range tuples {
		walk(t, 0)
	}
	slices.SortFunc(cells, func(a, b nodeTuple) int { return slices.Compare(a.nodes, b.nodes) })
	return cells
}

func cellOf(c nodeTuple, txs []*anonymize.Taxonomy) ReddyCell {
	out := ReddyCell{Records: c.n}
	for j, id := range c.nodes {
		out.Labels = append(out.Labels, txs[j].Nodes[id].Label)
		out.P = append(out.P, txs[j].PrivacyStrength(id))
		out.I = append(out.I, txs[j].Informativeness(id))
	}
	return out
}
