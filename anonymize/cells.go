package anonymize

import (
	"fmt"
	"math"
)

// Cell is one node combination of Reddy et al.'s subset enumeration: one
// taxonomy node per cell attribute, standing for the records whose values
// fall under all of them ("a subset" in Reddy et al.).
type Cell struct {
	Nodes   []int     // node id per cell attribute
	Labels  []string  // their labels
	Records int       // |R_c|
	Anony   int       // the smallest group of R_c on the raw rest attributes ("Anony (k_i)")
	P       []float64 // privacy strength per attribute
	I       []float64 // informativeness per attribute
}

// cellSpace is the product of the taxonomies of some attributes of a
// dataset, with the records' leaf tuples pre-aggregated.
type cellSpace struct {
	ds    *Dataset
	attrs []int
	tuple [][]int32 // distinct leaf tuples
	rows  [][]int32 // records of each tuple
}

func newCellSpace(ds *Dataset, names []string) (*cellSpace, error) {
	cs := &cellSpace{ds: ds}
	for _, n := range names {
		i := ds.Index(n)
		if i < 0 {
			return nil, fmt.Errorf("%w: cell attribute %q is not in the dataset", ErrRequirement, n)
		}
		cs.attrs = append(cs.attrs, i)
	}
	index := map[string]int{}
	key := make([]byte, 0, 4*len(cs.attrs))
	for r := 0; r < ds.N; r++ {
		key = key[:0]
		t := make([]int32, len(cs.attrs))
		for j, a := range cs.attrs {
			t[j] = ds.Attrs[a].Leaf[r]
			key = append(key, byte(t[j]), byte(t[j]>>8), byte(t[j]>>16), byte(t[j]>>24))
		}
		g, ok := index[string(key)]
		if !ok {
			g = len(cs.tuple)
			index[string(key)] = g
			cs.tuple = append(cs.tuple, t)
			cs.rows = append(cs.rows, nil)
		}
		cs.rows[g] = append(cs.rows[g], int32(r))
	}
	return cs, nil
}

// records returns the records of the cell with the given nodes.
func (cs *cellSpace) records(nodes []int) []int32 {
	var out []int32
	for g, t := range cs.tuple {
		in := true
		for j, a := range cs.attrs {
			if !cs.ds.Attrs[a].Tax.Covers(nodes[j], int(t[j])) {
				in = false
				break
			}
		}
		if in {
			out = append(out, cs.rows[g]...)
		}
	}
	return out
}

// EnumerateCells is an executable reading of Reddy et al.'s algorithm (given
// there in prose): every combination of one node per attribute in
// cellAttrs, in taxonomy order (the first attribute varies slowest), kept if
// it holds at least k records ("valid"). Anony is the smallest group of the
// cell's records on the raw values in rest (columns aligned with the
// dataset's records; with no rest columns it equals Records).
func EnumerateCells(ds *Dataset, cellAttrs []string, rest [][]string, k int) ([]Cell, error) {
	if k < 1 {
		return nil, fmt.Errorf("%w: k = %d", ErrRequirement, k)
	}
	for i, c := range rest {
		if len(c) != ds.N {
			return nil, fmt.Errorf("%w: rest column %d has %d values for %d records", ErrRequirement, i, len(c), ds.N)
		}
	}
	cs, err := newCellSpace(ds, cellAttrs)
	if err != nil {
		return nil, err
	}
	var out []Cell
	nodes := make([]int, len(cs.attrs))
	var walk func(j int)
	walk = func(j int) {
		if j == len(cs.attrs) {
			rs := cs.records(nodes)
			if len(rs) < k {
				return
			}
			c := Cell{Nodes: append([]int(nil), nodes...), Records: len(rs)}
			for jj, a := range cs.attrs {
				t := ds.Attrs[a].Tax
				c.Labels = append(c.Labels, t.Nodes[nodes[jj]].Label)
				c.P = append(c.P, t.PrivacyStrength(nodes[jj]))
				c.I = append(c.I, t.Informativeness(nodes[jj]))
			}
			groups := map[string]int{}
			for _, r := range rs {
				key := ""
				for _, col := range rest {
					key += col[r] + "\x00"
				}
				groups[key]++
			}
			c.Anony = len(rs)
			for _, n := range groups {
				c.Anony = min(c.Anony, n)
			}
			out = append(out, c)
			return
		}
		for id := range ds.Attrs[cs.attrs[j]].Tax.Nodes {
			nodes[j] = id
			walk(j + 1)
		}
	}
	walk(0)
	return out, nil
}

// SubsetDPResult is the partition chosen by the subset dynamic programme.
type SubsetDPResult struct {
	Value float64
	Cells []Cell
}

// SubsetDP is a dynamic programme on subsets (Reddy et al. describe theirs
// by analogy to 0/1 knapsack and give no recurrence; this one is ours):
//
//	best(c) = max( value(c) if |R_c| ≥ k,
//	               max over attributes j with v_j not a leaf of Σ_{u ∈ child(v_j)} best(c with v_j := u) )
//	best(c) = 0 if R_c = ∅,  value(c) = |R_c| · mean_j I(v_j)
//
// solved from the root cell, memoised over node combinations. It publishes
// a guillotine partition of the records into cells of at least k records
// (local recoding). Ties (within 1e-9) go to fewer cells, then to keeping
// the cell, then to the lower attribute index. The memo has Π |nodes| entries: meant for small
// taxonomies such as the paper's, not for Adult's full QID set.
func SubsetDP(ds *Dataset, cellAttrs []string, k int) (*SubsetDPResult, error) {
	if k < 1 || k > ds.N {
		return nil, fmt.Errorf("%w: k = %d with %d records", ErrRequirement, k, ds.N)
	}
	cs, err := newCellSpace(ds, cellAttrs)
	if err != nil {
		return nil, err
	}
	type sol struct {
		value float64
		cells int
		split int // -1: keep the cell; -2: empty; else the attribute split
		ok    bool
	}
	memo := map[string]sol{}
	keyOf := func(nodes []int) string { return fmt.Sprint(nodes) }
	var best func(nodes []int) sol
	best = func(nodes []int) sol {
		key := keyOf(nodes)
		if s, ok := memo[key]; ok {
			return s
		}
		n := len(cs.records(nodes))
		var s sol
		switch {
		case n == 0:
			s = sol{value: 0, cells: 0, split: -2, ok: true}
		default:
			if n >= k {
				v := 0.0
				for j, a := range cs.attrs {
					v += ds.Attrs[a].Tax.Informativeness(nodes[j])
				}
				s = sol{value: float64(n) * v / float64(len(cs.attrs)), cells: 1, split: -1, ok: true}
			}
			for j, a := range cs.attrs {
				t := ds.Attrs[a].Tax
				if t.IsLeaf(nodes[j]) {
					continue
				}
				sum, cells, ok := 0.0, 0, true
				for _, u := range t.Nodes[nodes[j]].Children {
					sub := append([]int(nil), nodes...)
					sub[j] = u
					b := best(sub)
					if !b.ok {
						ok = false
						break
					}
					sum += b.value
					cells += b.cells
				}
				if !ok {
					continue
				}
				better := !s.ok || sum > s.value+1e-9 || (math.Abs(sum-s.value) <= 1e-9 && cells < s.cells)
				if better {
					s = sol{value: sum, cells: cells, split: j, ok: true}
				}
			}
		}
		memo[key] = s
		return s
	}
	root := make([]int, len(cs.attrs))
	top := best(root)
	if !top.ok {
		return nil, fmt.Errorf("%w: no partition into cells of %d records", ErrRequirement, k)
	}
	res := &SubsetDPResult{Value: top.value}
	var collect func(nodes []int)
	collect = func(nodes []int) {
		s := memo[keyOf(nodes)]
		switch s.split {
		case -2:
		case -1:
			c := Cell{Nodes: append([]int(nil), nodes...), Records: len(cs.records(nodes))}
			for j, a := range cs.attrs {
				t := ds.Attrs[a].Tax
				c.Labels = append(c.Labels, t.Nodes[nodes[j]].Label)
				c.P = append(c.P, t.PrivacyStrength(nodes[j]))
				c.I = append(c.I, t.Informativeness(nodes[j]))
			}
			c.Anony = c.Records
			res.Cells = append(res.Cells, c)
		default:
			j := s.split
			for _, u := range ds.Attrs[cs.attrs[j]].Tax.Nodes[nodes[j]].Children {
				sub := append([]int(nil), nodes...)
				sub[j] = u
				collect(sub)
			}
		}
	}
	collect(root)
	return res, nil
}
