package table

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// OpenDistinct loads the distinct rows of the table Open(src, schema) would
// load, over the columns cols only, each once, and how many of the table's
// rows hold it (Counts[i] for row i). It is for a kind whose local work
// treats rows with the same values in cols alike (sjc's class and split
// counts), so that memory is the distinct rows', not the table's: a
// database groups them with one query (as GroupCounts does), a file is
// streamed.
//
// Its errors are Open's over the whole schema (a NULL or a non-number in
// any schema column fails, naming the row), and src.MaxRows and
// opts.MaxBytes bound the distinct rows it keeps, with Open's refusal.
// The same table gives the same Table, its rows in a fixed order: a file's
// in the order each first appears, a query's (whose order the server
// does not fix) in the order of their values.
func OpenDistinct(ctx context.Context, src Source, name string, schema map[string]Kind, cols []string, opts ReadOptions) (*Distinct, error) {
	desc := opts.describe(src)
	if schema == nil {
		return nil, fmt.Errorf("%w: %s: distinct rows need a schema", ErrFormat, desc)
	}
	sub := make(map[string]Kind, len(cols))
	for _, c := range cols {
		k, ok := schema[c]
		if !ok {
			return nil, fmt.Errorf("%w: %s: column %q is not in the schema", ErrNoColumn, desc, c)
		}
		sub[c] = k
	}
	if err := checkSets([][]string{cols}); err != nil {
		return nil, err
	}
	agg, err := NewAggregator(src, schema, opts)
	if err != nil {
		return nil, err
	}
	defer agg.Close()
	f := newDistinctFold(len(cols), src.MaxRows)
	folds := []folder{f}
	if err := agg.(interface {
		foldGroups(context.Context, [][]string, []folder) error
	}).foldGroups(ctx, [][]string{cols}, folds); err != nil {
		return nil, err
	}
	f = folds[0].(*distinctFold) // the stream's, when a query could not answer
	if f.over {
		return nil, tooManyRows(desc)
	}
	// The distinct rows go through the shared row check as text, as a CSV
	// file's do: a numeric value is parsed from the text Open keeps for
	// it, which every reader writes so that it reads back as the number.
	b, err := newBuilderMax(desc, cols, sub, opts.maxBytes())
	if err != nil {
		return nil, err
	}
	order := f.order()
	f.at = nil // the merge map is done with; the columns are kept until built
	d := &Distinct{}
	row := make([]cell, len(cols))
	for k, r := range order {
		// A query's groups whose texts coincide come out side by side.
		if k > 0 && f.same(r, order[k-1]) {
			d.Counts[len(d.Counts)-1] += f.counts[r]
			continue
		}
		if src.MaxRows > 0 && int64(len(d.Counts)) >= src.MaxRows {
			return nil, tooManyRows(desc)
		}
		for j := range cols {
			row[j] = cell{text: f.cols[j][r]}
		}
		if err := b.add(row, func(int) string { return fmt.Sprintf("%s: distinct row %d", desc, len(d.Counts)+1) }); err != nil {
			return nil, err
		}
		d.Counts = append(d.Counts, f.counts[r])
	}
	d.Table = b.finish(name)
	return d, nil
}

// Distinct is a table's distinct rows over some columns (OpenDistinct).
type Distinct struct {
	Table *Table
	// Counts is, per row of Table, how many rows of the source hold it.
	Counts []int
}

// distinctFold keeps each combination once, its values appended to one
// slice per column: a streamed row's combination is found again through a
// map from its key to its number; a query's groups, distinct already, are
// appended as they come and merged, where their texts coincide, once
// sorted. Past max streamed combinations (0: no limit) it stops keeping
// them and says so.
type distinctFold struct {
	at      map[string]int32
	grouped bool // addGroup was called: the server's order
	key     []byte
	cols    [][]string
	counts  []int
	max     int64
	over    bool
}

func newDistinctFold(n int, max int64) *distinctFold {
	return &distinctFold{at: map[string]int32{}, cols: make([][]string, n), max: max}
}

func (f *distinctFold) fresh() folder { return newDistinctFold(len(f.cols), f.max) }

func (f *distinctFold) add(vals []string, n int) {
	f.key = groupKey(f.key[:0], vals)
	if r, ok := f.at[string(f.key)]; ok {
		f.counts[r] += n
		return
	}
	if f.over || (f.max > 0 && int64(len(f.counts)) >= f.max) {
		f.over = true
		return
	}
	f.at[string(f.key)] = int32(len(f.counts))
	for i, v := range vals {
		f.cols[i] = append(f.cols[i], v)
	}
	f.counts = append(f.counts, n)
}

// addGroup appends a query's group.
func (f *distinctFold) addGroup(vals []string, n int) {
	f.grouped = true
	for i, v := range vals {
		f.cols[i] = append(f.cols[i], v)
	}
	f.counts = append(f.counts, n)
}

// same says whether combinations a and b have the same values.
func (f *distinctFold) same(a, b int32) bool {
	for _, c := range f.cols {
		if c[a] != c[b] {
			return false
		}
	}
	return true
}

// order is the combinations' numbers in the order OpenDistinct gives
// them: as they came from a stream, in the order of their values from a
// query.
func (f *distinctFold) order() []int32 {
	order := make([]int32, len(f.counts))
	for i := range order {
		order[i] = int32(i)
	}
	if !f.grouped {
		return order
	}
	slices.SortFunc(order, func(a, b int32) int {
		for _, c := range f.cols {
			if x := strings.Compare(c[a], c[b]); x != 0 {
				return x
			}
		}
		return 0
	})
	return order
}
