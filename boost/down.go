package boost

import (
	"fmt"
	"maps"
	"slices"
)

// The down pass: gradient sums flow from the class holder outwards. On
// each edge, for each join value and each combo of the child's subtree,
// the sum over the join rows outside the subtree that join with the value
// of the gradient and hessian of the join rows they form with that combo,
// per open node (the class holder puts a join row's pair in its node's
// slot and zeros elsewhere). Every table adds what reaches its rows per
// bin of its columns. In the job these sums travel encrypted; here a
// vector of fixed-point integers stands for them.

// Vec holds, per open node of the level, a gradient and a hessian sum in
// fixed point (2 slots per node, node i at 2i and 2i+1).
type Vec []int64

// addMul adds x·k to acc (allocating acc when nil) and returns it.
func addMul(acc, x Vec, k uint64) Vec {
	if acc == nil {
		acc = make(Vec, len(x))
	}
	for i, v := range x {
		acc[i] += v * int64(k)
	}
	return acc
}

// DownEntry is one combo of a child's subtree and its sums.
type DownEntry struct {
	Combo string `msgpack:"combo"`
	Sums  Vec    `msgpack:"sums"`
}

// DownSummary is a table's down message to a child.
type DownSummary struct {
	Edge    int           `msgpack:"edge"`
	Values  []string      `msgpack:"values"`
	Entries [][]DownEntry `msgpack:"entries"`
}

// BinSums is, per feature of a table (Features order), per bin, the sums
// of the join rows whose row of the table falls in the bin.
type BinSums [][]Vec

// downAcc accumulates a table's down messages to its children: per child,
// per own value index on its edge, per combo.
type downAcc []([]map[string]Vec)

func (l *Local) newDownAcc() downAcc {
	ch := l.g.Tables[l.ti].Children
	out := make(downAcc, len(ch))
	for i, e := range ch {
		out[i] = make([]map[string]Vec, len(l.edges[e].Vals))
	}
	return out
}

// spread adds d (the sums of a row's join rows of combo parts, per join
// row of the row's subtree) to the children's messages.
func (l *Local) spread(acc downAcc, r int, k kids, parts []int, d Vec) {
	ch := l.g.Tables[l.ti].Children
	for i, e := range ch {
		mult := uint64(1)
		for j, f := range ch {
			if j != i {
				mult *= k[j][l.edges[f].Row[r]][parts[j]].Count
			}
		}
		w := l.edges[e].Row[r]
		cc := k[i][w][parts[i]]
		if acc[i][w] == nil {
			acc[i][w] = map[string]Vec{}
		}
		acc[i][w][cc.Combo] = addMul(acc[i][w][cc.Combo], d, mult)
	}
}

func (l *Local) summaries(acc downAcc) []DownSummary {
	ch := l.g.Tables[l.ti].Children
	out := make([]DownSummary, len(ch))
	for i, e := range ch {
		ds := DownSummary{Edge: e}
		for v, m := range acc[i] {
			if m == nil {
				continue
			}
			ds.Values = append(ds.Values, l.edges[e].Vals[v])
			var es []DownEntry
			for _, c := range slices.Sorted(maps.Keys(m)) {
				es = append(es, DownEntry{Combo: c, Sums: m[c]})
			}
			ds.Entries = append(ds.Entries, es)
		}
		out[i] = ds
	}
	return out
}

func (l *Local) newBinSums() BinSums {
	out := make(BinSums, len(l.feats))
	for f := range l.feats {
		out[f] = make([]Vec, len(l.feats[f].Cuts)+1)
	}
	return out
}

func (l *Local) addBins(bs BinSums, r int, v Vec, k uint64) {
	for f := range l.feats {
		b := l.feats[f].bin[r]
		bs[f][b] = addMul(bs[f][b], v, k)
	}
}

// RootDown is the class holder's down pass: gv[i] is group i's sums per
// join row. It returns the down messages to its children and its own bin
// sums.
func (l *Local) RootDown(groups []Group, k kids, gv []Vec) ([]DownSummary, BinSums) {
	acc, bs := l.newDownAcc(), l.newBinSums()
	for i, gr := range groups {
		if gv[i] == nil { // in no open node
			continue
		}
		l.addBins(bs, gr.Row, gv[i], gr.Count)
		l.spread(acc, gr.Row, k, gr.parts, gv[i])
	}
	return l.summaries(acc), bs
}

// Down is a non-root table's down pass: from its parent's message and its
// children's up messages (as Up took them), its messages to its children
// and its bin sums.
func (l *Local) Down(ds DownSummary, sums []ComboSummary) ([]DownSummary, BinSums, error) {
	k, err := l.takeKids(sums)
	if err != nil {
		return nil, nil, err
	}
	pe := l.g.Tables[l.ti].Parent
	ek := l.edges[pe]
	if ds.Edge != pe || len(ds.Entries) != len(ds.Values) {
		return nil, nil, fmt.Errorf("boost: table %q: down summary for edge %s does not fit", l.name, l.g.EdgeName(pe))
	}
	in := make([]map[string]Vec, len(ek.Vals))
	for i, v := range ds.Values {
		j, ok := slices.BinarySearch(ek.Vals, v)
		if !ok {
			return nil, nil, fmt.Errorf("boost: table %q edge %s: the summary names a join value the table does not hold", l.name, l.g.EdgeName(pe))
		}
		in[j] = map[string]Vec{}
		for _, e := range ds.Entries[i] {
			in[j][e.Combo] = e.Sums
		}
	}
	acc, bs := l.newDownAcc(), l.newBinSums()
	for r := 0; r < l.n; r++ {
		m := in[ek.Row[r]]
		if m == nil {
			continue
		}
		l.eachCombo(r, k, func(parts []int) {
			c, n := l.combo(r, k, parts)
			d := m[c]
			if d == nil {
				return
			}
			l.addBins(bs, r, d, n)
			l.spread(acc, r, k, parts, d)
		})
	}
	return l.summaries(acc), bs, nil
}
