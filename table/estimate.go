package table

import (
	"container/heap"
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
)

// DistinctEstimate is a cheap estimate of a table's size and of how many
// distinct rows it has over some columns (EstimateDistinct): enough for a
// kind to choose between loading the rows and loading the distinct rows
// (OpenDistinct), not an answer any result depends on.
type DistinctEstimate struct {
	// Rows is the table's row count: the server's statistics' estimate,
	// or counted.
	Rows float64
	// Distinct estimates the distinct combinations of the columns' values.
	Distinct float64
	// How names the method: "statistics" (PostgreSQL's pg_class and
	// pg_stats after ANALYZE: the product of each column's distinct
	// count, an upper bound), "hash sample" (PostgreSQL: the distinct
	// combinations whose hash falls in 1/64 of the hash space, counted
	// exactly, times 64), "uniq" (ClickHouse's uniq), "sketch" (a stream:
	// the k smallest hashes of the combinations).
	How string
}

// EstimateDistinct estimates, without keeping the table, how many rows
// the table Open(src, schema) would load has and how many distinct rows
// over cols (which must be in the schema). PostgreSQL answers from its
// statistics when the source is a table ANALYZE has seen (no scan), else
// with one scan that counts the distinct combinations of a fixed 1/64 of
// the hash space (distinct sampling, Gibbons, "Distinct sampling for
// highly-accurate answers to distinct values queries and event reports",
// VLDB 2001, §3); ClickHouse with one count() and uniq(); SQLite, CSV and
// Parquet are streamed once through a sketch of the kSketch smallest
// hashes (Bar-Yossef et al., "Counting distinct elements in a data
// stream", RANDOM 2002, §3), in memory bounded by kSketch. The same
// table gives the same estimate: every hash has a fixed seed.
//
// It reads only cols (and, for statistics, the table's catalogue rows):
// the rows Open would refuse are not looked for, so an estimate does not
// say the table loads.
func EstimateDistinct(ctx context.Context, src Source, schema map[string]Kind, cols []string, opts ReadOptions) (DistinctEstimate, error) {
	desc := opts.describe(src)
	if schema == nil {
		return DistinctEstimate{}, fmt.Errorf("%w: %s: distinct rows need a schema", ErrFormat, desc)
	}
	for _, c := range cols {
		if _, ok := schema[c]; !ok {
			return DistinctEstimate{}, fmt.Errorf("%w: %s: column %q is not in the schema", ErrNoColumn, desc, c)
		}
	}
	if err := checkSets([][]string{cols}); err != nil {
		return DistinctEstimate{}, err
	}
	agg, err := NewAggregator(src, schema, opts)
	if err != nil {
		return DistinctEstimate{}, err
	}
	defer agg.Close()
	if a, ok := agg.(*sqlAgg); ok {
		if e, ok := a.db.(distinctEstimator); ok {
			return e.estimateDistinct(ctx, a, cols)
		}
		return a.streamAgg.sketch(ctx, cols)
	}
	return agg.(*streamAgg).sketch(ctx, cols)
}

// distinctEstimator is a dialect that estimates distinct rows itself.
type distinctEstimator interface {
	estimateDistinct(ctx context.Context, a *sqlAgg, cols []string) (DistinctEstimate, error)
}

// sketch streams the table once into a kmvFold over cols.
func (a *streamAgg) sketch(ctx context.Context, cols []string) (DistinctEstimate, error) {
	f := newKMVFold(kSketch)
	if err := a.foldGroups(ctx, [][]string{cols}, []folder{f}); err != nil {
		return DistinctEstimate{}, err
	}
	return DistinctEstimate{Rows: float64(f.rows), Distinct: f.estimate(), How: "sketch"}, nil
}

// kSketch is how many hashes a sketch keeps: its relative error is about
// 1/√kSketch (3%), far below what a choice between two ways of loading
// needs, in 8 KiB of hashes and their set.
const kSketch = 1024

// kmvFold keeps the k smallest distinct hashes of the combinations it is
// given (a max-heap, and a set of what the heap holds) and counts rows.
type kmvFold struct {
	k    int
	h    maxHeap
	in   map[uint64]struct{}
	rows int64
	key  []byte
}

func newKMVFold(k int) *kmvFold { return &kmvFold{k: k, in: map[uint64]struct{}{}} }

func (f *kmvFold) add(vals []string, n int) {
	f.rows += int64(n)
	f.key = groupKey(f.key[:0], vals)
	h := fnv.New64a()
	h.Write(f.key)
	x := mix64(h.Sum64())
	if _, ok := f.in[x]; ok {
		return
	}
	if len(f.h) < f.k {
		heap.Push(&f.h, x)
		f.in[x] = struct{}{}
		return
	}
	if x >= f.h[0] {
		return
	}
	delete(f.in, f.h[0])
	f.h[0] = x
	heap.Fix(&f.h, 0)
	f.in[x] = struct{}{}
}

// estimate is the count itself below k hashes, else (k-1)/u_k, u_k the
// k-th smallest hash as a fraction of the hash space.
func (f *kmvFold) estimate() float64 {
	if len(f.h) < f.k {
		return float64(len(f.h))
	}
	return float64(f.k-1) / (float64(f.h[0]) / math.Exp2(64))
}

// mix64 is splitmix64's finaliser: FNV's output spread evenly over the
// 64 bits, which the k-th smallest hash needs.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

type maxHeap []uint64

func (h maxHeap) Len() int           { return len(h) }
func (h maxHeap) Less(i, j int) bool { return h[i] > h[j] }
func (h maxHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *maxHeap) Push(x any)        { *h = append(*h, x.(uint64)) }
func (h *maxHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// hashSample is the fraction of the hash space PostgreSQL's scan counts
// distinct combinations in: 1/64.
const hashSample = 64

// estimateDistinct: from the statistics ANALYZE left for a table (no
// scan), else one scan counting the distinct combinations whose hash
// falls in 1/hashSample of the space. Every value is a parameter or a
// quoted column of the schema.
func (pgDB) estimateDistinct(ctx context.Context, a *sqlAgg, cols []string) (DistinctEstimate, error) {
	desc := a.opts.describe(a.src)
	conn, err := a.conn(ctx, desc)
	if err != nil {
		return DistinctEstimate{}, err
	}
	defer a.release(ctx, conn)
	if a.src.Table != "" {
		if e, ok, err := pgStatistics(ctx, conn, a, cols); err != nil || ok {
			return e, err
		}
	}
	from, _ := a.from()
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = quoteIdent(c)
	}
	row := "ROW(" + strings.Join(quoted, ", ") + ")::text"
	q := fmt.Sprintf("SELECT COUNT(*)::float8, (COUNT(DISTINCT %s) FILTER (WHERE hashtext(%s) & %d = 0))::float8 FROM %s",
		row, row, hashSample-1, from)
	if a.opts.Log != nil {
		a.opts.Log.DebugContext(ctx, "table: query pushed down", "source", desc, "query", q)
	}
	var rows, sampled float64
	if err := conn.row(ctx, q, nil, []*float64{&rows, &sampled}); err != nil {
		return DistinctEstimate{}, err
	}
	return DistinctEstimate{Rows: rows, Distinct: min(sampled*hashSample, rows), How: "hash sample"}, nil
}

// pgStatistics is the table's row count (pg_class.reltuples) and the
// product of its columns' distinct counts (pg_stats.n_distinct, negative
// for a fraction of the rows), capped at the rows; ok is false when
// ANALYZE has not seen the table or one of the columns.
func pgStatistics(ctx context.Context, conn sqlConn, a *sqlAgg, cols []string) (DistinctEstimate, bool, error) {
	list := []string{"COALESCE(MAX(c.reltuples), -1)::float8"}
	args := []any{quoteTable(a.src.Table)}
	for _, c := range cols {
		args = append(args, c)
		list = append(list, fmt.Sprintf(`COALESCE(MAX(CASE WHEN s.n_distinct < 0 THEN -s.n_distinct * c.reltuples ELSE s.n_distinct END)
			FILTER (WHERE s.attname = $%d), -1)::float8`, len(args)))
	}
	q := "SELECT " + strings.Join(list, ", ") + ` FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_stats s ON s.schemaname = n.nspname AND s.tablename = c.relname AND NOT s.inherited
		WHERE c.oid = to_regclass($1)`
	if a.opts.Log != nil {
		a.opts.Log.DebugContext(ctx, "table: query pushed down", "source", a.opts.describe(a.src), "query", q)
	}
	out := make([]float64, len(list))
	dest := make([]*float64, len(out))
	for i := range out {
		dest[i] = &out[i]
	}
	if err := conn.row(ctx, q, args, dest); err != nil {
		return DistinctEstimate{}, false, err
	}
	rows := out[0]
	if rows <= 0 {
		return DistinctEstimate{}, false, nil // never analysed (-1), or empty by its statistics
	}
	d := 1.0
	for _, n := range out[1:] {
		if n <= 0 {
			return DistinctEstimate{}, false, nil
		}
		d = min(d*n, rows)
	}
	return DistinctEstimate{Rows: rows, Distinct: d, How: "statistics"}, true, nil
}

// estimateDistinct: one count() and uniq() (an adaptive sample of the
// hashes, deterministic) over the columns, computed by the server or, for
// a Distributed table, by its shards.
func (chDB) estimateDistinct(ctx context.Context, a *sqlAgg, cols []string) (DistinctEstimate, error) {
	desc := a.opts.describe(a.src)
	conn, err := a.conn(ctx, desc)
	if err != nil {
		return DistinctEstimate{}, err
	}
	defer a.release(ctx, conn)
	from, _ := a.from()
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = quoteIdent(c)
	}
	q := "SELECT toFloat64(count()), toFloat64(uniq(" + strings.Join(quoted, ", ") + ")) FROM " + from
	if a.opts.Log != nil {
		a.opts.Log.DebugContext(ctx, "table: query pushed down", "source", desc, "query", q)
	}
	var rows, distinct float64
	if err := conn.row(ctx, q, nil, []*float64{&rows, &distinct}); err != nil {
		return DistinctEstimate{}, err
	}
	return DistinctEstimate{Rows: rows, Distinct: min(distinct, rows), How: "uniq"}, nil
}
