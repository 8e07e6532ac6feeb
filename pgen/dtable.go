package pgen

import (
	"slices"
	"sort"

	"github.com/cohortdm/cohort/tree"
)

// DecisionTable is Kohavi's decision table majority (DTM: "The Power of
// Decision Tables", ECML 1995), one of the global models the paper learns
// from the pooled pseudo-rows (Sharkey, Tian, Zhang, Xu, PinKDD 2007, §4).
// Its schema is a subset of the attributes and its body the rows' class
// counts for every combination of their values the rows hold: a row is
// given the majority class of the rows that match it on the schema, or of
// all rows (Default) when none does. As in Weka's DecisionTable, numeric
// attributes are first discretised (Fayyad and Irani's MDL method,
// mdlCuts), and the schema is found by best-first search forward from the
// empty set, scoring each subset by its leave-one-out accuracy and
// stopping after staleLimit expansions without improvement. Nothing is
// drawn: the table is a function of the rows.
//
// It holds counts of the pseudo-rows, nothing that the published trees
// and the joint seed do not determine.
type DecisionTable struct {
	Labels []string `json:"labels"`
	// Attrs is the schema, in the rows' attribute order.
	Attrs   []DTAttr  `json:"attrs"`
	Default []uint64  `json:"default"` // rows of each class
	Entries []DTEntry `json:"entries"` // in key order
	// LOO is the schema's leave-one-out accuracy on the rows learnt from.
	LOO float64 `json:"loo_accuracy"`
}

// DTAttr is one attribute of a decision table's schema: a numeric one's
// value x is in interval i when Cuts[i−1] < x <= Cuts[i]; a categorical
// one's is its index in Values.
type DTAttr struct {
	Name    string    `json:"name"`
	Numeric bool      `json:"numeric"`
	Cuts    []float64 `json:"cuts,omitempty"`
	Values  []string  `json:"values,omitempty"`
}

// DTEntry is one line of the body: the schema's values (interval or value
// indexes, in Attrs order) and the rows of each class that have them.
type DTEntry struct {
	Key    []int32  `json:"key"`
	Counts []uint64 `json:"counts"`
}

// staleLimit is how many expansions in a row without a better subset end
// the search (Weka's BestFirst default).
const staleLimit = 5

// LearnTable learns a decision table majority from d.
func LearnTable(d *tree.Data) *DecisionTable {
	nc := len(d.Labels)
	attrs := make([]DTAttr, len(d.Attrs))
	cols := make([][]int32, len(d.Attrs))
	for j, a := range d.Attrs {
		attrs[j] = DTAttr{Name: a.Name, Numeric: a.Numeric}
		if !a.Numeric {
			attrs[j].Values, cols[j] = a.Values, a.Code
			continue
		}
		attrs[j].Cuts = mdlCuts(a.Num, d.Class, nc)
		cols[j] = make([]int32, len(a.Num))
		for i, x := range a.Num {
			cols[j][i] = int32(sort.SearchFloat64s(attrs[j].Cuts, x))
		}
	}
	schema, loo := bestFirst(len(attrs), func(s []int) float64 { return looAccuracy(cols, s, d.Class, nc) })
	m := &DecisionTable{Labels: d.Labels, Default: make([]uint64, nc), LOO: loo}
	for _, j := range schema {
		m.Attrs = append(m.Attrs, attrs[j])
	}
	groups := group(cols, schema, d.Class, nc)
	for _, c := range d.Class {
		m.Default[c]++
	}
	for _, e := range groups {
		m.Entries = append(m.Entries, *e)
	}
	slices.SortFunc(m.Entries, func(a, b DTEntry) int { return slices.Compare(a.Key, b.Key) })
	return m
}

// bestFirst searches attribute subsets forward from the empty one: it
// expands the best open subset (the first found among equals) by each
// attribute it lacks, and stops after staleLimit expansions in a row
// without a subset better than the best, or when none is left. It
// returns the best subset (the first found among equals) and its score.
func bestFirst(n int, score func([]int) float64) ([]int, float64) {
	type node struct {
		s     []int
		score float64
	}
	best := node{score: score(nil)}
	open := []node{best}
	seen := map[string]bool{"": true}
	for stale := 0; len(open) > 0 && stale < staleLimit; {
		at := 0
		for i, o := range open {
			if o.score > open[at].score {
				at = i
			}
		}
		cur := open[at]
		open = slices.Delete(open, at, at+1)
		improved := false
		for j := range n {
			if slices.Contains(cur.s, j) {
				continue
			}
			child := slices.Sorted(slices.Values(append(slices.Clone(cur.s), j)))
			k := string(keyOf(child))
			if seen[k] {
				continue
			}
			seen[k] = true
			c := node{s: child, score: score(child)}
			open = append(open, c)
			if c.score > best.score+1e-9 {
				best, improved = c, true
			}
		}
		if stale++; improved {
			stale = 0
		}
	}
	return best.s, best.score
}

// keyOf is a byte string of ints, big-endian, 4 bytes each.
func keyOf(xs []int) []byte {
	b := make([]byte, 0, 4*len(xs))
	for _, x := range xs {
		b = append(b, byte(x>>24), byte(x>>16), byte(x>>8), byte(x))
	}
	return b
}

// group counts the rows of each class per combination of the schema's
// codes (keyed by keyOf the codes).
func group(cols [][]int32, schema []int, class []int32, nc int) map[string]*DTEntry {
	g := map[string]*DTEntry{}
	key := make([]int, len(schema))
	for i, c := range class {
		for s, j := range schema {
			key[s] = int(cols[j][i])
		}
		k := string(keyOf(key))
		e := g[k]
		if e == nil {
			e = &DTEntry{Key: make([]int32, len(key)), Counts: make([]uint64, nc)}
			for s, x := range key {
				e.Key[s] = int32(x)
			}
			g[k] = e
		}
		e.Counts[c]++
	}
	return g
}

// looAccuracy is the leave-one-out accuracy of a decision table on the
// schema: each row classified by the table of the other rows.
func looAccuracy(cols [][]int32, schema []int, class []int32, nc int) float64 {
	if len(class) == 0 {
		return 0
	}
	g := group(cols, schema, class, nc)
	all := make([]uint64, nc)
	for _, c := range class {
		all[c]++
	}
	key := make([]int, len(schema))
	right := 0
	for i, c := range class {
		for s, j := range schema {
			key[s] = int(cols[j][i])
		}
		counts := g[string(keyOf(key))].Counts
		var n uint64
		for _, x := range counts {
			n += x
		}
		if n == 1 { // the row alone: no other row matches it
			counts = all
		}
		counts[c]-- // the table without the row
		if tree.Majority(counts) == int(c) {
			right++
		}
		counts[c]++
	}
	return float64(right) / float64(len(class))
}

// Classify returns the class index for a row given by its attributes'
// values (value as NaiveBayes.Classify takes it): the majority of the
// body's entry that matches the row on the schema, or of Default when
// none does or the row lacks a schema attribute. A categorical value the
// table does not know is Other when the table has Other. Ties go to the
// smaller class index.
func (m *DecisionTable) Classify(value func(name string) (float64, string, bool)) int {
	key := make([]int32, len(m.Attrs))
	for i, a := range m.Attrs {
		x, s, ok := value(a.Name)
		if !ok {
			return tree.Majority(m.Default)
		}
		if a.Numeric {
			key[i] = int32(sort.SearchFloat64s(a.Cuts, x))
			continue
		}
		v, found := slices.BinarySearch(a.Values, s)
		if !found {
			if v, found = slices.BinarySearch(a.Values, Other); !found {
				return tree.Majority(m.Default)
			}
		}
		key[i] = int32(v)
	}
	e, found := slices.BinarySearchFunc(m.Entries, key, func(e DTEntry, k []int32) int { return slices.Compare(e.Key, k) })
	if !found {
		return tree.Majority(m.Default)
	}
	return tree.Majority(m.Entries[e].Counts)
}

// GlobalTable is the decision table the coordinator learns with
// params.decision_table: from the pseudo-rows Global grows its tree on.
func GlobalTable(trees []*tree.Tree, s *Schema, seed []byte) *DecisionTable {
	return LearnTable(pseudoRows(trees, s, seed))
}

// CorrectTable counts the rows of d that m classifies as their class (a
// label of d that m does not have counts as wrong).
func CorrectTable(m *DecisionTable, d *tree.Data) int {
	return correct(m.Classify, m.Labels, d)
}
