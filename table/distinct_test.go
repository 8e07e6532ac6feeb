package table

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// loadedDistinct is what OpenDistinct must give: the rows of the table
// Open loads, over cols, each once in the order of their texts, with
// their values (texts and numbers) as Open loaded them and how many rows
// hold each.
func loadedDistinct(src Source, schema map[string]Kind, cols []string) ([]string, error) {
	tb, err := Open(context.Background(), src, "t", schema, ReadOptions{})
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for r := range tb.NumRows() {
		var row []string
		for _, c := range cols {
			col, _ := tb.Column(c)
			v := col.Str[r]
			if col.Num != nil {
				v += fmt.Sprintf("=%v", col.Num[r])
			}
			row = append(row, v)
		}
		counts[strings.Join(row, "|")]++
	}
	var out []string
	for k, n := range counts {
		out = append(out, fmt.Sprintf("%s x%d", k, n))
	}
	slices.Sort(out)
	return out, nil
}

func distinctRows(d *Distinct, cols []string) []string {
	var out []string
	for r := range d.Table.NumRows() {
		var row []string
		for _, c := range cols {
			col, _ := d.Table.Column(c)
			v := col.Str[r]
			if col.Num != nil {
				v += fmt.Sprintf("=%v", col.Num[r])
			}
			row = append(row, v)
		}
		out = append(out, fmt.Sprintf("%s x%d", strings.Join(row, "|"), d.Counts[r]))
	}
	slices.Sort(out)
	return out
}

// TestOpenDistinctConformance: over every source type, the distinct rows
// and their counts are those of the table Open loads (values, numbers
// and kinds included), the errors are Open's, and MaxRows bounds the
// distinct rows, not the table's.
func TestOpenDistinctConformance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name   string
		schema map[string]Kind
		cols   []string
	}{
		{"ward and v", map[string]Kind{"ward": Categorical, "v": Numeric, "digits": Categorical}, []string{"v", "ward"}},
		{"texty", map[string]Kind{"v": Numeric, "digits": Numeric}, []string{"digits"}},
		{"all", map[string]Kind{"ward": Class, "v": Numeric, "digits": Key}, []string{"digits", "v", "ward"}},
	}
	for _, st := range aggStores(t) {
		t.Run(st.name, func(t *testing.T) {
			for _, rows := range []int{0, 1, 61} {
				src := st.put(t, aggTable(rows))
				for _, c := range cases {
					what := fmt.Sprintf("%d rows, %s", rows, c.name)
					want, werr := loadedDistinct(src, c.schema, c.cols)
					d, err := OpenDistinct(ctx, src, "t", c.schema, c.cols, ReadOptions{})
					sameErr(t, what, err, werr)
					if werr != nil {
						continue
					}
					if got := distinctRows(d, c.cols); fmt.Sprint(got) != fmt.Sprint(want) {
						t.Fatalf("%s: %v\nwant %v", what, got, want)
					}
					for _, col := range d.Table.Columns {
						if col.Kind != c.schema[col.Name] || len(d.Table.Columns) != len(c.cols) {
							t.Fatalf("%s: column %s of kind %q among %d", what, col.Name, col.Kind, len(d.Table.Columns))
						}
					}
					n := int64(len(want))
					if n < 2 { // max_rows 0 is no limit
						continue
					}
					bounded := src
					bounded.MaxRows = n
					if _, err := OpenDistinct(ctx, bounded, "t", c.schema, c.cols, ReadOptions{}); err != nil {
						t.Fatalf("%s: max_rows %d, the distinct rows: %v", what, n, err)
					}
					bounded.MaxRows = n - 1
					if _, err := OpenDistinct(ctx, bounded, "t", c.schema, c.cols, ReadOptions{}); !errors.Is(err, ErrTooLarge) {
						t.Fatalf("%s: max_rows below the distinct rows: %v, want ErrTooLarge", what, err)
					}
				}
			}
		})
	}
}

// TestOpenDistinctQueryNamesOnlyItsColumns: on a database the distinct
// rows are one GROUP BY whose select list and groups are the asked
// columns; a column the schema does not list (one the organisation keeps
// home) is named nowhere in the query, and a schema column outside cols
// (an id) only where Open's refusals are counted. A NULL in that id is
// still Open's error.
func TestOpenDistinctQueryNamesOnlyItsColumns(t *testing.T) {
	ctx := context.Background()
	schema := map[string]Kind{"k": Key, "a": Numeric, "cls": Class, "rid": ID}
	cols := []string{"a", "cls", "k"}
	check := func(t *testing.T, src, nulls Source) {
		var log bytes.Buffer
		opts := ReadOptions{Log: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))}
		d, err := OpenDistinct(ctx, src, "t", schema, cols, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(distinctRows(d, cols)); got != "[1=1|no|x x2 1=1|yes|x x1 2.5=2.5|no|y x1]" {
			t.Fatalf("distinct rows %s", got)
		}
		text := log.String()
		if strings.Count(text, `msg="table: query pushed down"`) != 1 || strings.Contains(text, "secret") {
			t.Fatalf("log %s", text)
		}
		m := regexp.MustCompile(`query="SELECT ((?:\\"\w+\\", )+)[^\\].* GROUP BY (.*?)"`).FindStringSubmatch(text)
		if m == nil || m[1] != `\"a\", \"cls\", \"k\", ` || strings.Contains(m[2], "rid") {
			t.Fatalf("the query selects or groups more than %v: %s", cols, text)
		}
		_, werr := Open(ctx, nulls, "t", schema, ReadOptions{})
		_, err = OpenDistinct(ctx, nulls, "t", schema, cols, ReadOptions{})
		if werr == nil {
			t.Fatal("Open accepts a NULL id")
		}
		sameErr(t, "a NULL id", err, werr)
	}
	rows := `('x', 1, 'no', 1, 's1'), ('x', 1, 'no', 2, 's2'), ('x', 1, 'yes', 3, 's3'), ('y', 2.5, 'no', 4, 's4')`
	t.Run("sqlite", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "d.db")
		// Groups the server keeps apart but Open reads alike are merged.
		sqliteExec(t, db, `CREATE TABLE ok (ward TEXT, v)`, `INSERT INTO ok VALUES ('a', 1), ('a ', 1.0), ('b', '1'), ('b', 2.5), ('b', 2.5)`)
		for _, max := range []int64{0, 2} {
			d, err := OpenDistinct(ctx, Source{SQLite: db, Table: "ok", MaxRows: max}, "t", map[string]Kind{"ward": Categorical, "v": Categorical}, []string{"v"}, ReadOptions{})
			if err != nil || fmt.Sprint(distinctRows(d, []string{"v"})) != "[1 x3 2.5 x2]" {
				t.Fatalf("max_rows %d: merged groups %v (%v)", max, d, err)
			}
		}
		sqliteExec(t, db, `CREATE TABLE t (k TEXT, a REAL, cls TEXT, rid INTEGER, secret TEXT)`, `INSERT INTO t VALUES `+rows,
			`CREATE TABLE n (k TEXT, a REAL, cls TEXT, rid INTEGER, secret TEXT)`, `INSERT INTO n VALUES ('x', 1, 'no', NULL, 's')`)
		check(t, Source{SQLite: db, Table: "t"}, Source{SQLite: db, Table: "n"})
	})
	t.Run("postgres", func(t *testing.T) {
		srv := pgShared.Start(t)
		t.Setenv("COHORT_TEST_PG", srv.ConnString(srv.Password))
		conn, err := pgConnect(ctx, Source{PostgresEnv: "COHORT_TEST_PG", Table: "x"}, "x")
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{`CREATE TABLE t (k text, a float8, cls text, rid int, secret text)`, `INSERT INTO t VALUES ` + rows,
			`CREATE TABLE n (k text, a float8, cls text, rid int, secret text)`, `INSERT INTO n VALUES ('x', 1, 'no', NULL, 's')`} {
			if _, err := conn.Exec(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		pgClose(ctx, conn)
		check(t, Source{PostgresEnv: "COHORT_TEST_PG", Table: "t"}, Source{PostgresEnv: "COHORT_TEST_PG", Table: "n"})
	})
}

// TestPostgresErrorQuotesNothing: a server error whose message quotes the
// data (a value that does not parse as a number) reaches the caller by
// its SQLSTATE and first words only, not the value.
func TestPostgresErrorQuotesNothing(t *testing.T) {
	ctx := t.Context()
	srv := pgShared.Start(t)
	t.Setenv("COHORT_TEST_PG_EX", srv.ConnString(srv.Password))
	conn, err := pgConnect(ctx, Source{PostgresEnv: "COHORT_TEST_PG_EX", Table: "x"}, "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE words (word text); INSERT INTO words VALUES ('s3cr3tvalue')`); err != nil {
		t.Fatal(err)
	}
	pgClose(ctx, conn)
	_, err = Open(ctx, Source{PostgresEnv: "COHORT_TEST_PG_EX", Query: "SELECT word::float8 AS v FROM words"}, "t", map[string]Kind{"v": Numeric}, ReadOptions{})
	if err == nil || strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "SQLSTATE 22P02") {
		t.Fatalf("a value that does not parse: %v", err)
	}
}
