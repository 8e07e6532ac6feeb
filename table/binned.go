package table

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Binned is a table's rows grouped by the values of some columns (kept
// as Open loads them) and by the bin of each of some numeric columns
// under cuts taken over the table's own rows (OpenBinned): what a
// histogram booster's local work reads of a table, since rows alike in
// their join values, their class and every column's bin are alike in
// every round.
type Binned struct {
	// Table holds the kept columns, one row per group, each value as Open
	// loads it.
	Table *Table
	// Columns are the binned columns and Cuts their cuts (RankCuts over
	// the table's rows).
	Columns []string
	Cuts    [][]float64
	// Bins[j][r] is group r's bin of Columns[j]: how many of its cuts lie
	// below the rows' values.
	Bins [][]int32
	// Counts[r] is how many of the table's rows group r holds.
	Counts []int
}

// RankCuts is the bin boundaries of a numeric column given its distinct
// values vals, ascending, and how many rows hold each (counts): with at
// most bins distinct values, every one but the largest; otherwise the
// values at ranks ⌈k·n/bins⌉−1 (k = 1..bins−1, 0-based) of the n sorted
// rows, without repeats and without the largest value. A value x falls
// in bin b, the number of cuts below x, so "bin <= b" is "x <= cuts[b]".
// It is the one definition of a histogram booster's cuts (boost.Cuts is
// it over a loaded column), so that a table binned where it lives is cut
// where the loaded table is.
func RankCuts(vals []float64, counts []int, bins int) []float64 {
	n := 0
	for _, c := range counts {
		n += c
	}
	f := newCutFold(n, bins)
	for i, x := range vals {
		f.add(x, counts[i])
	}
	return f.cuts()
}

// cutFold is RankCuts over a column's distinct values handed over in
// ascending order with their counts, n rows in all: its memory is the
// cuts' and at most bins+1 values, so that a database's ordered counts
// can be folded as they stream.
type cutFold struct {
	n, bins, k, below, d int
	first, cut           []float64 // the first bins+1 values; the rank cuts so far
	top                  float64
}

func newCutFold(n, bins int) *cutFold { return &cutFold{n: n, bins: bins, k: 1} }

// add takes the next value x, held by c rows.
func (f *cutFold) add(x float64, c int) {
	f.d++
	if f.d <= f.bins+1 {
		f.first = append(f.first, x)
	}
	for ; f.k < f.bins && f.rank(f.k) < f.below+c; f.k++ {
		f.pick(x)
	}
	f.below += c
	f.top = x
}

// rank is the k-th cut's rank, 0-based: ⌈k·n/bins⌉−1.
func (f *cutFold) rank(k int) int { return (k*f.n+f.bins-1)/f.bins - 1 }

// pick takes x, the value at the next cut's rank, unless it repeats the
// last one.
func (f *cutFold) pick(x float64) {
	if len(f.cut) == 0 || f.cut[len(f.cut)-1] != x {
		f.cut = append(f.cut, x)
	}
}

// cuts is the result: every value but the largest when there are at
// most bins, else the rank cuts without the largest value (only the last
// can be it: they ascend without repeats).
func (f *cutFold) cuts() []float64 {
	switch {
	case f.d == 0:
		return nil
	case f.d <= f.bins:
		return f.first[:f.d-1]
	case len(f.cut) > 0 && f.cut[len(f.cut)-1] == f.top:
		return f.cut[:len(f.cut)-1]
	}
	return f.cut
}

// OpenBinned groups the table Open(src, schema) would load by the values
// of keep and the bins of the numeric columns binned (bins each, cut by
// RankCuts over the table's rows), with how many rows each group holds.
// A database answers with one query per binned column for its cuts (its
// distinct values and their counts) and one for the groups, the bins
// computed by the server from the cuts (passed as parameters); a file is
// streamed once per step. Only keep and binned are selected; the schema's
// other columns appear only in the count of rows Open would refuse, which,
// when not zero, sends the call to the stream so that the error is
// Open's. src.MaxRows and opts.MaxBytes bound the groups kept, with
// Open's refusal. Groups come in the order of their kept texts and bins.
func OpenBinned(ctx context.Context, src Source, name string, schema map[string]Kind, keep, binned []string, bins int, opts ReadOptions) (*Binned, error) {
	desc := opts.describe(src)
	if schema == nil {
		return nil, fmt.Errorf("%w: %s: binned groups need a schema", ErrFormat, desc)
	}
	if bins < 1 {
		return nil, fmt.Errorf("%w: %s: binned groups need one or more bins", ErrFormat, desc)
	}
	sub := make(map[string]Kind, len(keep))
	for _, c := range append(slices.Clone(keep), binned...) {
		k, ok := schema[c]
		if !ok {
			return nil, fmt.Errorf("%w: %s: column %q is not in the schema", ErrNoColumn, desc, c)
		}
		if slices.Contains(keep, c) {
			sub[c] = k
		}
		if k != Numeric && slices.Contains(binned, c) {
			return nil, fmt.Errorf("%w: %s: binned column %q", ErrNotNumeric, desc, c)
		}
	}
	if len(keep)+len(binned) == 0 || len(slices.Compact(slices.Sorted(slices.Values(keep)))) != len(keep) || len(slices.Compact(slices.Sorted(slices.Values(binned)))) != len(binned) {
		return nil, ErrNoGroups
	}
	agg, err := NewAggregator(src, schema, opts)
	if err != nil {
		return nil, err
	}
	defer agg.Close()
	cuts, err := columnCuts(ctx, agg, binned, bins)
	if err != nil {
		return nil, err
	}
	f := &binFold{nkeep: len(keep), max: src.MaxRows, at: map[string]int{}}
	ok := false
	if sa, isSQL := agg.(*sqlAgg); isSQL {
		if ok, err = sa.binnedQuery(ctx, keep, binned, cuts, f); err != nil {
			return nil, err
		}
	}
	if !ok {
		f = &binFold{nkeep: len(keep), max: src.MaxRows, at: map[string]int{}}
		if err := streamBinned(ctx, src, schema, keep, binned, cuts, opts, f); err != nil {
			return nil, err
		}
	}
	if f.over {
		return nil, tooManyRows(desc)
	}
	return f.build(desc, name, keep, sub, binned, cuts, opts.maxBytes())
}

// columnCuts is each binned column's cuts: from a database, its values'
// ordered counts folded as they stream (cutsQuery); from a file, or where
// the database cannot answer, its distinct values and their counts
// (GroupCounts: one streamed pass for every column, memory the columns'
// distinct values).
func columnCuts(ctx context.Context, agg Aggregator, binned []string, bins int) ([][]float64, error) {
	cuts := make([][]float64, len(binned))
	var sets [][]string
	var at []int
	for j, c := range binned {
		if sa, ok := agg.(*sqlAgg); ok {
			cs, ok, err := sa.cutsQuery(ctx, c, bins)
			if err != nil {
				return nil, err
			}
			if ok {
				cuts[j] = cs
				continue
			}
		}
		sets, at = append(sets, []string{c}), append(at, j)
	}
	if len(sets) == 0 {
		return cuts, nil
	}
	_, groups, err := agg.GroupCounts(ctx, sets)
	if err != nil {
		return nil, err
	}
	for s, gs := range groups {
		j := at[s]
		type vc struct {
			x float64
			n int
		}
		hist := make([]vc, 0, len(gs))
		for _, g := range gs {
			x, err := parseNumber(g.Values[0]) // Open's Num of its Str
			if err != nil {
				return nil, fmt.Errorf("%w: binned column %q: %w", ErrNotNumeric, binned[j], err)
			}
			hist = append(hist, vc{x, g.Count})
		}
		slices.SortFunc(hist, func(a, b vc) int {
			switch {
			case a.x < b.x:
				return -1
			case a.x > b.x:
				return 1
			}
			return 0
		})
		var vals []float64
		var counts []int
		for _, h := range hist { // texts that read as one number are one value
			if len(vals) > 0 && vals[len(vals)-1] == h.x {
				counts[len(counts)-1] += h.n
				continue
			}
			vals, counts = append(vals, h.x), append(counts, h.n)
		}
		cuts[j] = RankCuts(vals, counts, bins)
	}
	return cuts, nil
}

// streamBinned folds the rows Open would load into f, binning each
// binned column's number in the node.
func streamBinned(ctx context.Context, src Source, schema map[string]Kind, keep, binned []string, cuts [][]float64, opts ReadOptions, f *binFold) error {
	cols := slices.Clone(keep) // a column both kept and binned is scanned once
	at := make([]int, len(binned))
	for j, c := range binned {
		at[j] = slices.Index(cols, c)
		if at[j] < 0 {
			at[j] = len(cols)
			cols = append(cols, c)
		}
	}
	bs := make([]int32, len(binned))
	return Scan(ctx, src, schema, cols, opts, func(vals []string, nums []float64) error {
		for j := range binned {
			bs[j] = int32(sort.SearchFloat64s(cuts[j], nums[at[j]]))
		}
		f.add(vals[:len(keep)], bs, 1)
		return nil
	})
}

// binFold keeps each group (kept texts and bins) once with its count;
// past max groups (0: no limit) it stops keeping them and says so.
type binFold struct {
	nkeep int
	max   int64
	at    map[string]int
	key   []byte
	vals  [][]string
	bins  [][]int32
	count []int
	over  bool
}

func (f *binFold) add(vals []string, bins []int32, n int) {
	f.key = groupKey(f.key[:0], vals)
	for _, b := range bins {
		f.key = binary.AppendUvarint(f.key, uint64(b))
	}
	if r, ok := f.at[string(f.key)]; ok {
		f.count[r] += n
		return
	}
	if f.over || (f.max > 0 && int64(len(f.count)) >= f.max) {
		f.over = true
		return
	}
	f.at[string(f.key)] = len(f.count)
	f.vals = append(f.vals, slices.Clone(vals))
	f.bins = append(f.bins, slices.Clone(bins))
	f.count = append(f.count, n)
}

// build checks the groups' kept values as Open checks rows (as text, so
// that their numbers are those Open parses) and returns them in order.
func (f *binFold) build(desc, name string, keep []string, sub map[string]Kind, binned []string, cuts [][]float64, maxBytes int64) (*Binned, error) {
	order := make([]int, len(f.count))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		for k := range f.nkeep {
			if c := strings.Compare(f.vals[a][k], f.vals[b][k]); c != 0 {
				return c
			}
		}
		return slices.Compare(f.bins[a], f.bins[b])
	})
	f.at = nil
	bd, err := newBuilderMax(desc, keep, sub, maxBytes)
	if err != nil {
		return nil, err
	}
	out := &Binned{Columns: slices.Clone(binned), Cuts: cuts, Bins: make([][]int32, len(binned))}
	row := make([]cell, len(keep))
	for _, r := range order {
		for k := range keep {
			row[k] = cell{text: f.vals[r][k]}
		}
		if err := bd.add(row, func(int) string { return fmt.Sprintf("%s: binned group %d", desc, len(out.Counts)+1) }); err != nil {
			return nil, err
		}
		for j := range binned {
			out.Bins[j] = append(out.Bins[j], f.bins[r][j])
		}
		out.Counts = append(out.Counts, f.count[r])
	}
	out.Table = bd.finish(name)
	return out, nil
}
