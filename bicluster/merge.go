package bicluster

import (
	"fmt"
	"math"
	"slices"
)

// Local is one party's local bicluster as the merge sees it (research
// §2.11): its columns, its number of rows and its representative, the mean
// of every column over its rows (decision 17a: all columns, the paper's
// formula). Rows stay with the party in the distributed protocol.
type Local struct {
	Party int
	Rows  []int
	Cols  []int
	Count int
	Rep   []float64
}

// NewLocal builds the merge's view of bicluster b found in party's matrix m.
func NewLocal(party int, m *Matrix, b Bicluster) Local {
	l := Local{Party: party, Rows: slices.Clone(b.Rows), Cols: slices.Clone(b.Cols), Count: len(b.Rows), Rep: make([]float64, m.Cols)}
	for _, r := range b.Rows {
		for j, x := range m.Row(r) {
			l.Rep[j] += x
		}
	}
	for j := range l.Rep {
		l.Rep[j] /= float64(max(l.Count, 1))
	}
	return l
}

// PartyRow is a row of a global bicluster: a party and its row index.
type PartyRow struct {
	Party, Row int
}

// Global is a merged bicluster: the union of the members' rows, the
// columns held by members with at least half of its rows, and the
// size-weighted mean representative (research §4.2 row 20).
type Global struct {
	Members []int // indices into the locals, ascending
	Rows    []PartyRow
	Cols    []int
	Rep     []float64
}

// Similar decides whether locals a and b (of different parties) describe
// the same bicluster. In the distributed protocol it is answered from
// encrypted representatives; PlainSimilar answers it in the clear.
type Similar func(a, b int) (bool, error)

// PlainSimilar is the merge test on plaintext representatives: the
// columns overlap (Jaccard ≥ 1/2) and the root mean squared difference of
// the representatives over the union U of the columns (u of them) is at
// most beta times the larger mean of the two there (a scale-free form of
// the paper's "Euclidean distance below a threshold β", decision 18). In
// squares, with S the sum of a representative over U:
//
//	u·‖v − m‖² ≤ β²·S_v²  or  u·‖v − m‖² ≤ β²·S_m²
//
// two comparisons of polynomials in both representatives, which the job
// evaluates on encrypted representatives, revealing only their signs
// (pairtest.go).
func PlainSimilar(locals []Local, beta float64) Similar {
	return func(a, b int) (bool, error) {
		la, lb := locals[a], locals[b]
		in := Common(la.Cols, lb.Cols)
		union := len(la.Cols) + len(lb.Cols) - in
		if union == 0 || 2*in < union {
			return false, nil
		}
		cols := slices.Concat(la.Cols, lb.Cols)
		slices.Sort(cols)
		cols = slices.Compact(cols)
		var d2, ma, mb float64
		for _, j := range cols {
			if j < 0 || j >= len(la.Rep) || j >= len(lb.Rep) {
				return false, fmt.Errorf("%w: column %d outside the representatives", ErrColumns, j)
			}
			d := la.Rep[j] - lb.Rep[j]
			d2 += d * d
			ma += la.Rep[j]
			mb += lb.Rep[j]
		}
		m := max(math.Abs(ma), math.Abs(mb))
		return float64(len(cols))*d2 <= beta*beta*m*m, nil
	}
}

// Merge groups the locals into global biclusters: every pair of locals of
// different parties is tested in a fixed order (a < b by index) and
// similar pairs are joined transitively, so the result does not depend on
// the order of the tests (research §4.2 row 20: one deterministic merge,
// whichever party asks). Globals with fewer than minRows rows in all are
// dropped; the others come ordered by their first member.
func Merge(locals []Local, similar Similar, minRows int) ([]Global, error) {
	parent := make([]int, len(locals))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for a := range locals {
		for b := a + 1; b < len(locals); b++ {
			if locals[a].Party == locals[b].Party {
				continue
			}
			ok, err := similar(a, b)
			if err != nil {
				return nil, fmt.Errorf("merge locals %d and %d: %w", a, b, err)
			}
			if ok {
				ra, rb := find(a), find(b)
				parent[max(ra, rb)] = min(ra, rb)
			}
		}
	}
	var out []Global
	index := map[int]int{} // root → position in out; looked up only, never ranged over
	for i := range locals {
		r := find(i)
		k, ok := index[r]
		if !ok {
			k = len(out)
			index[r] = k
			out = append(out, Global{})
		}
		out[k].Members = append(out[k].Members, i)
	}
	kept := out[:0]
	for _, g := range out {
		if g = globalOf(locals, g.Members); len(g.Rows) >= minRows {
			kept = append(kept, g)
		}
	}
	return kept, nil
}

func globalOf(locals []Local, members []int) Global {
	g := Global{Members: members}
	total := 0
	colRows := map[int]int{} // read back through the sorted key list below
	var cols []int
	for _, i := range members {
		l := locals[i]
		total += l.Count
		for _, r := range l.Rows {
			g.Rows = append(g.Rows, PartyRow{Party: l.Party, Row: r})
		}
		for _, j := range l.Cols {
			if _, ok := colRows[j]; !ok {
				cols = append(cols, j)
			}
			colRows[j] += l.Count
		}
		if g.Rep == nil {
			g.Rep = make([]float64, len(l.Rep))
		}
		for j, x := range l.Rep {
			if j < len(g.Rep) {
				g.Rep[j] += x * float64(l.Count)
			}
		}
	}
	slices.Sort(cols)
	for _, j := range cols {
		if 2*colRows[j] >= total {
			g.Cols = append(g.Cols, j)
		}
	}
	for j := range g.Rep {
		g.Rep[j] /= float64(max(total, 1))
	}
	slices.SortFunc(g.Rows, func(a, b PartyRow) int {
		if a.Party != b.Party {
			return a.Party - b.Party
		}
		return a.Row - b.Row
	})
	g.Rows = slices.Compact(g.Rows)
	return g
}

// FitRows is a party's last step after the merge: its rows that fit
// global bicluster g's constant model on g's columns (mean divergence
// below δ from μ, the mean of g's representative over its columns), in
// ascending order. The merge result is public, so this reveals nothing
// new; it brings back the rows a party's local search lost to noise
// (a party sees only its share of each bicluster's rows, so it has no
// neighbours to grow from).
func FitRows(m *Matrix, g Global, p Params) ([]int, error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	if err := p.Check(); err != nil {
		return nil, err
	}
	if len(g.Cols) == 0 {
		return nil, nil
	}
	mu := 0.0
	for _, j := range g.Cols {
		if j < 0 || j >= m.Cols || j >= len(g.Rep) {
			return nil, fmt.Errorf("%w: global bicluster column %d outside %d columns", ErrColumns, j, m.Cols)
		}
		mu += weight(g.Rep[j])
	}
	mu /= float64(len(g.Cols))
	if !(mu > 0) {
		return nil, nil
	}
	eps := 0.0
	if p.Divergence == ItakuraSaito {
		eps = p.Epsilon
	}
	var out []int
	for r := range m.Rows {
		row := m.Row(r)
		d := 0.0
		for _, j := range g.Cols {
			d += p.Divergence.cell(weight(row[j])+eps, mu+eps)
		}
		if d/float64(len(g.Cols)) < p.Delta {
			out = append(out, r)
		}
	}
	return out, nil
}
