package boost

import (
	"fmt"
	"slices"
	"strings"
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

// Sum is the sums of one entry: a Vec in the clear, or the Ring's
// encrypted form of one.
type Sum any

// Ring is the arithmetic a table's down pass runs on its parent's sums:
// acc + x·k, acc nil for zero. The class holder's own sums are Vecs; what
// crosses an edge is in the job's Ring (PlainRing in process, Paillier in
// the job and its benchmark).
type Ring interface {
	AddMul(acc, x Sum, k uint64) Sum
	// Place is x, the sums of a pair, times k in node's slots of a
	// width-slot vector (reuse.go).
	Place(x Sum, node, width int, k uint64, lay Layout) (Sum, error)
}

// PlainRing adds Vecs.
type PlainRing struct{}

// AddMul adds x·k to acc.
func (PlainRing) AddMul(acc, x Sum, k uint64) Sum {
	if acc == nil {
		return addMul(nil, x.(Vec), k)
	}
	return addMul(acc.(Vec), x.(Vec), k)
}

// DownEntry is one combo of a child's subtree and its sums.
type DownEntry struct {
	Combo string `msgpack:"combo"`
	Sums  Sum    `msgpack:"sums"`
	// Reuse, when set, stands for Sums: the tree's first-level entry it
	// names, in one node's slots (reuse.go).
	Reuse *Reuse `msgpack:"reuse"`
}

// DownSummary is a table's down message to a child.
type DownSummary struct {
	Edge    int           `msgpack:"edge"`
	Values  []string      `msgpack:"values"`
	Entries [][]DownEntry `msgpack:"entries"`
	// First: the tree's first level (the receiver keeps it for re-used
	// entries). Width is the slots of the level's sums, Layout their
	// packing (set where the sums are sealed).
	First  bool   `msgpack:"first"`
	Width  int    `msgpack:"width"`
	Layout Layout `msgpack:"layout"`
}

// BinSums is, per feature of a table (Features order), per bin, the sums
// of the join rows whose row of the table falls in the bin.
type BinSums [][]Vec

// SealedBins is BinSums in a Ring.
type SealedBins [][]Sum

// downAcc accumulates a table's down messages to its children: per child,
// every row's contribution in row order, keyed by the child's own value
// index, grouped by join value and combo only when the messages are made
// (summaries). A map per join value and child had been most of a class
// holder's down pass on a one-to-one edge (a9a: 32,561 maps of one combo
// a level).
type downAcc [][]keyed[downTerm]

// downTerm is one row's contribution to a child's message: d·mult for
// combo.
type downTerm struct {
	combo string
	d     Sum
	mult  uint64
}

func (l *Local) newDownAcc() downAcc {
	return make(downAcc, len(l.g.Tables[l.ti].Children))
}

// spread adds d (the sums of a row's join rows of combo parts, per join
// row of the row's subtree) to the children's messages.
func (l *Local) spread(acc downAcc, r int, k kids, parts []int, d Sum) {
	ch := l.g.Tables[l.ti].Children
	for i, e := range ch {
		mult := l.weight(r) // the row's table rows each form these join rows
		for j, f := range ch {
			if j != i {
				mult *= k[j][l.edges[f].Row[r]][parts[j]].Count
			}
		}
		w := int(l.edges[e].Row[r])
		acc[i] = append(acc[i], keyed[downTerm]{w, downTerm{combo: k[i][w][parts[i]].Combo, d: d, mult: mult}})
	}
}

// summaries makes the children's messages in ring: per child, its values
// in order, each with its combos in order and their sums, added up in the
// order of the rows (a stable sort by value, then by combo), as a map from
// combo to the running sum had added them.
func (l *Local) summaries(ring Ring, acc downAcc) []DownSummary {
	ch := l.g.Tables[l.ti].Children
	out := make([]DownSummary, len(ch))
	for i, e := range ch {
		vals := l.edges[e].Vals
		terms, start := groupByKey(acc[i], len(vals))
		ds := DownSummary{Edge: e}
		for v := range vals {
			run := group(terms, start, v)
			if len(run) == 0 {
				continue
			}
			slices.SortStableFunc(run, func(a, b downTerm) int { return strings.Compare(a.combo, b.combo) })
			var es []DownEntry
			for _, t := range run {
				if n := len(es); n > 0 && es[n-1].Combo == t.combo {
					es[n-1].Sums = ring.AddMul(es[n-1].Sums, t.d, t.mult)
					continue
				}
				es = append(es, DownEntry{Combo: t.combo, Sums: ring.AddMul(nil, t.d, t.mult)})
			}
			ds.Values = append(ds.Values, vals[v])
			ds.Entries = append(ds.Entries, es)
		}
		out[i] = ds
	}
	return out
}

func (l *Local) newBins() SealedBins {
	out := make(SealedBins, len(l.feats))
	for f := range l.feats {
		out[f] = make([]Sum, len(l.feats[f].Cuts)+1)
	}
	return out
}

func (l *Local) addBins(ring Ring, bs SealedBins, r int, v Sum, k uint64) {
	for f := range l.feats {
		b := l.feats[f].bin[r]
		bs[f][b] = ring.AddMul(bs[f][b], v, k)
	}
}

// Open turns sealed bin sums into Vecs with open (PlainRing's: a type
// assertion; Paillier's: the joint decryption). Empty bins stay nil.
func Open(bs SealedBins, open func(Sum) (Vec, error)) (BinSums, error) {
	out := make(BinSums, len(bs))
	for f, bins := range bs {
		out[f] = make([]Vec, len(bins))
		for b, s := range bins {
			if s == nil {
				continue
			}
			v, err := open(s)
			if err != nil {
				return nil, err
			}
			out[f][b] = v
		}
	}
	return out, nil
}

// OpenPlain is Open's function for PlainRing.
func OpenPlain(s Sum) (Vec, error) { return s.(Vec), nil }

// Seal replaces every entry's Vec in ds by seal's form of it (the class
// holder encrypts its down messages).
func Seal(ds []DownSummary, seal func(Vec) (Sum, error)) error {
	for i := range ds {
		if err := sealEntries(&ds[i], seal); err != nil {
			return err
		}
	}
	return nil
}

// RootDown is the class holder's down pass: gv[i] is group i's sums per
// join row. It returns the down messages to its children, in the clear
// (Seal encrypts them), and its own bin sums.
//
// The two read the same groups and write apart, so the own bin sums are
// added on a second goroutine: a level's down messages wait for the longer
// of the two rather than both (on a9a's 60 own columns, about 10 ms of a
// level's 20 ms here, while the other parties wait for the gradients).
func (l *Local) RootDown(groups []Group, k kids, gv []Vec) ([]DownSummary, BinSums) {
	acc, own := l.newDownAcc(), l.newPlainBins()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i, gr := range groups {
			l.addPlainBins(own, gr.Row, gv[i], gr.Count)
		}
	}()
	for i, gr := range groups {
		l.spread(acc, gr.Row, k, gr.parts, gv[i])
	}
	out := l.summaries(PlainRing{}, acc)
	<-done
	return out, own
}

// newPlainBins is newBins in the clear: Open(newBins(), OpenPlain)'s
// shape, every bin empty (nil) until a row adds to it.
func (l *Local) newPlainBins() BinSums {
	out := make(BinSums, len(l.feats))
	for f := range l.feats {
		out[f] = make([]Vec, len(l.feats[f].Cuts)+1)
	}
	return out
}

// addPlainBins is addBins in the clear, on Vecs directly: the class
// holder's own columns at every level, where PlainRing's Sum, an
// interface, allocated for every row and column (on a9a's 60 columns,
// most of the garbage of a level). A group's row lies in one open node,
// so v holds at most a gradient and a hessian that are not zero among
// its 2·open entries: only those are added (at depth 5, 2 of 64).
func (l *Local) addPlainBins(bs BinSums, r int, v Vec, k uint64) {
	var at [4]int // v's entries that are not zero, if at most four
	n := 0
	for i, x := range v {
		if x == 0 {
			continue
		}
		if n == len(at) {
			n = -1
			break
		}
		at[n], n = i, n+1
	}
	for f := range l.feats {
		b := l.feats[f].bin[r]
		if n < 0 {
			bs[f][b] = addMul(bs[f][b], v, k)
			continue
		}
		if bs[f][b] == nil {
			bs[f][b] = make(Vec, len(v))
		}
		acc := bs[f][b]
		for _, i := range at[:n] {
			acc[i] += v[i] * int64(k)
		}
	}
}

// Down is a non-root table's down pass in ring: from its parent's message
// and its children's up messages (as Up took them), its messages to its
// children and its bin sums. A message of the tree's first level is kept
// for the re-used entries of its deeper levels (reuse.go).
func (l *Local) Down(ring Ring, ds DownSummary, sums []ComboSummary) ([]DownSummary, SealedBins, error) {
	k, err := l.takeKids(sums)
	if err != nil {
		return nil, nil, err
	}
	pe := l.g.Tables[l.ti].Parent
	ek := l.edges[pe]
	if ds.Edge != pe || len(ds.Entries) != len(ds.Values) {
		return nil, nil, fmt.Errorf("boost: table %q: down summary for edge %s does not fit", l.name, l.g.EdgeName(pe))
	}
	if ds.First {
		l.first = nil
	}
	in := make([]map[string]*DownEntry, len(ek.Vals))
	firstSums := make([][]Sum, len(ek.Vals)) // by own value: the first level's sums of its entries
	f := newFinder(ek.Vals)
	for i, v := range ds.Values {
		j, ok := f.find(v)
		if !ok {
			return nil, nil, fmt.Errorf("boost: table %q edge %s: the summary names a join value the table does not hold", l.name, l.g.EdgeName(pe))
		}
		in[j] = map[string]*DownEntry{}
		for x := range ds.Entries[i] {
			e := &ds.Entries[i][x]
			if err := l.checkReuse(e, v, ds.Width, firstSums, j); err != nil {
				return nil, nil, err
			}
			in[j][e.Combo] = e
		}
	}
	if ds.First {
		l.first = &ds
	}
	acc, bs := l.newDownAcc(), l.newBins()
	nodes := make([][][]Sum, len(l.feats)) // re-used sums per feature, bin and node
	for r := 0; r < l.n && err == nil; r++ {
		m := in[ek.Row[r]]
		if m == nil {
			continue
		}
		l.eachCombo(r, k, func(parts []int) {
			c, n := l.combo(r, k, parts)
			e := m[c]
			if e == nil || err != nil {
				return
			}
			if e.Reuse == nil {
				l.addBins(ring, bs, r, e.Sums, n)
				l.spread(acc, r, k, parts, e.Sums)
				return
			}
			if e.Reuse.Node < 0 {
				return
			}
			x := firstSums[ek.Row[r]][e.Reuse.Ref]
			l.addNodeBins(ring, nodes, r, x, n, e.Reuse.Node, ds.Width)
			if len(acc) > 0 {
				var placed Sum
				if placed, err = ring.Place(x, e.Reuse.Node, ds.Width, 1, ds.Layout); err == nil {
					l.spread(acc, r, k, parts, placed)
				}
			}
		})
	}
	if err != nil {
		return nil, nil, err
	}
	if err := placeNodes(ring, bs, nodes, ds.Width, ds.Layout); err != nil {
		return nil, nil, err
	}
	return l.summaries(ring, acc), bs, nil
}

// checkReuse checks a down entry of join value v (own value index j): it
// has sums, or names an entry of the tree's first level and an open node.
// firstSums[j] is filled with the first level's sums of v.
func (l *Local) checkReuse(e *DownEntry, v string, width int, firstSums [][]Sum, j int) error {
	if e.Reuse == nil {
		if e.Sums == nil {
			return fmt.Errorf("%w: a down entry without sums", ErrWire)
		}
		return nil
	}
	bad := fmt.Errorf("%w: a re-used down entry names no entry of the tree's first level", ErrWire)
	if l.first == nil || width < 2 || width > maxWidth || width%2 != 0 || e.Reuse.Node < -1 || 2*e.Reuse.Node+1 >= width {
		return bad
	}
	if firstSums[j] == nil {
		fi, ok := slices.BinarySearch(l.first.Values, v)
		if !ok {
			return bad
		}
		for _, fe := range l.first.Entries[fi] {
			firstSums[j] = append(firstSums[j], fe.Sums)
		}
	}
	if e.Reuse.Ref < 0 || e.Reuse.Ref >= len(firstSums[j]) {
		return bad
	}
	return nil
}

// maxWidth bounds a level's slots: two per open node, at most 2^15 open
// nodes (params.max_depth is at most 16).
const maxWidth = 1 << 16

// addNodeBins adds x·k to row r's bin of every feature in node's sums.
func (l *Local) addNodeBins(ring Ring, nodes [][][]Sum, r int, x Sum, k uint64, node, width int) {
	for f := range l.feats {
		if nodes[f] == nil {
			nodes[f] = make([][]Sum, len(l.feats[f].Cuts)+1)
		}
		b := l.feats[f].bin[r]
		if nodes[f][b] == nil {
			nodes[f][b] = make([]Sum, width/2)
		}
		nodes[f][b][node] = ring.AddMul(nodes[f][b][node], x, k)
	}
}

// placeNodes adds the per-node sums of every bin, each placed in its
// node's slots, to the bin's sums.
func placeNodes(ring Ring, bs SealedBins, nodes [][][]Sum, width int, lay Layout) error {
	for f := range nodes {
		for b, ns := range nodes[f] {
			for node, x := range ns {
				if x == nil {
					continue
				}
				p, err := ring.Place(x, node, width, 1, lay)
				if err != nil {
					return err
				}
				bs[f][b] = ring.AddMul(bs[f][b], p, 1)
			}
		}
	}
	return nil
}
