package boost_test

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// The reference: XGBoost's histogram method written out from its formulas
// (Chen and Guestrin, "XGBoost: A Scalable Tree Boosting System", KDD
// 2016, §2.2 equations (5)-(7) and §3.1's histogram candidates) on the
// materialised join, with the cut points of boost.Cuts' definition
// recomputed here and the same fixed point for gradients, so that the
// trees must agree exactly.

// refTable is one table's columns as the reference reads them.
type refTable struct {
	name, party string
	keys        map[int][]string // per incident edge: each row's key text
	feats       []string         // numeric columns, sorted
	num         map[string][]float64
	y           []string
}

// joinRows materialises the join: each join row lists one row per table
// (graph pre-order).
func joinRows(g *joinprop.Graph, ts []refTable) [][]int {
	rows := [][]int{}
	cur := make([]int, len(ts))
	var rec func(i int)
	rec = func(i int) {
		if i == len(ts) {
			rows = append(rows, slices.Clone(cur))
			return
		}
		if i == 0 {
			for r := range ts[0].y {
				cur[0] = r
				rec(1)
			}
			return
		}
		e := g.Tables[i].Parent
		p := g.Index(g.Edges[e].Parent)
		want := ts[p].keys[e][cur[p]]
		for r, k := range ts[i].keys[e] {
			if k == want {
				cur[i] = r
				rec(i + 1)
			}
		}
	}
	rec(0)
	return rows
}

// refCuts: at most bins distinct values: all but the largest; otherwise
// the sorted column's values at ranks ceil(k·n/bins)−1, k = 1..bins−1,
// without repeats or the largest value.
func refCuts(col []float64, bins int) []float64 {
	xs := slices.Sorted(slices.Values(col))
	d := slices.Compact(slices.Clone(xs))
	if len(d) <= bins {
		return d[:len(d)-1]
	}
	var out []float64
	for k := 1; k < bins; k++ {
		c := xs[int(math.Ceil(float64(k*len(xs))/float64(bins)))-1]
		if c != xs[len(xs)-1] && (len(out) == 0 || out[len(out)-1] != c) {
			out = append(out, c)
		}
	}
	return out
}

type refFeat struct {
	table, col string
	party      string
	cuts       []float64
	bin        []int // per join row
}

// refBoost grows the model on the materialised join.
func refBoost(g *joinprop.Graph, ts []refTable, p boost.Params) boost.Model {
	rows := joinRows(g, ts)
	var feats []refFeat
	for i, t := range ts {
		for _, c := range t.feats {
			f := refFeat{table: t.name, col: c, party: t.party, cuts: refCuts(t.num[c], p.Bins)}
			for _, jr := range rows {
				x := t.num[c][jr[i]]
				b := 0
				for b < len(f.cuts) && f.cuts[b] < x {
					b++
				}
				f.bin = append(f.bin, b)
			}
			feats = append(feats, f)
		}
	}
	labels := slices.Compact(slices.Sorted(slices.Values(ts[0].y)))
	y := make([]float64, len(rows))
	mean := 0.0
	for j, jr := range rows {
		if ts[0].y[jr[0]] == labels[1] {
			y[j] = 1
		}
		mean += y[j]
	}
	mean /= float64(len(rows))
	m := boost.Model{BaseScore: math.Log(mean / (1 - mean)), PositiveClass: labels[1]}
	margin := make([]float64, len(rows))
	for j := range margin {
		margin[j] = m.BaseScore
	}
	for range p.Trees {
		gs, hs := make([]int64, len(rows)), make([]int64, len(rows))
		for j := range rows {
			pr := 1 / (1 + math.Exp(-margin[j]))
			gs[j] = int64(math.Round((pr - y[j]) * (1 << boost.FracBits)))
			hs[j] = int64(math.Round(pr * (1 - pr) * (1 << boost.FracBits)))
		}
		all := make([]int, len(rows))
		for j := range all {
			all[j] = j
		}
		root := refGrow(feats, gs, hs, [][]int{all}, 0, p)[0]
		m.Trees = append(m.Trees, root)
		for j := range rows {
			n := root
			for !n.IsLeaf() {
				f := refFind(feats, n.Split)
				if f.bin[j] <= slices.Index(f.cuts, n.Split.Num) {
					n = n.Left
				} else {
					n = n.Right
				}
			}
			margin[j] += n.Weight
		}
	}
	return m
}

func refFind(feats []refFeat, s *tree.Split) refFeat {
	for _, f := range feats {
		if f.table == s.Table && f.col == s.Column {
			return f
		}
	}
	panic("no feature " + s.Column)
}

func sq(x float64) float64 { return x * x }

// refGrow grows one level of nodes (each a set of join rows) and the
// levels below, breadth first as XGBoost's depthwise policy does.
func refGrow(feats []refFeat, gs, hs []int64, nodes [][]int, depth int, p boost.Params) []*tree.RegNode {
	f := func(v int64) float64 { return float64(v) / (1 << boost.FracBits) }
	score := func(g, h int64) float64 {
		if f(h)+p.Lambda == 0 {
			return 0
		}
		return sq(f(g)) / (f(h) + p.Lambda)
	}
	out := make([]*tree.RegNode, len(nodes))
	var children [][]int
	var parents []*tree.RegNode
	for i, rows := range nodes {
		var G, H int64
		for _, j := range rows {
			G, H = G+gs[j], H+hs[j]
		}
		out[i] = &tree.RegNode{Weight: -f(G) / (f(H) + p.Lambda) * p.LearningRate}
		if depth >= p.MaxDepth {
			continue
		}
		bestGain, bestF, bestB := 0.0, -1, -1
		for k, ft := range feats {
			gb, hb := make([]int64, len(ft.cuts)+1), make([]int64, len(ft.cuts)+1)
			for _, j := range rows {
				gb[ft.bin[j]] += gs[j]
				hb[ft.bin[j]] += hs[j]
			}
			var GL, HL int64
			for b := 0; b < len(ft.cuts); b++ {
				GL, HL = GL+gb[b], HL+hb[b]
				if f(HL) < p.MinChildWeight || f(H-HL) < p.MinChildWeight {
					continue
				}
				gain := score(GL, HL) + score(G-GL, H-HL) - score(G, H)
				if gain > 1e-6 && (bestF < 0 || gain > bestGain) {
					bestGain, bestF, bestB = gain, k, b
				}
			}
		}
		if bestF < 0 {
			continue
		}
		ft := feats[bestF]
		var l, r []int
		for _, j := range rows {
			if ft.bin[j] <= bestB {
				l = append(l, j)
			} else {
				r = append(r, j)
			}
		}
		out[i] = &tree.RegNode{Split: &tree.Split{Party: ft.party, Table: ft.table, Column: ft.col, Op: tree.OpLE, Num: ft.cuts[bestB]}}
		children = append(children, l, r)
		parents = append(parents, out[i])
	}
	if len(children) > 0 {
		kids := refGrow(feats, gs, hs, children, depth+1, p)
		for i, n := range parents {
			n.Left, n.Right = kids[2*i], kids[2*i+1]
		}
	}
	return out
}

// refTables reads the case's tables as the reference sees them.
func refTables(g *joinprop.Graph, data map[string]*table.Table) []refTable {
	out := make([]refTable, len(g.Tables))
	for i, ti := range g.Tables {
		t := data[ti.Name]
		rt := refTable{name: ti.Name, party: ti.Party, keys: map[int][]string{}, num: map[string][]float64{}}
		for _, in := range g.Neighbours(i) {
			cols := g.EdgeCols(in)
			for r := 0; r < t.NumRows(); r++ {
				var parts []string
				for _, c := range cols {
					col, _ := t.Column(c)
					parts = append(parts, col.Str[r])
				}
				rt.keys[in.Edge] = append(rt.keys[in.Edge], strings.Join(parts, "\x00"))
			}
		}
		for _, ci := range ti.Columns {
			col, _ := t.Column(ci.Name)
			switch ci.Kind {
			case table.Numeric:
				rt.feats = append(rt.feats, ci.Name)
				rt.num[ci.Name] = col.Num
			case table.Class:
				rt.y = col.Str
			}
		}
		out[i] = rt
	}
	return out
}

func modelJSON(t *testing.T, m boost.Model) string {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkAgainstReference trains on the case and holds the model to the
// reference's; at least one split must be on a table other than the
// class holder's, and the trees must not be all leaves.
func checkAgainstReference(t *testing.T, c *joinCase, p boost.Params) *boost.Model {
	return checkReference(t, c, p, c.g.Target())
}

// checkReference is checkAgainstReference with the table some split must
// be on named.
func checkReference(t *testing.T, c *joinCase, p boost.Params, on string) *boost.Model {
	t.Helper()
	got, err := boost.Train(c.g, c.data, p)
	if err != nil {
		t.Fatal(err)
	}
	want := refBoost(c.g, refTables(c.g, c.data), p)
	if a, b := modelJSON(t, *got), modelJSON(t, want); a != b {
		t.Fatalf("model differs from the reference\n got: %s\nwant: %s", a, b)
	}
	other := 0
	for _, tr := range got.Trees {
		var walk func(n *tree.RegNode)
		walk = func(n *tree.RegNode) {
			if n.IsLeaf() {
				return
			}
			if n.Split.Table != c.g.Target() && (on == c.g.Target() || n.Split.Table == on) {
				other++
			}
			walk(n.Left)
			walk(n.Right)
		}
		walk(tr)
	}
	if other == 0 {
		t.Fatalf("no split on table %q or another party's: the case does not exercise the join", on)
	}
	return got
}
