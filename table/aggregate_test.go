package table

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// aggStore makes a source of one type holding a table.
type aggStore struct {
	name string
	put  func(t *testing.T, tb *Table) Source
}

// aggStores are the five source types, each writing through Write; the
// PostgreSQL and ClickHouse ones are left out (or fail, with
// COHORT_REQUIRE_POSTGRES=1 or COHORT_REQUIRE_CLICKHOUSE=1) without a
// server.
func aggStores(t *testing.T) []aggStore {
	dir := t.TempDir()
	n := 0
	file := func(ext string) func(*testing.T, *Table) Source {
		return func(t *testing.T, tb *Table) Source {
			n++
			src := Source{Path: filepath.Join(dir, fmt.Sprintf("t%d%s", n, ext))}
			if err := Write(context.Background(), src, tb); err != nil {
				t.Fatal(err)
			}
			return src
		}
	}
	stores := []aggStore{{"csv", file(".csv")}, {"parquet", file(".parquet")}, {"sqlite", func(t *testing.T, tb *Table) Source {
		n++
		src := Source{SQLite: filepath.Join(dir, "t.db"), Table: fmt.Sprintf("t%d", n)}
		if err := Write(context.Background(), src, tb); err != nil {
			t.Fatal(err)
		}
		return src
	}}}
	if srv := pgShared.Try(t); srv != nil {
		env := dsnEnv(t, srv.ConnString(srv.Password))
		stores = append(stores, aggStore{"postgres", func(t *testing.T, tb *Table) Source {
			n++
			src := Source{PostgresEnv: env, Table: fmt.Sprintf("t%d", n)}
			if err := Write(context.Background(), src, tb); err != nil {
				t.Fatal(err)
			}
			return src
		}})
	}
	if srv := chShared.Try(t); srv != nil {
		env := dsnEnv(t, srv.DSN("admin", srv.AdminPassword))
		stores = append(stores, aggStore{"clickhouse", func(t *testing.T, tb *Table) Source {
			n++
			src := Source{ClickHouseEnv: env, Table: fmt.Sprintf("t%d", n)}
			if err := Write(context.Background(), src, tb); err != nil {
				t.Fatal(err)
			}
			return src
		}})
	}
	return stores
}

// aggTable has a categorical column, a numeric one of quarters (sums are
// exact in any order) and a column of numbers stored as text.
func aggTable(rows int) *Table {
	ward := &Column{Name: "ward", Kind: Categorical}
	v := &Column{Name: "v", Kind: Numeric}
	digits := &Column{Name: "digits", Kind: Categorical}
	for i := range rows {
		ward.Str = append(ward.Str, []string{"cardio", "neuro", "onco"}[i%3])
		x := float64(i%17-5) / 4
		v.Num, v.Str = append(v.Num, x), append(v.Str, fmt.Sprint(x))
		digits.Str = append(digits.Str, fmt.Sprint(i%7))
	}
	return &Table{Name: "t", Columns: []*Column{ward, v, digits}}
}

// loadedFolds is what the aggregates must equal: folds over the column
// Open loads, or Open's error.
func loadedFolds(src Source, schema map[string]Kind, col string, clamp *[2]float64, ths []float64) (sum float64, rows int, counts []int, err error) {
	return (&loaded{src: src, schema: schema}).folds(col, clamp, ths)
}

// loaded is loadedFolds over one table and schema, opened once: the
// conformance suites fold it over many columns and clamps, and an Open
// of a database table is a connection.
type loaded struct {
	src    Source
	schema map[string]Kind
	tb     *Table
	err    error
	opened bool
}

// open is Open's table or error, from the first call on.
func (l *loaded) open() (*Table, error) {
	if !l.opened {
		l.tb, l.err = Open(context.Background(), l.src, "t", l.schema, ReadOptions{})
		l.opened = true
	}
	return l.tb, l.err
}

// folds is loadedFolds over the table open loaded.
func (l *loaded) folds(col string, clamp *[2]float64, ths []float64) (sum float64, rows int, counts []int, err error) {
	tb, err := l.open()
	if err != nil {
		return 0, 0, nil, err
	}
	c, err := tb.Column(col)
	if err != nil {
		return 0, 0, nil, ErrNoColumn
	}
	if c.Num == nil && tb.NumRows() > 0 {
		return 0, 0, nil, ErrNotNumeric
	}
	counts = make([]int, len(ths))
	for _, x := range c.Num {
		for i, th := range ths {
			if x <= th {
				counts[i]++
			}
		}
		if clamp != nil {
			x = min(max(x, clamp[0]), clamp[1])
		}
		sum += x
	}
	return sum, tb.NumRows(), counts, nil
}

// sameErr: both nil, or the same sentinel for the column errors, or the
// same text for Open's own errors.
func sameErr(t *testing.T, what string, got, want error) {
	t.Helper()
	switch {
	case want == nil && got == nil:
	case want == nil || got == nil:
		t.Fatalf("%s: error %v, want %v", what, got, want)
	case errors.Is(want, ErrNoColumn) || errors.Is(want, ErrNotNumeric):
		if !errors.Is(got, want) {
			t.Fatalf("%s: error %v, want %v", what, got, want)
		}
	case got.Error() != want.Error():
		t.Fatalf("%s: error\n  %v\nwant Open's\n  %v", what, got, want)
	}
}

// eachAggregator is the conformance suites' one loop: on every source
// type, for the tables of 0, 1 and 61 rows (aggTable) under each schema,
// check gets the table's source and its Aggregator.
func eachAggregator(t *testing.T, schemas map[string]map[string]Kind, check func(t *testing.T, src Source, rows int, sname string, schema map[string]Kind, agg Aggregator)) {
	for _, st := range aggStores(t) {
		t.Run(st.name, func(t *testing.T) {
			for _, rows := range []int{0, 1, 61} {
				src := st.put(t, aggTable(rows))
				for sname, schema := range schemas {
					agg, err := NewAggregator(src, schema, ReadOptions{})
					if err != nil {
						t.Fatal(err)
					}
					check(t, src, rows, sname, schema, agg)
					agg.Close()
				}
			}
		})
	}
}

// TestAggregatorConformance runs one suite over every source type: each
// aggregate equals the fold over the table Open loads, with its errors.
func TestAggregatorConformance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ths := []float64{2, -5, 0.5, 100, 2, -1.25}
	clamp := &[2]float64{-1, 2.5}
	schemas := map[string]map[string]Kind{
		"schema":     {"ward": Categorical, "v": Numeric},
		"texty":      {"v": Numeric, "digits": Numeric},
		"categories": {"ward": Categorical, "digits": Categorical},
		"inferred":   nil,
	}
	eachAggregator(t, schemas, func(t *testing.T, src Source, rows int, sname string, schema map[string]Kind, agg Aggregator) {
		ref := &loaded{src: src, schema: schema}
		for _, col := range []string{"v", "ward", "digits", "nope"} {
			for _, cl := range []*[2]float64{nil, clamp} {
				what := fmt.Sprintf("%d rows, %s, column %s, clamp %v", rows, sname, col, cl)
				wsum, wrows, wcounts, werr := ref.folds(col, cl, ths)
				sum, n, err := agg.ColumnSum(ctx, col, cl)
				sameErr(t, what+": sum", err, werr)
				if werr == nil && (sum != wsum || n != wrows) {
					t.Fatalf("%s: sum %v over %d rows, want %v over %d", what, sum, n, wsum, wrows)
				}
				total, counts, err := agg.CountsAtMost(ctx, col, ths)
				sameErr(t, what+": counts", err, werr)
				if werr == nil && (total != wrows || fmt.Sprint(counts) != fmt.Sprint(wcounts)) {
					t.Fatalf("%s: counts %d %v, want %d %v", what, total, counts, wrows, wcounts)
				}
			}
		}
	})
}

// TestAggregatorPushesDown checks that a clean database table is answered
// by the pushed-down query, not by streaming its rows, and that rows Open
// refuses (NULL anywhere it reads, NaN or infinity in a numeric column)
// send the aggregate to the stream, which refuses them as Open does.
func TestAggregatorPushesDown(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	sqliteExec(t, db,
		`CREATE TABLE ok (ward TEXT, v REAL)`, `INSERT INTO ok VALUES ('a', 1.5), ('b', -2), ('c', 4)`,
		`CREATE TABLE nullward (ward TEXT, v REAL)`, `INSERT INTO nullward VALUES ('a', 1), (NULL, 2)`,
		`CREATE TABLE inf (ward TEXT, v REAL)`, `INSERT INTO inf VALUES ('a', 1), ('b', 9e999)`,
		`CREATE TABLE words (ward TEXT, v)`, `INSERT INTO words VALUES ('a', 1), ('b', 'x')`)
	srcs := map[string]func(table string) Source{"sqlite": func(tb string) Source { return Source{SQLite: db, Table: tb} }}
	if srv := pgShared.Try(t); srv != nil {
		t.Setenv("COHORT_TEST_PG", srv.ConnString(srv.Password))
		conn, err := pgConnect(ctx, Source{PostgresEnv: "COHORT_TEST_PG", Table: "x"}, "x")
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{
			`CREATE TABLE ok (ward text, v double precision)`, `INSERT INTO ok VALUES ('a', 1.5), ('b', -2), ('c', 4)`,
			`CREATE TABLE nullward (ward text, v bigint)`, `INSERT INTO nullward VALUES ('a', 1), (NULL, 2)`,
			`CREATE TABLE inf (ward text, v numeric)`, `INSERT INTO inf VALUES ('a', 1), ('b', 'NaN')`,
			`CREATE TABLE words (ward text, v real)`, `INSERT INTO words VALUES ('a', 1), ('b', '-Infinity')`,
		} {
			if _, err := conn.Exec(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		pgClose(ctx, conn)
		srcs["postgres"] = func(tb string) Source { return Source{PostgresEnv: "COHORT_TEST_PG", Table: tb} }
	}
	schema := map[string]Kind{"ward": Categorical, "v": Numeric}
	for name, src := range srcs {
		agg, err := NewAggregator(src("ok"), schema, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rows, vals, ok, err := agg.(*sqlAgg).aggregate(ctx, "v", func(col string, next func(float64) string) []string {
			return []string{agg.(*sqlAgg).db.sum(agg.(*sqlAgg).db.clamp(col, next(-1), next(3)))}
		})
		if err != nil || !ok || rows != 3 || vals[0] != 3.5 {
			t.Fatalf("%s: pushed down: %d rows, %v, ok %v, %v; want 3 rows, sum 3.5", name, rows, vals, ok, err)
		}
		agg.Close()
		for _, bad := range []string{"nullward", "inf", "words"} {
			agg, err := NewAggregator(src(bad), schema, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_, _, ok, err := agg.(*sqlAgg).aggregate(ctx, "v", func(string, func(float64) string) []string { return nil })
			if ok || err != nil {
				t.Fatalf("%s %s: pushed down (ok %v, %v), want the stream", name, bad, ok, err)
			}
			_, _, _, werr := loadedFolds(src(bad), schema, "v", nil, nil)
			_, _, err = agg.ColumnSum(ctx, "v", nil)
			if werr == nil {
				t.Fatalf("%s %s: Open accepts it", name, bad)
			}
			sameErr(t, name+" "+bad, err, werr)
			agg.Close()
		}
	}
}

// TestCheckIsOpensVerdict: Check fails exactly when Open does, with its
// error, over every source type.
func TestCheckIsOpensVerdict(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, st := range aggStores(t) {
		src := st.put(t, aggTable(20))
		for _, schema := range []map[string]Kind{nil, {"v": Numeric}, {"digits": Numeric}, {"v": Numeric, "absent": Categorical}} {
			_, werr := Open(ctx, src, "t", schema, ReadOptions{})
			err := Check(ctx, src, schema, ReadOptions{})
			if (werr == nil) != (err == nil) || werr != nil && werr.Error() != err.Error() {
				t.Fatalf("%s %v: Check %v, Open %v", st.name, schema, err, werr)
			}
		}
	}
}

// writeOptionalParquet writes columns a (optional text), v (optional
// double) and w (required double) with the given rows; nil is NULL.
func writeOptionalParquet(t *testing.T, path string, rows [][3]any) {
	t.Helper()
	schema := parquet.NewSchema("t", parquet.Group{
		"a": parquet.Optional(parquet.String()),
		"v": parquet.Optional(parquet.Leaf(parquet.DoubleType)),
		"w": parquet.Leaf(parquet.DoubleType),
	})
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pw := parquet.NewGenericWriter[any](f, schema)
	for _, r := range rows {
		row := make(parquet.Row, 3)
		for j, x := range r {
			switch x := x.(type) {
			case nil:
				row[j] = parquet.NullValue().Level(0, 0, j)
			case string:
				row[j] = parquet.ByteArrayValue([]byte(x)).Level(0, 1, j)
			case float64:
				row[j] = parquet.DoubleValue(x).Level(0, 1, j)
				if j == 2 {
					row[j] = parquet.DoubleValue(x).Level(0, 0, j)
				}
			}
		}
		if _, err := pw.WriteRows([]parquet.Row{row}); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
}

// A Parquet aggregate reads only the asked column's pages when no other
// column it loads can fail the row check (required, not floating point
// when numeric), and otherwise every row: either way its sum and errors
// are Open's, NULL and NaN in the asked column or another included.
func TestParquetAggregateProjects(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	nan := math.NaN()
	cases := map[string][][3]any{
		"clean":      {{"x", 1.5, 2.0}, {"y", -4.0, 3.0}, {"z", 0.25, nan}},
		"null v":     {{"x", 1.5, 2.0}, {"y", nil, 3.0}},
		"null a":     {{"x", 1.5, 2.0}, {nil, 2.0, 3.0}},
		"nan v":      {{"x", nan, 2.0}},
		"nan w only": {{"x", 1.0, nan}},
	}
	schemas := []map[string]Kind{{"v": Numeric}, {"v": Numeric, "w": Categorical}, {"a": Categorical, "v": Numeric}, {"v": Numeric, "w": Numeric}, nil}
	for name, rows := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".parquet")
		writeOptionalParquet(t, path, rows)
		for _, schema := range schemas {
			src := Source{Path: path}
			wsum, wrows, _, werr := loadedFolds(src, schema, "v", nil, nil)
			agg, err := NewAggregator(src, schema, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sum, n, err := agg.ColumnSum(ctx, "v", nil)
			sameErr(t, fmt.Sprintf("%s %v", name, schema), err, werr)
			if werr == nil && (sum != wsum || n != wrows) {
				t.Fatalf("%s %v: %v over %d rows, want %v over %d", name, schema, sum, n, wsum, wrows)
			}
			// Group counts read their sets' columns alike.
			for _, sets := range [][][]string{{{"v"}}, {{"a", "v"}, {"a"}}, {{"w"}, {"v", "w"}}} {
				grows, wgroups, gerr := loadedGroups(src, schema, sets)
				n, groups, err := agg.GroupCounts(ctx, sets)
				sameErr(t, fmt.Sprintf("%s %v %v", name, schema, sets), err, gerr)
				if gerr == nil && (n != grows || fmt.Sprint(groups) != fmt.Sprint(wgroups)) {
					t.Fatalf("%s %v %v: %d %v, want %d %v", name, schema, sets, n, groups, grows, wgroups)
				}
			}
			agg.Close()
		}
	}
	// The clean file with v alone, or with w as text, is read by column.
	f, err := os.Open(filepath.Join(dir, "clean.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for schema, want := range map[*map[string]Kind]bool{
		{"v": Numeric}: true, {"v": Numeric, "w": Categorical}: true, {"a": Categorical, "v": Numeric}: false, {"v": Numeric, "w": Numeric}: false,
	} {
		_, fields, b, err := parquetHeader(f, "clean", *schema, ReadOptions{sink: newColSink([]string{"v"}, []func(float64){func(float64) {}})})
		if err != nil {
			t.Fatal(err)
		}
		if got := b.projectable(fields); got != want {
			t.Errorf("%v: projectable %v, want %v", *schema, got, want)
		}
	}
	// A group sink projects when it reads every loaded column that could
	// fail, and not when one of its columns is missing.
	for sets, want := range map[*[][]string]bool{
		{{"a", "v"}, {"w"}}: true, {{"a"}, {"w"}}: false, {{"a", "v"}, {"nope"}}: false,
	} {
		_, fields, b, err := parquetHeader(f, "clean", map[string]Kind{"a": Categorical, "v": Numeric, "w": Numeric}, ReadOptions{sink: newGroupSink(*sets, groupFolds(len(*sets)))})
		if err != nil {
			t.Fatal(err)
		}
		if got := b.projectable(fields); got != want {
			t.Errorf("%v: projectable %v, want %v", *sets, got, want)
		}
	}
}
