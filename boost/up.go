package boost

import (
	"fmt"
	"slices"
	"strings"
)

// The up pass: every table tells its parent, per shared join value, how
// many of its subtree's partial join rows carry each combination of
// signatures (a combo). The class holder ends with its groups: each of
// its rows with the combos of the join rows it takes part in, and their
// counts; join rows of one group are alike for every split so far.

// ComboCount is one combo and the number of partial join rows with it.
// A combo is the signatures of a subtree's tables in pre-order, each
// followed by '|'.
type ComboCount struct {
	Combo string `msgpack:"combo"`
	Count uint64 `msgpack:"count"`
}

// ComboSummary is a table's up message on its parent edge: for each join
// value its subtree holds (sorted), the combos and their counts (sorted by
// combo).
type ComboSummary struct {
	Edge    int            `msgpack:"edge"`
	Values  []string       `msgpack:"values"`
	Entries [][]ComboCount `msgpack:"entries"`
}

// kids is what a table has from its children: per child edge (in the
// table's Children order), per own value index on that edge, the combos.
type kids [][][]ComboCount

// takeKids indexes the children's summaries by the table's own values.
func (l *Local) takeKids(sums []ComboSummary) (kids, error) {
	ch := l.g.Tables[l.ti].Children
	if len(sums) != len(ch) {
		return nil, fmt.Errorf("boost: table %q: %d child summaries for %d children", l.name, len(sums), len(ch))
	}
	out := make(kids, len(ch))
	for i, e := range ch {
		cs := sums[i]
		if cs.Edge != e || len(cs.Entries) != len(cs.Values) {
			return nil, fmt.Errorf("boost: table %q: summary for edge %s does not fit", l.name, l.g.EdgeName(e))
		}
		ek := l.edges[e]
		out[i] = make([][]ComboCount, len(ek.Vals))
		f := newFinder(ek.Vals)
		for k, v := range cs.Values {
			j, ok := f.find(v)
			if !ok {
				return nil, fmt.Errorf("boost: table %q edge %s: the summary names a join value the table does not hold", l.name, l.g.EdgeName(e))
			}
			out[i][j] = cs.Entries[k]
		}
	}
	return out, nil
}

// eachCombo calls fn for every combo of row r's partial join rows in the
// table's subtree: the row's own signature and one entry of each child's
// summary for the row's values (parts[i] indexes child i's entries).
// A row some child has nothing for is dangling: fn is not called.
func (l *Local) eachCombo(r int, k kids, fn func(parts []int)) {
	ch := l.g.Tables[l.ti].Children
	switch len(ch) { // the common shapes without the recursion's allocations
	case 0:
		fn(nil)
		return
	case 1:
		var part [1]int
		for j := range k[0][l.edges[ch[0]].Row[r]] {
			part[0] = j
			fn(part[:])
		}
		return
	}
	lists := make([][]ComboCount, len(ch))
	for i, e := range ch {
		lists[i] = k[i][l.edges[e].Row[r]]
		if len(lists[i]) == 0 {
			return
		}
	}
	parts := make([]int, len(ch))
	var rec func(i int)
	rec = func(i int) {
		if i == len(ch) {
			fn(parts)
			return
		}
		for j := range lists[i] {
			parts[i] = j
			rec(i + 1)
		}
	}
	rec(0)
}

// combo is the combo string and count of row r with the children's parts:
// the row's weight times the parts' counts, the partial join rows it forms.
func (l *Local) combo(r int, k kids, parts []int) (string, uint64) {
	var b strings.Builder
	b.Write(l.sig[r])
	b.WriteByte('|')
	n := l.weight(r)
	for i, e := range l.g.Tables[l.ti].Children {
		cc := k[i][l.edges[e].Row[r]][parts[i]]
		b.WriteString(cc.Combo)
		n *= cc.Count
	}
	return b.String(), n
}

// Up is the table's up message on its parent edge, from its children's,
// over the edge's shared join values (sorted; the edge's private set
// intersection gives them): other values are not sent.
func (l *Local) Up(sums []ComboSummary, shared []string) (ComboSummary, error) {
	k, err := l.takeKids(sums)
	if err != nil {
		return ComboSummary{}, err
	}
	pe := l.g.Tables[l.ti].Parent
	ek := l.edges[pe]
	// Every row's combos, grouped by join value (groupByKey): on a
	// one-to-one edge each value has one.
	var all []keyed[ComboCount]
	for r := 0; r < l.n; r++ {
		l.eachCombo(r, k, func(parts []int) {
			c, n := l.combo(r, k, parts)
			all = append(all, keyed[ComboCount]{int(ek.Row[r]), ComboCount{Combo: c, Count: n}})
		})
	}
	flat, start := groupByKey(all, len(ek.Vals))
	out := ComboSummary{Edge: pe}
	f := newFinder(shared)
	for v, val := range ek.Vals {
		if start[v] == start[v+1] {
			continue
		}
		if _, ok := f.find(val); !ok {
			continue
		}
		out.Values = append(out.Values, val)
		out.Entries = append(out.Entries, mergeCombos(group(flat, start, v)))
	}
	return out, nil
}

// mergeCombos sorts es by combo and adds up the counts of equal combos,
// in place: what a map from combo to count, its keys sorted, would hold.
func mergeCombos(es []ComboCount) []ComboCount {
	if len(es) < 2 {
		return es
	}
	slices.SortFunc(es, func(a, b ComboCount) int { return strings.Compare(a.Combo, b.Combo) })
	out := es[:1]
	for _, e := range es[1:] {
		if last := &out[len(out)-1]; last.Combo == e.Combo {
			last.Count += e.Count
		} else {
			out = append(out, e)
		}
	}
	return out[:len(out):len(out)]
}

// Group is a set of join rows alike for every split so far: the class
// holder's row Row, the combo of all tables' signatures (pre-order, each
// followed by '|'), and how many join rows have them.
type Group struct {
	Row   int
	Combo string
	Count uint64
	parts []int
}

// Groups is the class holder's groups, from its children's up messages,
// with the children's summaries indexed for the down pass.
func (l *Local) Groups(sums []ComboSummary) ([]Group, kids, error) {
	k, err := l.takeKids(sums)
	if err != nil {
		return nil, nil, err
	}
	var out []Group
	var flat []int // the groups' parts, one after the other: one slice, not one a group
	for r := 0; r < l.n; r++ {
		l.eachCombo(r, k, func(parts []int) {
			c, n := l.combo(r, k, parts)
			out = append(out, Group{Row: r, Combo: c, Count: n})
			flat = append(flat, parts...)
		})
	}
	w := len(l.g.Tables[l.ti].Children) // every group's parts: one per child
	for i := range out {
		out[i].parts = flat[i*w : (i+1)*w : (i+1)*w]
	}
	return out, k, nil
}
