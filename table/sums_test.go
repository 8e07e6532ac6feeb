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

// TestColumnSumsConformance: over every source type, ColumnSums of a list
// of columns is ColumnSum of each (the fold over the column Open loads),
// from one query or pass, with clamps finite or open on a side; its error
// is the first column's in order, Open's first.
func TestColumnSumsConformance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schemas := map[string]map[string]Kind{
		"schema":   {"ward": Categorical, "v": Numeric},
		"texty":    {"v": Numeric, "digits": Numeric},
		"inferred": nil,
	}
	lists := [][]string{{"v"}, {"v", "digits"}, {"digits", "v", "v"}, {"v", "nope", "ward"}, {"ward", "v"}, {}}
	clamps := []*[2]float64{nil, {-1, 2.5}, {0, math.Inf(1)}, {math.Inf(-1), 0.5}}
	eachAggregator(t, schemas, func(t *testing.T, src Source, rows int, sname string, schema map[string]Kind, agg Aggregator) {
		ref := &loaded{src: src, schema: schema}
		for _, cols := range lists {
			for _, cl := range clamps {
				what := fmt.Sprintf("%d rows, %s, columns %v, clamp %v", rows, sname, cols, cl)
				var want []float64
				var werr error
				wrows := rows
				for _, col := range cols {
					s, n, _, err := ref.folds(col, cl, nil)
					if err != nil {
						werr = err
						break
					}
					want, wrows = append(want, s), n
				}
				if len(cols) == 0 {
					_, werr = ref.open()
				}
				sums, n, err := agg.ColumnSums(ctx, cols, cl)
				sameErr(t, what, err, werr)
				if werr == nil && (!slices.Equal(sums, want) && len(want) > 0 || len(sums) != len(cols) || n != wrows) {
					t.Fatalf("%s: sums %v over %d rows, want %v over %d", what, sums, n, want, wrows)
				}
			}
		}
	})
}

// TestColumnSumsPushesDown: a clean database table answers ColumnSums
// with one query (in the log at debug level), a bound of +Inf written
// nowhere, and Σ max(x, 0) exact.
func TestColumnSumsPushesDown(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "s.db")
	sqliteExec(t, db, `CREATE TABLE ok (id TEXT, a REAL, b INTEGER)`,
		`INSERT INTO ok VALUES ('r1', 1.5, -2), ('r2', -0.25, 3), ('r3', 4, 0)`)
	srcs := map[string]Source{"sqlite": {SQLite: db, Table: "ok"}}
	if srv := pgShared.Try(t); srv != nil {
		t.Setenv("COHORT_TEST_PG", srv.ConnString(srv.Password))
		conn, err := pgConnect(ctx, Source{PostgresEnv: "COHORT_TEST_PG", Table: "x"}, "x")
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{`CREATE TABLE sums_ok (id text, a float8, b bigint, secret text)`,
			`INSERT INTO sums_ok VALUES ('r1', 1.5, -2, 'x'), ('r2', -0.25, 3, 'y'), ('r3', 4, 0, 'z')`} {
			if _, err := conn.Exec(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		pgClose(ctx, conn)
		srcs["postgres"] = Source{PostgresEnv: "COHORT_TEST_PG", Table: "sums_ok"}
	}
	schema := map[string]Kind{"id": ID, "a": Numeric, "b": Numeric}
	for name, src := range srcs {
		var log bytes.Buffer
		agg, err := NewAggregator(src, schema, ReadOptions{Log: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { agg.Close() })
		pos := &[2]float64{0, math.Inf(1)}
		rows, vals, ok, err := agg.(*sqlAgg).aggregateColumns(ctx, []string{"a", "b"}, func(col string, next func(float64) string) []string {
			return []string{agg.(*sqlAgg).db.sum(agg.(*sqlAgg).clamped(col, pos, next))}
		})
		if err != nil || !ok || rows != 3 || fmt.Sprint(vals) != "[5.5 3]" {
			t.Fatalf("%s: pushed down: %d rows, %v, ok %v, %v; want 3 rows, [5.5 3]", name, rows, vals, ok, err)
		}
		sums, n, err := agg.ColumnSums(ctx, []string{"a", "b"}, pos)
		if err != nil || n != 3 || fmt.Sprint(sums) != "[5.5 3]" {
			t.Fatalf("%s: ColumnSums %v over %d, %v", name, sums, n, err)
		}
		q := log.String()
		if strings.Count(q, `msg="table: query pushed down"`) != 2 || strings.Contains(q, "+Inf") || strings.Contains(q, "secret") {
			t.Fatalf("%s: log %s", name, q)
		}
	}
}
