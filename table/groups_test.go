package table

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// loadedGroups is what GroupCounts must equal: the combinations of the
// sets' columns over the table Open loads, counted row by row.
func loadedGroups(src Source, schema map[string]Kind, sets [][]string) (int, [][]Group, error) {
	tb, err := Open(context.Background(), src, "t", schema, ReadOptions{})
	if err != nil {
		return 0, nil, err
	}
	out := make([][]Group, len(sets))
	for i, set := range sets {
		counts := map[string]*Group{}
		for r := range tb.NumRows() {
			var vals []string
			for _, c := range set {
				col, err := tb.Column(c)
				if err != nil {
					return 0, nil, ErrNoColumn
				}
				vals = append(vals, col.Str[r])
			}
			k := strings.Join(vals, "\x00")
			if counts[k] == nil {
				counts[k] = &Group{Values: vals}
			}
			counts[k].Count++
		}
		for _, c := range set {
			if _, err := tb.Column(c); err != nil {
				return 0, nil, ErrNoColumn
			}
		}
		for _, g := range counts {
			out[i] = append(out[i], *g)
		}
		slices.SortFunc(out[i], func(a, b Group) int { return slices.Compare(a.Values, b.Values) })
		if out[i] == nil {
			out[i] = []Group{}
		}
	}
	return tb.NumRows(), out, nil
}

// TestGroupCountsConformance: over every source type, with every schema
// of the aggregates' suite, each set's combinations and counts are those
// of the table Open loads, and the errors are Open's.
func TestGroupCountsConformance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	schemas := map[string]map[string]Kind{
		"schema":     {"ward": Categorical, "v": Numeric},
		"texty":      {"v": Numeric, "digits": Numeric},
		"categories": {"ward": Categorical, "digits": Categorical},
		"inferred":   nil,
	}
	sets := [][][]string{
		{{"ward"}, {"v"}, {"digits"}, {"ward", "v"}, {"v", "ward", "digits"}},
		{{"digits", "v"}},
		{{"ward"}, {"nope"}},
	}
	eachAggregator(t, schemas, func(t *testing.T, src Source, rows int, sname string, schema map[string]Kind, agg Aggregator) {
		for _, ss := range sets {
			what := fmt.Sprintf("%d rows, %s, sets %v", rows, sname, ss)
			wrows, wgroups, werr := loadedGroups(src, schema, ss)
			n, groups, err := agg.GroupCounts(ctx, ss)
			sameErr(t, what, err, werr)
			if werr == nil && (n != wrows || fmt.Sprint(groups) != fmt.Sprint(wgroups)) {
				t.Fatalf("%s: %d rows %v, want %d %v", what, n, groups, wrows, wgroups)
			}
		}
		// Columns fails where Open fails on the header (a database's
		// rows are the aggregates' to check).
		cols, err := agg.Columns(ctx)
		if tb, werr := Open(ctx, src, "t", schema, ReadOptions{}); werr == nil {
			if err != nil || fmt.Sprint(cols) != fmt.Sprint(columnNames(tb.Columns)) {
				t.Fatalf("%d rows, %s: columns %v (%v), Open's %v", rows, sname, cols, err, columnNames(tb.Columns))
			}
		}
	})
}

// TestGroupCountsPushDown: a clean database table is grouped by its
// server, values it holds equal but Open reads apart staying apart and
// texts Open reads alike merged; a row Open refuses sends the call to the
// stream, which refuses it as Open does.
func TestGroupCountsPushDown(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "g.db")
	sqliteExec(t, db,
		`CREATE TABLE ok (ward TEXT, v)`, `INSERT INTO ok VALUES ('a', 1), ('a ', 1.0), ('b', '1'), ('b', 2.5), ('b', 2.5)`,
		`CREATE TABLE nulls (ward TEXT, v REAL)`, `INSERT INTO nulls VALUES ('a', 1), (NULL, 2)`)
	for _, schema := range []map[string]Kind{nil, {"ward": Categorical, "v": Categorical}} {
		var log bytes.Buffer
		agg, err := NewAggregator(Source{SQLite: db, Table: "ok"}, schema,
			ReadOptions{Log: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { agg.Close() })
		sets := [][]string{{"ward", "v"}, {"v"}}
		out, ok, err := agg.(*sqlAgg).groupCounts(ctx, sets)
		if err != nil || !ok {
			t.Fatalf("%v: pushed down: ok %v, %v", schema, ok, err)
		}
		_, want, err := loadedGroups(Source{SQLite: db, Table: "ok"}, schema, sets)
		if err != nil || fmt.Sprint(out) != fmt.Sprint(want) {
			t.Fatalf("%v: %v, want %v (%v)", schema, out, want, err)
		}
		if fmt.Sprint(want[1]) != "[{[1] 3} {[2.5] 2}]" {
			t.Fatalf("%v: v's groups %v", schema, want[1])
		}
		// Each set's query is in the node's own log, at debug level.
		if n := strings.Count(log.String(), `level=DEBUG msg="table: query pushed down"`); n != 2 ||
			!strings.Contains(log.String(), `GROUP BY \"ward\", typeof(\"ward\"), \"v\", typeof(\"v\")`) {
			t.Fatalf("%v: log %s", schema, log.String())
		}
	}
	if srv := pgShared.Try(t); srv != nil {
		t.Setenv("COHORT_TEST_PG", srv.ConnString(srv.Password))
		conn, err := pgConnect(ctx, Source{PostgresEnv: "COHORT_TEST_PG", Table: "x"}, "x")
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{`CREATE TABLE pk (ward char(3), v numeric, b boolean, f float8)`,
			`INSERT INTO pk VALUES ('a', 1.5, true, 0), ('a', 1.50, true, '-0'), ('a', 2, false, 0)`} {
			if _, err := conn.Exec(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		pgClose(ctx, conn)
		src := Source{PostgresEnv: "COHORT_TEST_PG", Table: "pk"}
		agg, err := NewAggregator(src, nil, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { agg.Close() })
		sets := [][]string{{"ward", "v"}, {"v"}, {"b"}, {"f"}}
		out, ok, err := agg.(*sqlAgg).groupCounts(ctx, sets)
		if err != nil || !ok {
			t.Fatalf("postgres: pushed down: ok %v, %v", ok, err)
		}
		_, want, err := loadedGroups(src, nil, sets)
		if err != nil || fmt.Sprint(out) != fmt.Sprint(want) {
			t.Fatalf("postgres: %v, want %v (%v)", out, want, err)
		}
		if fmt.Sprint(want[1:]) != "[[{[1.5] 1} {[1.50] 1} {[2] 1}] [{[f] 1} {[t] 2}] [{[-0] 1} {[0] 2}]]" {
			t.Fatalf("postgres: groups %v", want)
		}
	}
	agg, err := NewAggregator(Source{SQLite: db, Table: "nulls"}, nil, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agg.Close() })
	if _, ok, err := agg.(*sqlAgg).groupCounts(ctx, [][]string{{"v"}}); ok || err != nil {
		t.Fatalf("nulls: pushed down (ok %v, %v), want the stream", ok, err)
	}
	_, _, werr := loadedGroups(Source{SQLite: db, Table: "nulls"}, nil, [][]string{{"v"}})
	_, _, err = agg.GroupCounts(ctx, [][]string{{"v"}})
	if werr == nil {
		t.Fatal("Open accepts a NULL")
	}
	sameErr(t, "nulls", err, werr)
	if _, _, err := agg.GroupCounts(ctx, [][]string{{"v"}, {}}); err != ErrNoGroups {
		t.Fatalf("an empty set: %v", err)
	}
}
