package table

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// estimateTables writes two CSV tables of n rows: "rep", whose rows repeat
// (k of 20 values, c of 10, the class a function of k: 200 distinct rows
// over k, c, cls), and "dist", whose every row is distinct over them. Both
// have a column "secret" the schema leaves out.
func estimateTables(t *testing.T, dir string, n int) map[string]*Table {
	t.Helper()
	out := map[string]*Table{}
	for _, name := range []string{"rep", "dist"} {
		var b strings.Builder
		b.WriteString("k,c,cls,secret\n")
		for i := range n {
			k, c := i%20, (i/20)%10
			if name == "dist" {
				k, c = i%97, i
			}
			fmt.Fprintf(&b, "k%d,%d,%v,s%d\n", k, c, k < 10, i*7919%1000)
		}
		path := filepath.Join(dir, name+".csv")
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		tb, err := Load(path, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = tb
	}
	return out
}

var estimateSchema = map[string]Kind{"k": Key, "c": Numeric, "cls": Class}
var estimateCols = []string{"cls", "c", "k"}

// checkEstimate holds an estimate of both tables to what a choice between
// rows and distinct rows needs: the row count, within 1%, and the repeated
// table's distinct rows at most a tenth of its rows, the distinct table's
// at least half, and the method; the debug log's queries name no column
// outside cols.
func checkEstimate(t *testing.T, how string, n int, src func(name string) Source) {
	t.Helper()
	for _, name := range []string{"rep", "dist"} {
		var log bytes.Buffer
		opts := ReadOptions{Log: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))}
		e, err := EstimateDistinct(context.Background(), src(name), estimateSchema, estimateCols, opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if e.How != how || e.Rows < 0.99*float64(n) || e.Rows > 1.01*float64(n) {
			t.Fatalf("%s: %+v, want %d rows by %s", name, e, n, how)
		}
		if name == "rep" && e.Distinct > float64(n)/10 || name == "dist" && e.Distinct < float64(n)/2 {
			t.Fatalf("%s: %+v: the estimate does not tell repeated rows from distinct ones", name, e)
		}
		if strings.Contains(log.String(), "secret") {
			t.Fatalf("%s: a query names a column outside the estimate's:\n%s", name, log.String())
		}
		again, err := EstimateDistinct(context.Background(), src(name), estimateSchema, estimateCols, ReadOptions{})
		if err != nil || again != e {
			t.Fatalf("%s: %+v then %+v (%v): the same table gives another estimate", name, e, again, err)
		}
	}
}

// TestEstimateDistinct: every source type estimates a repeated and a
// distinct table well enough to choose (checkEstimate); a sketch's
// estimate is the exact count below kSketch distinct rows.
func TestEstimateDistinct(t *testing.T) {
	const n = 20000
	dir := t.TempDir()
	tables := estimateTables(t, dir, n)
	ctx := context.Background()
	t.Run("csv", func(t *testing.T) {
		checkEstimate(t, "sketch", n, func(name string) Source { return Source{Path: filepath.Join(dir, name+".csv")} })
		e, err := EstimateDistinct(ctx, Source{Path: filepath.Join(dir, "rep.csv")}, estimateSchema, estimateCols, ReadOptions{})
		if err != nil || e.Distinct != 200 {
			t.Fatalf("%+v (%v), want the exact 200 distinct rows", e, err)
		}
	})
	t.Run("parquet", func(t *testing.T) {
		for name, tb := range tables {
			if err := Write(ctx, Source{Path: filepath.Join(dir, name+".parquet")}, tb); err != nil {
				t.Fatal(err)
			}
		}
		checkEstimate(t, "sketch", n, func(name string) Source { return Source{Path: filepath.Join(dir, name+".parquet")} })
	})
	t.Run("sqlite", func(t *testing.T) {
		db := filepath.Join(dir, "e.db")
		for name, tb := range tables {
			if err := Write(ctx, Source{SQLite: db, Table: name}, tb); err != nil {
				t.Fatal(err)
			}
		}
		checkEstimate(t, "sketch", n, func(name string) Source { return Source{SQLite: db, Table: name} })
	})
	t.Run("postgres", func(t *testing.T) {
		srv := pgShared.Start(t)
		t.Setenv("COHORT_TEST_PG", srv.ConnString(srv.Password))
		for name, tb := range tables {
			if err := Write(ctx, Source{PostgresEnv: "COHORT_TEST_PG", Table: name}, tb); err != nil {
				t.Fatal(err)
			}
		}
		// A query has no statistics: the hash sample answers.
		checkEstimate(t, "hash sample", n, func(name string) Source {
			return Source{PostgresEnv: "COHORT_TEST_PG", Query: "SELECT k, c, cls FROM " + name}
		})
		conn, err := pgConnect(ctx, Source{PostgresEnv: "COHORT_TEST_PG", Table: "x"}, "x")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, "ANALYZE rep; ANALYZE dist"); err != nil {
			t.Fatal(err)
		}
		pgClose(ctx, conn)
		checkEstimate(t, "statistics", n, func(name string) Source { return Source{PostgresEnv: "COHORT_TEST_PG", Table: name} })
	})
	t.Run("clickhouse", func(t *testing.T) {
		srv := chShared.Start(t)
		t.Setenv("COHORT_TEST_CH", srv.DSN("admin", srv.AdminPassword))
		// The tables as estimateTables writes them (Write sends one INSERT
		// too long for a server's default max_query_size at this size).
		srv.Exec(t,
			"CREATE TABLE rep (k String, c Float64, cls String, secret String) ENGINE = MergeTree ORDER BY tuple()",
			fmt.Sprintf("INSERT INTO rep SELECT concat('k', toString(number %% 20)), toFloat64(intDiv(number, 20) %% 10), if(number %% 20 < 10, 'true', 'false'), 's' FROM system.numbers LIMIT %d", n),
			"CREATE TABLE dist AS rep",
			fmt.Sprintf("INSERT INTO dist SELECT concat('k', toString(number %% 97)), toFloat64(number), if(number %% 97 < 10, 'true', 'false'), 's' FROM system.numbers LIMIT %d", n))
		checkEstimate(t, "uniq", n, func(name string) Source { return Source{ClickHouseEnv: "COHORT_TEST_CH", Table: name} })
	})
}

// TestEstimateDistinctRefuses: a column outside the schema, no schema,
// and no columns are refused before the source is read.
func TestEstimateDistinctRefuses(t *testing.T) {
	src := Source{Path: filepath.Join(t.TempDir(), "missing.csv")}
	ctx := context.Background()
	if _, err := EstimateDistinct(ctx, src, estimateSchema, []string{"secret"}, ReadOptions{}); err == nil || !strings.Contains(err.Error(), `"secret"`) {
		t.Fatalf("a column outside the schema: %v", err)
	}
	if _, err := EstimateDistinct(ctx, src, nil, estimateCols, ReadOptions{}); err == nil {
		t.Fatal("no schema is accepted")
	}
	if _, err := EstimateDistinct(ctx, src, estimateSchema, nil, ReadOptions{}); err == nil {
		t.Fatal("no columns are accepted")
	}
}
