package table

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// binnedQuery pushes OpenBinned's groups down as one query:
//
//	SELECT <keep>, <bin of each binned column>, COUNT(*), <rows Open refuses>
//	FROM ... GROUP BY <keep and their texts>, <the bins>
//
// where a column's bin is the number of its cuts below the value, each
// cut a parameter (CASE WHEN value > cut THEN 1 ELSE 0 END, summed). The
// kept columns are grouped by value and text as GroupCounts groups them;
// the comparisons are the server's of the value Open converts, as
// CountsAtMost's are. ok is false when the stream must answer: a row
// Open would refuse, a column missing or a binned column not stored as
// numbers.
func (a *sqlAgg) binnedQuery(ctx context.Context, keep, binned []string, cuts [][]float64, f *binFold) (ok bool, err error) {
	desc := a.opts.describe(a.src)
	from, _ := a.from()
	conn, err := a.conn(ctx, desc)
	if err != nil {
		return false, err
	}
	defer a.release(ctx, conn)
	h, err := a.loadedColumns(ctx, conn, desc)
	if err != nil {
		return false, err
	}
	loaded, bad := h.names, h.refused
	for j, c := range h.b.cols {
		if slices.Contains(binned, c.Name) && !h.numeric[h.b.idx[j]] {
			return false, nil
		}
	}
	for _, c := range append(slices.Clone(keep), binned...) {
		if !slices.Contains(loaded, c) {
			return false, nil // the stream gives Open's error, else ErrNoColumn
		}
	}
	var args []any
	bin := func(j int) string { return a.binExpr(quoteIdent(binned[j]), cuts[j], &args) }
	var sel, by []string
	for _, c := range keep {
		q := quoteIdent(c)
		sel = append(sel, q)
		by = append(by, q, a.db.text(q))
	}
	for j := range binned {
		sel = append(sel, bin(j))
	}
	for j := range binned {
		if len(cuts[j]) > 0 {
			by = append(by, bin(j))
		}
	}
	q := "SELECT " + strings.Join(append(sel, a.db.countIf("1 = 1"), a.db.countIf(strings.Join(bad, " OR "))), ", ") + " FROM " + from
	if len(by) > 0 {
		q += " GROUP BY " + strings.Join(by, ", ")
	}
	if a.opts.Log != nil {
		a.opts.Log.DebugContext(ctx, "table: query pushed down", "source", desc, "query", q, "args", args)
	}
	nk, nb := len(keep), len(binned)
	refused := false
	vals, bins := make([]string, nk), make([]int32, nb)
	err = conn.scan(ctx, q, func(row []cell) error {
		var errs []error
		num := func(v cell) int {
			x, err := cellNumber(v)
			errs = append(errs, err)
			return int(x)
		}
		for j := range bins {
			bins[j] = int32(num(row[nk+j]))
		}
		n, m := num(row[nk+nb]), num(row[nk+nb+1])
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("%w: %s: a count: %w", ErrSource, desc, err)
		}
		if m > 0 {
			refused = true
		}
		if n == 0 { // an empty table's one row without GROUP BY
			return nil
		}
		for k := range keep {
			vals[k] = cellText(row[k])
		}
		f.add(vals, bins, n)
		return nil
	}, args...)
	if err != nil {
		return false, err
	}
	return !refused, nil // a refused row: the stream says which
}

// cutsQuery is one binned column's cuts, picked by the server so that
// only they travel, after aggregate's count n of the rows and of those
// Open would refuse: the column's first bins+1 distinct values
//
//	SELECT <value> FROM ... GROUP BY <value> ORDER BY <value> LIMIT bins+1
//
// and, when there are more, the values at the cuts' ranks and the
// largest (the dialect's valuesAtRanks), folded as cutFold folds them.
// ok is false when the stream must answer (a refused row, a column not
// stored as numbers).
func (a *sqlAgg) cutsQuery(ctx context.Context, column string, bins int) (cuts []float64, ok bool, err error) {
	n, _, ok, err := a.aggregate(ctx, column, func(string, func(float64) string) []string { return nil })
	if err != nil || !ok {
		return nil, ok, err
	}
	desc := a.opts.describe(a.src)
	from, _ := a.from()
	conn, err := a.conn(ctx, desc)
	if err != nil {
		return nil, false, err
	}
	defer a.release(ctx, conn)
	v := a.db.value(quoteIdent(column))
	f := newCutFold(n, bins)
	q := "SELECT " + v + " FROM " + from + " GROUP BY " + v + " ORDER BY " + v + fmt.Sprintf(" LIMIT %d", bins+1)
	if a.opts.Log != nil {
		a.opts.Log.DebugContext(ctx, "table: query pushed down", "source", desc, "query", q)
	}
	err = conn.scan(ctx, q, func(row []cell) error {
		x, err := cellNumber(row[0])
		if err != nil {
			return fmt.Errorf("%w: %s: a value: %w", ErrSource, desc, err)
		}
		if f.d > 0 && f.first[f.d-1] == x {
			return nil // values the server keeps apart that read as one number
		}
		f.d++
		f.first = append(f.first, x)
		return nil
	})
	if err != nil || f.d <= bins {
		return f.cuts(), err == nil, err
	}
	ranks := make([]int, 0, bins)
	for k := 1; k < bins; k++ {
		ranks = append(ranks, f.rank(k))
	}
	var args []any
	pq := a.db.valuesAtRanks(v, from, append(ranks, n-1), n, &args)
	if a.opts.Log != nil {
		a.opts.Log.DebugContext(ctx, "table: query pushed down", "source", desc, "query", pq, "args", args)
	}
	var picked []float64
	err = conn.scan(ctx, pq, func(row []cell) error {
		x, err := cellNumber(row[0])
		if err != nil {
			return fmt.Errorf("%w: %s: a value at a rank: %w", ErrSource, desc, err)
		}
		picked = append(picked, x)
		return nil
	}, args...)
	if err != nil {
		return nil, false, err
	}
	if len(picked) != bins {
		return nil, false, fmt.Errorf("%w: %s: %d values for %d cuts", ErrSource, desc, len(picked), bins-1)
	}
	for _, x := range picked[:bins-1] {
		f.pick(x)
	}
	f.top = picked[bins-1]
	return f.cuts(), true, nil
}

// valuesAtRanks on PostgreSQL: percentile_disc(f) is the value at 1-based
// rank ⌈f·n⌉, computed in floating point: k/bins itself can land above an
// integer (7/12 of 108 rows is rank 64 to PostgreSQL 15, where ⌈7·108/12⌉
// is 63), so each fraction is (r + 1/2)/n for the 0-based rank r wanted,
// whose rounding is far from an integer.
func (d pgDB) valuesAtRanks(v, from string, ranks []int, n int, args *[]any) string {
	fracs := make([]string, len(ranks))
	for i, r := range ranks {
		*args = append(*args, (float64(r)+0.5)/float64(n))
		fracs[i] = d.param(len(*args), 0)
	}
	return "SELECT unnest(percentile_disc(ARRAY[" + strings.Join(fracs, ", ") + "]) WITHIN GROUP (ORDER BY " + v + ")) FROM " + from
}

// valuesAtRanks on ClickHouse: quantileExact(f) is the value at 0-based
// index ⌊f·n⌋ of the sorted column (the largest at f = 1), so each
// fraction is (r + 1/2)/n, as on PostgreSQL. An aggregate's parameters
// are literals: the fractions are the job's own numbers, written exactly.
func (chDB) valuesAtRanks(v, from string, ranks []int, n int, _ *[]any) string {
	fracs := make([]string, len(ranks))
	for i, r := range ranks {
		f := 1.0
		if r < n-1 {
			f = (float64(r) + 0.5) / float64(n)
		}
		fracs[i] = strconv.FormatFloat(f, 'g', -1, 64)
	}
	return "SELECT arrayJoin(quantilesExact(" + strings.Join(fracs, ", ") + ")(" + v + ")) FROM " + from
}

// valuesAtRanks on SQLite: the rows numbered in the column's order, those
// at the ranks kept, in rank order.
func (d sqliteDB) valuesAtRanks(v, from string, ranks []int, _ int, args *[]any) string {
	ps := make([]string, len(ranks))
	for i, r := range ranks {
		*args = append(*args, r)
		ps[i] = d.param(len(*args), 0)
	}
	return "SELECT v FROM (SELECT " + v + " AS v, ROW_NUMBER() OVER (ORDER BY " + v + ") - 1 AS r FROM " + from +
		") WHERE r IN (" + strings.Join(ps, ", ") + ") ORDER BY r"
}

// binExpr is column col's bin under cuts, the number of cuts below its
// value, each cut a parameter appended to args: on PostgreSQL pgBin's
// one width_bucket, elsewhere a sum of one CASE per cut.
func (a *sqlAgg) binExpr(col string, cuts []float64, args *[]any) string {
	param := func(c float64) string {
		*args = append(*args, c)
		return a.db.param(len(*args), c)
	}
	switch _, pg := a.db.(pgDB); {
	case len(cuts) == 0:
		return "0"
	case pg:
		return pgBin(col, cuts, param)
	}
	v := a.db.value(col)
	terms := make([]string, len(cuts))
	for k, c := range cuts {
		terms[k] = "CASE WHEN " + v + " > " + param(c) + " THEN 1 ELSE 0 END"
	}
	return "(" + strings.Join(terms, " + ") + ")"
}

// pgBin is a column's bin on PostgreSQL: the number of cuts below the
// value as m − width_bucket(−value, the cuts negated in ascending order),
// width_bucket counting the thresholds at most its operand, so the cuts
// at least the value (negation is exact). One binary search per row: the
// sum of a CASE per cut made the server's grouping of 1,000,000 rows by 31
// cuts take 5.9 s, this 1.3 s (docs/sources.md). The value is compared as
// a double, as Open reads it.
func pgBin(col string, cuts []float64, param func(float64) string) string {
	neg := make([]string, len(cuts))
	for i := range cuts {
		neg[i] = param(-cuts[len(cuts)-1-i])
	}
	return fmt.Sprintf("(%d - width_bucket(-(%s::float8), ARRAY[%s]))", len(cuts), col, strings.Join(neg, ", "))
}
