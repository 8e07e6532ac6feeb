package table

import (
	"context"
	"fmt"
)

// OpenDistinct loads the distinct rows of the table Open(src, schema) would
// load, over the columns cols only, each once, and how many of the table's
// rows hold it (Counts[i] for row i). It is for a kind whose local work
// treats rows with the same values in cols alike (sjc's class and split
// counts), so that memory is the distinct rows', not the table's: a
// database groups them with one query (GroupCounts), a file is streamed.
//
// Its errors are Open's over the whole schema (a NULL or a non-number in
// any schema column fails, naming the row), and src.MaxRows and
// opts.MaxBytes bound the distinct rows it keeps, with Open's refusal.
// Rows come in the order of their values, so the same table gives the same
// Table.
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
	agg, err := NewAggregator(src, schema, opts)
	if err != nil {
		return nil, err
	}
	_, sets, err := agg.GroupCounts(ctx, [][]string{cols})
	if err != nil {
		return nil, err
	}
	// The distinct rows go through the shared row check as text, as a CSV
	// file's do: a numeric value is parsed from the text Open keeps for
	// it, which every reader writes so that it reads back as the number.
	b, err := newBuilderMax(desc, cols, sub, opts.maxBytes())
	if err != nil {
		return nil, err
	}
	b.maxRows = src.MaxRows
	row := make([]cell, len(cols))
	d := &Distinct{Counts: make([]int, 0, len(sets[0]))}
	for i, g := range sets[0] {
		for j, v := range g.Values {
			row[j] = cell{text: v}
		}
		if err := b.add(row, func(int) string { return fmt.Sprintf("%s: distinct row %d", desc, i+1) }); err != nil {
			return nil, err
		}
		d.Counts = append(d.Counts, g.Count)
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
