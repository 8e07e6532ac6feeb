package anonymize

import (
	"fmt"
	"slices"
	"strconv"

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
	if k < 1 || k > ds.N {
		return nil, fmt.Errorf("%w: k = %d with %d records", ErrRequirement, k, ds.N)
	}
	na := len(ds.Attrs)
	all := make([]int32, ds.N)
	for i := range all {
		all[i] = int32(i)
	}
	res := &MondrianResult{MinGroup: ds.N}
	type byWidth struct {
		a int
		w float64
	}
	order := make([]byWidth, na)
	vals := make([]float64, 0, ds.N)
	stack := [][]int32{all}
	for len(stack) > 0 {
		rows := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		c := ds.summarise(rows)
		for a := range order {
			order[a] = byWidth{a, ds.width(a, c)}
		}
		slices.SortStableFunc(order, func(x, y byWidth) int { return cmpFloat(y.w, x.w) })
		var parts [][]int32
		for _, o := range order {
			if o.w == 0 {
				break
			}
			at := ds.Attrs[o.a]
			if at.Tax.Numeric {
				vals = vals[:0]
				for _, r := range rows {
					vals = append(vals, at.Num[r])
				}
				slices.Sort(vals)
				n := len(vals)
				best, bestD := 0.0, -1
				for i := k - 1; i < n-k; i++ {
					if vals[i] == vals[i+1] {
						continue
					}
					d := abs(2*(i+1) - n)
					if bestD < 0 || d < bestD {
						best, bestD = vals[i], d
					}
				}
				if bestD < 0 {
					continue
				}
				var left, right []int32
				for _, r := range rows {
					if at.Num[r] <= best {
						left = append(left, r)
					} else {
						right = append(right, r)
					}
				}
				parts = [][]int32{left, right}
				break
			}
			node := int(c.Node[o.a])
			kids := at.Tax.Nodes[node].Children
			byKid := make(map[int][]int32, len(kids))
			for _, r := range rows {
				leaf := int(at.Leaf[r])
				for at.Tax.Nodes[leaf].Parent != node {
					leaf = at.Tax.Nodes[leaf].Parent
				}
				byKid[leaf] = append(byKid[leaf], r)
			}
			ok := true
			for _, p := range byKid {
				ok = ok && len(p) >= k
			}
			if !ok || len(byKid) < 2 {
				continue
			}
			for _, kid := range kids { // taxonomy order, not map order
				if p := byKid[kid]; len(p) > 0 {
					parts = append(parts, p)
				}
			}
			break
		}
		if parts == nil {
			res.Classes = append(res.Classes, c)
			res.MinGroup = min(res.MinGroup, len(rows))
			continue
		}
		for i := len(parts) - 1; i >= 0; i-- { // left first when popped
			stack = append(stack, parts[i])
		}
	}
	total := 0.0
	for _, c := range res.Classes {
		s := 0.0
		for a := range ds.Attrs {
			s += ds.width(a, c)
		}
		total += s * float64(len(c.Rows))
	}
	res.NCP = total / float64(ds.N) / float64(na)
	return res, nil
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

// Publish writes the classes as a table: numeric ranges as "[lo-hi]" (or the
// value when lo = hi), categorical values as the LCA node's label.
func (m *MondrianResult) Publish(ds *Dataset) *table.Table {
	t := &table.Table{Name: "mondrian"}
	for _, at := range ds.Attrs {
		t.Columns = append(t.Columns, &table.Column{Name: at.Name, Kind: table.Categorical, Str: make([]string, ds.N)})
	}
	for _, c := range m.Classes {
		for a, at := range ds.Attrs {
			var label string
			switch {
			case at.Tax.Numeric && c.Lo[a] == c.Hi[a]:
				label = strconv.FormatFloat(c.Lo[a], 'g', -1, 64)
			case at.Tax.Numeric:
				label = "[" + strconv.FormatFloat(c.Lo[a], 'g', -1, 64) + "-" + strconv.FormatFloat(c.Hi[a], 'g', -1, 64) + "]"
			default:
				label = at.Tax.Nodes[c.Node[a]].Label
			}
			for _, r := range c.Rows {
				t.Columns[a].Str[r] = label
			}
		}
	}
	return t
}
