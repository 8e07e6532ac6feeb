package joinprop

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/cohortdm/cohort/table"
)

// ErrColumn: a join column named by the graph is not in a table's data.
var ErrColumn = errors.New("join column not in the data")

// EdgeKey is a table's join value on one edge, interned: Vals are the
// sorted distinct canonical join values (KeyEncode), Row each row's index
// into Vals.
type EdgeKey struct {
	Vals []string
	Row  []int32
}

// NewEdgeKey interns t's join value over the key columns cols.
func NewEdgeKey(t *table.Table, cols []string) (*EdgeKey, error) {
	// Dictionary-encode each key column once and combine the codes into
	// a dense tuple code per row, so that only the distinct join values
	// are text-encoded and sorted.
	n := t.NumRows()
	code := make([]int32, n)
	var tuples [][]string // the distinct key tuples, by code
	for i, c := range cols {
		col, err := t.Column(c)
		if err != nil {
			return nil, fmt.Errorf("table %q column %q: not in the data: %w", t.Name, c, ErrColumn)
		}
		if i == 0 {
			d := DictRank(col.Str, code)
			tuples = make([][]string, len(d))
			for k, v := range d {
				tuples[k] = []string{v}
			}
			continue
		}
		cc := make([]int32, n)
		d := DictRank(col.Str, cc)
		pair := make(map[uint64]int32)
		var next [][]string
		for r := range code {
			key := uint64(code[r])<<32 | uint64(uint32(cc[r]))
			id, ok := pair[key]
			if !ok {
				id = int32(len(next))
				pair[key] = id
				next = append(next, append(slices.Clip(tuples[code[r]]), d[cc[r]]))
			}
			code[r] = id
		}
		tuples = next
	}
	encs := make([]string, len(tuples))
	for k, tu := range tuples {
		encs[k] = KeyEncode(tu)
	}
	pos := make([]int32, len(encs))
	ek := &EdgeKey{Vals: DictRank(encs, pos), Row: code}
	for r, k := range code {
		code[r] = pos[k]
	}
	return ek, nil
}

// EdgeCols returns the key columns of table ti on the incident edge in.
func (g *Graph) EdgeCols(in Incident) []string {
	if in.ParentSide {
		return g.Edges[in.Edge].ParentCols
	}
	return g.Edges[in.Edge].ChildCols
}

// Gallop returns the first index i >= j with vals[i] >= v in the sorted
// vals: an exponential then a binary search from j, so O(log(i−j)) string
// comparisons, whether a summary names most of a table's values or few.
func Gallop(vals []string, j int, v string) int {
	if j >= len(vals) || vals[j] >= v {
		return j
	}
	lo, step := j, 1 // vals[lo] < v
	for lo+step < len(vals) && vals[lo+step] < v {
		lo += step
		step *= 2
	}
	hi := min(lo+step, len(vals)) // vals[hi] >= v, or hi = len(vals)
	return lo + 1 + sort.SearchStrings(vals[lo+1:hi], v)
}
