package table

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// loadedKeyCounts is what DistinctCounts must equal: over the table Open
// loads, the distinct keys and each by value's distinct keys.
func loadedKeyCounts(src Source, schema map[string]Kind, key, by string) (int, []Group, error) {
	tb, err := Open(context.Background(), src, "t", schema, ReadOptions{})
	if err != nil {
		return 0, nil, err
	}
	kc, err1 := tb.Column(key)
	bc, err2 := tb.Column(by)
	if err1 != nil || err2 != nil {
		return 0, nil, ErrNoColumn
	}
	keys := map[string]bool{}
	pairs := map[[2]string]bool{}
	counts := map[string]int{}
	for r := range tb.NumRows() {
		keys[kc.Str[r]] = true
		if p := [2]string{kc.Str[r], bc.Str[r]}; !pairs[p] {
			pairs[p] = true
			counts[bc.Str[r]]++
		}
	}
	out := []Group{}
	for v, n := range counts {
		out = append(out, Group{Values: []string{v}, Count: n})
	}
	slices.SortFunc(out, func(a, b Group) int { return strings.Compare(a.Values[0], b.Values[0]) })
	return len(keys), out, nil
}

// pairsTable is a tid,item table of rows pairs: transactions of up to
// four items, each pair repeated now and then; with apart, a
// transaction's rows are spread over the table.
func pairsTable(rows int, apart bool) *Table {
	tid := &Column{Name: "tid", Kind: Categorical}
	item := &Column{Name: "item", Kind: Categorical}
	w := &Column{Name: "w", Kind: Numeric}
	for i := range rows {
		t := i / 4
		if apart {
			t = i % 7
		}
		tid.Str = append(tid.Str, fmt.Sprintf("T%d", t))
		item.Str = append(item.Str, fmt.Sprint((i*5)%11%6))
		w.Num, w.Str = append(w.Num, float64(i)), append(w.Str, fmt.Sprint(i))
	}
	return &Table{Name: "t", Columns: []*Column{tid, item, w}}
}

// TestDistinctCountsConformance: over every source type, DistinctCounts
// is the count over the table Open loads, each repeated pair once, with
// a transaction's rows adjacent or apart, and Open's errors.
func TestDistinctCountsConformance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schemas := map[string]map[string]Kind{
		"pairs":    {"tid": Categorical, "item": Categorical},
		"numeric":  {"tid": Categorical, "item": Numeric, "w": Numeric},
		"inferred": nil,
	}
	for _, st := range aggStores(t) {
		t.Run(st.name, func(t *testing.T) {
			for _, rows := range []int{0, 1, 61} {
				for _, apart := range []bool{false, true} {
					src := st.put(t, pairsTable(rows, apart))
					for sname, schema := range schemas {
						agg, err := NewAggregator(src, schema, ReadOptions{})
						if err != nil {
							t.Fatal(err)
						}
						t.Cleanup(func() { agg.Close() })
						for _, kb := range [][2]string{{"tid", "item"}, {"item", "tid"}, {"tid", "nope"}, {"w", "item"}} {
							what := fmt.Sprintf("%d rows, apart %v, %s, %v", rows, apart, sname, kb)
							wn, wg, werr := loadedKeyCounts(src, schema, kb[0], kb[1])
							n, g, err := agg.DistinctCounts(ctx, kb[0], kb[1])
							sameErr(t, what, err, werr)
							if werr == nil && (n != wn || fmt.Sprint(g) != fmt.Sprint(wg)) {
								t.Fatalf("%s: %d keys %v, want %d %v", what, n, g, wn, wg)
							}
						}
					}
				}
			}
		})
	}
}

// TestDistinctCountsPushDown: a clean SQLite or PostgreSQL table is
// counted by the server (two queries in the log at debug level, naming
// no column but the two and those whose NULLs Open refuses); values the
// server would tell apart otherwise than Open's texts (spaces Open trims,
// SQLite's 1 and '1', floats) send the count to the stream, which
// matches the loaded table.
func TestDistinctCountsPushDown(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "d.db")
	sqliteExec(t, db,
		`CREATE TABLE ok (tid INTEGER, item TEXT)`, `INSERT INTO ok VALUES (1, 'a'), (1, 'b'), (1, 'a'), (2, 'a'), (3, ''), (2, 'c')`,
		`CREATE TABLE spaces (tid TEXT, item TEXT)`, `INSERT INTO spaces VALUES ('x', 'a'), ('x ', 'a'), ('y', 'a')`,
		`CREATE TABLE mixed (tid, item TEXT)`, `INSERT INTO mixed VALUES (1, 'a'), ('1', 'a'), (2, 'a')`,
		`CREATE TABLE reals (tid REAL, item TEXT)`, `INSERT INTO reals VALUES (1.5, 'a'), (2, 'a')`,
		`CREATE TABLE nbsp (tid TEXT, item TEXT)`, "INSERT INTO nbsp VALUES ('y', 'a'), ('y\u00a0', 'a'), ('z', 'a\u00a0')")
	srcs := map[string]func(string) Source{"sqlite": func(tb string) Source { return Source{SQLite: db, Table: tb} }}
	if srv := pgShared.Try(t); srv != nil {
		t.Setenv("COHORT_TEST_PG", srv.ConnString(srv.Password))
		conn, err := pgConnect(ctx, Source{PostgresEnv: "COHORT_TEST_PG", Table: "x"}, "x")
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{
			`CREATE TABLE dc_ok (tid bigint, item text, secret text)`, `INSERT INTO dc_ok VALUES (1, 'a', 's'), (1, 'b', 's'), (1, 'a', 's'), (2, 'a', 's'), (3, '', 's'), (2, 'c', 's')`,
			`CREATE TABLE dc_spaces (tid text, item text)`, `INSERT INTO dc_spaces VALUES ('x', 'a'), ('x ', 'a'), ('y', 'a')`,
			`CREATE TABLE dc_mixed (tid numeric, item text)`, `INSERT INTO dc_mixed VALUES (1.5, 'a'), (1.50, 'a'), (2, 'a')`,
			`CREATE TABLE dc_reals (tid float8, item text)`, `INSERT INTO dc_reals VALUES (0, 'a'), ('-0', 'a')`,
			`CREATE TABLE dc_nbsp (tid text, item text)`, "INSERT INTO dc_nbsp VALUES ('y', 'a'), ('y\u00a0', 'a'), ('z', 'a\u00a0')",
		} {
			if _, err := conn.Exec(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		pgClose(ctx, conn)
		srcs["postgres"] = func(tb string) Source { return Source{PostgresEnv: "COHORT_TEST_PG", Table: "dc_" + tb} }
	}
	schema := map[string]Kind{"tid": Categorical, "item": Categorical}
	for name, src := range srcs {
		var log bytes.Buffer
		agg, err := NewAggregator(src("ok"), schema, ReadOptions{Log: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { agg.Close() })
		n, g, ok, err := agg.(*sqlAgg).distinctQueries(ctx, "tid", "item")
		if err != nil || !ok || n != 3 || fmt.Sprint(g) != "[{[] 1} {[a] 2} {[b] 1} {[c] 1}]" {
			t.Fatalf("%s: pushed down: %d %v, ok %v, %v", name, n, g, ok, err)
		}
		if q := log.String(); strings.Count(q, `level=DEBUG msg="table: query pushed down"`) != 2 || strings.Contains(q, "secret") ||
			!strings.Contains(q, `GROUP BY \"item\"`) {
			t.Fatalf("%s: log %s", name, q)
		}
		for _, tb := range []string{"spaces", "mixed", "reals", "nbsp"} {
			agg, err := NewAggregator(src(tb), schema, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { agg.Close() })
			if _, _, ok, err := agg.(*sqlAgg).distinctQueries(ctx, "tid", "item"); ok || err != nil {
				t.Fatalf("%s %s: pushed down (ok %v, %v), want the stream", name, tb, ok, err)
			}
			wn, wg, werr := loadedKeyCounts(src(tb), schema, "tid", "item")
			n, g, err := agg.DistinctCounts(ctx, "tid", "item")
			if werr != nil || err != nil || n != wn || fmt.Sprint(g) != fmt.Sprint(wg) {
				t.Fatalf("%s %s: %d %v (%v), want %d %v (%v)", name, tb, n, g, err, wn, wg, werr)
			}
		}
	}
}

// TestClickHouseCountsPushDown: ClickHouse answers ColumnSums (clamped
// to [0, +∞)) and DistinctCounts of a clean table with its queries, equal
// to what the load gives.
func TestClickHouseCountsPushDown(t *testing.T) {
	srv := chShared.Try(t)
	if srv == nil {
		return
	}
	ctx := context.Background()
	t.Setenv("COHORT_TEST_CH", srv.DSN("admin", srv.AdminPassword))
	src := Source{ClickHouseEnv: "COHORT_TEST_CH", Table: "counts_pushdown"}
	if err := Write(ctx, src, pairsTable(61, true)); err != nil {
		t.Fatal(err)
	}
	schema := map[string]Kind{"tid": Categorical, "item": Categorical, "w": Numeric}
	agg, err := NewAggregator(src, schema, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agg.Close() })
	n, g, ok, err := agg.(*sqlAgg).distinctQueries(ctx, "tid", "item")
	wn, wg, werr := loadedKeyCounts(src, schema, "tid", "item")
	if err != nil || werr != nil || !ok || n != wn || fmt.Sprint(g) != fmt.Sprint(wg) {
		t.Fatalf("pushed down: %d %v, ok %v, %v; loaded %d %v (%v)", n, g, ok, err, wn, wg, werr)
	}
	pos := &[2]float64{0, math.Inf(1)}
	rows, vals, ok, err := agg.(*sqlAgg).aggregateColumns(ctx, []string{"w", "w"}, func(col string, next func(float64) string) []string {
		return []string{agg.(*sqlAgg).db.sum(agg.(*sqlAgg).clamped(col, pos, next))}
	})
	if err != nil || !ok || rows != 61 || fmt.Sprint(vals) != "[1830 1830]" {
		t.Fatalf("sums pushed down: %d rows, %v, ok %v, %v", rows, vals, ok, err)
	}
}
