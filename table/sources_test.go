package table

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// exampleTables are the bundled example tables with their schemas.
var exampleTables = []struct {
	path   string
	schema map[string]Kind
}{
	{"../examples/sum/data/north.csv", map[string]Kind{"ward": Categorical, "v": Numeric}},
	{"../examples/sum/data/south.csv", map[string]Kind{"ward": Categorical, "v": Numeric}},
	{"../examples/sum/data/west.csv", map[string]Kind{"ward": Categorical, "v": Numeric}},
	{"../examples/quantile/data/north.csv", map[string]Kind{"ward": Categorical, "stay": Numeric}},
	{"../examples/quantile/data/south.csv", map[string]Kind{"ward": Categorical, "stay": Numeric}},
	{"../examples/quantile/data/west.csv", map[string]Kind{"ward": Categorical, "stay": Numeric}},
}

// sameTable compares two loads of one table column by column.
func sameTable(t *testing.T, what string, want, got *Table) {
	t.Helper()
	if got.NumRows() != want.NumRows() {
		t.Fatalf("%s: %d rows, want %d", what, got.NumRows(), want.NumRows())
	}
	for _, wc := range want.Columns {
		gc, err := got.Column(wc.Name)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		// A typed store keeps numbers, not their spelling ("2.0" comes
		// back as "2"), so numeric columns compare by value.
		sameStr := wc.Kind == Numeric || slices.Equal(gc.Str, wc.Str)
		if gc.Kind != wc.Kind || !slices.Equal(gc.Num, wc.Num) || !sameStr {
			t.Fatalf("%s: column %s = %s %v %q, want %s %v %q", what, wc.Name, gc.Kind, gc.Num, gc.Str, wc.Kind, wc.Num, wc.Str)
		}
	}
}

// roundTrip writes every example table to dst(i) and reads it back.
func roundTrip(t *testing.T, dst func(i int) Source) {
	ctx := context.Background()
	for i, ex := range exampleTables {
		want, err := Open(ctx, Source{Path: ex.path}, "t", ex.schema, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		src := dst(i)
		if err := Write(ctx, src, want); err != nil {
			t.Fatalf("write %s: %v", src, err)
		}
		if err := Write(ctx, src, want); !errors.Is(err, ErrExists) {
			t.Fatalf("second write to %s: %v, want ErrExists", src, err)
		}
		got, err := Open(ctx, src, "t", ex.schema, ReadOptions{BatchRows: 2})
		if err != nil {
			t.Fatalf("read %s: %v", src, err)
		}
		sameTable(t, src.String(), want, got)
	}
}

func TestRoundTripFiles(t *testing.T) {
	dir := t.TempDir()
	for _, ext := range []string{".csv", ".parquet"} {
		t.Run(ext, func(t *testing.T) {
			roundTrip(t, func(i int) Source { return Source{Path: filepath.Join(dir, "t"+string(rune('0'+i))+ext)} })
		})
	}
	t.Run("sqlite", func(t *testing.T) {
		db := filepath.Join(dir, "x.db") // one database, a table per example
		roundTrip(t, func(i int) Source { return Source{SQLite: db, Table: "t" + string(rune('0'+i))} })
	})
}

func TestRoundTripPostgres(t *testing.T) {
	srv := pgShared.Start(t)
	t.Setenv("COHORT_TEST_PG", srv.ConnString(srv.Password))
	roundTrip(t, func(i int) Source { return Source{PostgresEnv: "COHORT_TEST_PG", Table: "t" + string(rune('0'+i))} })
}

func mustErr(t *testing.T, err error, target error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v", want)
	}
	if target != nil && !errors.Is(err, target) {
		t.Fatalf("error %v is not %v", err, target)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %q does not mention %q", err, w)
		}
	}
}

func sqliteExec(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", sqliteDSN(path, false))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func TestSQLiteBadInput(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	sqliteExec(t, db,
		`CREATE TABLE ok (ward TEXT, v REAL, secret TEXT)`,
		`INSERT INTO ok VALUES ('a', 1, 's1'), ('b', 2.5, 's2')`,
		`CREATE TABLE texty (ward TEXT, v TEXT)`,
		`INSERT INTO texty VALUES ('a', '1')`,
		`CREATE TABLE nully (ward TEXT, v REAL)`,
		`INSERT INTO nully VALUES ('a', 1), ('b', NULL)`,
		`CREATE TABLE loose (ward, v)`,
		`INSERT INTO loose VALUES ('a', 1), ('b', 'many')`,
	)
	schema := map[string]Kind{"ward": Categorical, "v": Numeric}
	tb, err := Open(ctx, Source{SQLite: db, Table: "ok"}, "t", schema, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Column("secret"); err == nil {
		t.Fatal("a column outside the schema was read")
	}
	if c, _ := tb.Column("v"); !slices.Equal(c.Num, []float64{1, 2.5}) {
		t.Fatalf("v = %v", c.Num)
	}
	q, err := Open(ctx, Source{SQLite: db, Query: "SELECT ward, v * 2 AS v FROM ok WHERE v > 1;"}, "t", schema, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := q.Column("v"); !slices.Equal(c.Num, []float64{5}) {
		t.Fatalf("query v = %v", c.Num)
	}
	_, err = Open(ctx, Source{SQLite: filepath.Join(dir, "missing.db"), Table: "ok"}, "t", schema, ReadOptions{})
	mustErr(t, err, ErrSource, "missing.db", "no such file")
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("reading a missing database created it")
	}
	_, err = Open(ctx, Source{SQLite: db, Table: "nope"}, "t", schema, ReadOptions{})
	mustErr(t, err, ErrSource, "table nope", "no such table")
	_, err = Open(ctx, Source{SQLite: db, Query: "SELECT ward, nope FROM ok"}, "t", schema, ReadOptions{})
	mustErr(t, err, ErrSource, "query", "nope")
	_, err = Open(ctx, Source{SQLite: db, Query: "SELECT ward FROM ok"}, "t", schema, ReadOptions{})
	mustErr(t, err, ErrSchema, `"v"`)
	_, err = Open(ctx, Source{SQLite: db, Table: "texty"}, "t", schema, ReadOptions{})
	mustErr(t, err, ErrSource, "table texty", `column "v"`, "TEXT", "numeric")
	_, err = Open(ctx, Source{SQLite: db, Table: "nully"}, "t", schema, ReadOptions{})
	mustErr(t, err, ErrFormat, "table nully", "row 2", `column "v"`, "NULL")
	_, err = Open(ctx, Source{SQLite: db, Table: "loose"}, "t", schema, ReadOptions{})
	mustErr(t, err, ErrFormat, "table loose", "row 2", `column "v"`, "not a finite number")
	if strings.Contains(err.Error(), "many") {
		t.Errorf("error %q quotes the private cell value", err)
	}
	for _, bad := range []string{"DELETE FROM ok", "SELECT 1; DROP TABLE ok", "PRAGMA writable_schema=1"} {
		_, err = Open(ctx, Source{SQLite: db, Query: bad}, "t", schema, ReadOptions{})
		mustErr(t, err, ErrSource)
	}
	// Even a query that slips past the SELECT check cannot write.
	_, err = Open(ctx, Source{SQLite: db, Query: "WITH x AS (SELECT 1) DELETE FROM ok"}, "t", schema, ReadOptions{})
	mustErr(t, err, ErrSource)
	if tb, err := Open(ctx, Source{SQLite: db, Table: "ok"}, "t", schema, ReadOptions{}); err != nil || tb.NumRows() != 2 {
		t.Fatalf("after the refused queries: %v, %d rows", err, tb.NumRows())
	}
	_, err = Open(ctx, Source{SQLite: db, Table: "ok"}, "t", schema, ReadOptions{MaxBytes: 40})
	mustErr(t, err, ErrTooLarge, "table ok")
	_, err = Open(ctx, Source{SQLite: db, Table: `ok"; --`}, "t", schema, ReadOptions{})
	mustErr(t, err, ErrSource, "table name")
}

func TestSQLiteWriteLeavesNothingOnError(t *testing.T) {
	dir := t.TempDir()
	tb, err := Read(strings.NewReader("ward,v\na,1\nb,2\n"), "x", "t", map[string]Kind{"ward": Categorical, "v": Numeric})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = Write(ctx, Source{SQLite: filepath.Join(dir, "new.db"), Table: "t"}, tb)
	mustErr(t, err, nil)
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Fatalf("a failed write left %v", names)
	}
	err = Write(context.Background(), Source{SQLite: filepath.Join(dir, "new.db"), Query: "SELECT 1"}, tb)
	mustErr(t, err, ErrSource, "query")
}

func TestParquetBadInput(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name string, group parquet.Group, rows []parquet.Row) string {
		t.Helper()
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		w := parquet.NewGenericWriter[any](f, parquet.NewSchema("t", group))
		if _, err := w.WriteRows(rows); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	schema := map[string]Kind{"ward": Categorical, "v": Numeric}
	// Columns are ordered by name: v (0), ward (1).
	strV := write("str.parquet", parquet.Group{"v": parquet.String(), "ward": parquet.String()},
		[]parquet.Row{{parquet.ByteArrayValue([]byte("1")).Level(0, 0, 0), parquet.ByteArrayValue([]byte("a")).Level(0, 0, 1)}})
	_, err := Open(ctx, Source{Path: strV}, "t", schema, ReadOptions{})
	mustErr(t, err, ErrSource, "str.parquet", `column "v"`, "numeric")
	nullV := write("null.parquet", parquet.Group{"v": parquet.Optional(parquet.Leaf(parquet.DoubleType)), "ward": parquet.String()},
		[]parquet.Row{
			{parquet.DoubleValue(1).Level(0, 1, 0), parquet.ByteArrayValue([]byte("a")).Level(0, 0, 1)},
			{parquet.NullValue().Level(0, 0, 0), parquet.ByteArrayValue([]byte("b")).Level(0, 0, 1)},
		})
	_, err = Open(ctx, Source{Path: nullV}, "t", schema, ReadOptions{})
	mustErr(t, err, ErrFormat, "null.parquet", "row 2", `column "v"`, "NULL")
	intV := write("int.parquet", parquet.Group{"v": parquet.Leaf(parquet.Int64Type), "ward": parquet.String()},
		[]parquet.Row{{parquet.Int64Value(7).Level(0, 0, 0), parquet.ByteArrayValue([]byte("a")).Level(0, 0, 1)}})
	tb, err := Open(ctx, Source{Path: intV}, "t", schema, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := tb.Column("v"); !slices.Equal(c.Num, []float64{7}) || !slices.Equal(c.Str, []string{"7"}) {
		t.Fatalf("int64 column read as %v %q", c.Num, c.Str)
	}
	_, err = Open(ctx, Source{Path: intV}, "t", map[string]Kind{"x": Numeric}, ReadOptions{})
	mustErr(t, err, ErrSchema, `"x"`)
	notPq := filepath.Join(dir, "fake.parquet")
	os.WriteFile(notPq, []byte("ward,v\n"), 0o644)
	_, err = Open(ctx, Source{Path: notPq}, "t", schema, ReadOptions{})
	mustErr(t, err, ErrSource, "fake.parquet", "Parquet")
	_, err = Open(ctx, Source{Path: filepath.Join(dir, "missing.parquet")}, "t", schema, ReadOptions{})
	mustErr(t, err, ErrSource, "missing.parquet")
}

func TestSourceValidate(t *testing.T) {
	for _, s := range []Source{
		{},
		{Path: "a.csv", SQLite: "b.db"},
		{Path: "a.csv", Table: "t"},
		{SQLite: "b.db"},
		{SQLite: "b.db", Table: "t", Query: "SELECT 1"},
		{SQLite: "b.db", Query: "UPDATE t SET v = 0"},
		{PostgresEnv: "X Y", Table: "t"},
	} {
		if err := s.Validate(); !errors.Is(err, ErrSource) {
			t.Errorf("%+v: Validate = %v, want ErrSource", s, err)
		}
	}
	s := Source{PostgresFile: "/etc/pg", Query: "SELECT a FROM b"}
	if err := s.Validate(); err != nil || s.Type() != Postgres {
		t.Fatalf("%v %v", err, s.Type())
	}
}

func TestPostgresBadInput(t *testing.T) {
	srv := pgShared.Start(t)
	ctx := context.Background()
	good := srv.ConnString(srv.Password)
	t.Setenv("COHORT_TEST_PG", good)
	t.Setenv("COHORT_TEST_PG_BAD", srv.ConnString("not-the-password"))
	conn, err := pgConnect(ctx, Source{PostgresEnv: "COHORT_TEST_PG", Table: "x"}, "x")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`CREATE TABLE ok (ward text, v double precision, n numeric, i bigint, secret text)`,
		`INSERT INTO ok SELECT 'w' || g, g * 0.5, g, g, 's' FROM generate_series(1, 25) g`,
		`CREATE TABLE texty (ward text, v text)`,
		`INSERT INTO texty VALUES ('a', '1')`,
		`CREATE TABLE nully (ward text, v real)`,
		`INSERT INTO nully VALUES ('a', 1), ('b', NULL)`,
	} {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	conn.Close(ctx)
	schema := map[string]Kind{"ward": Categorical, "v": Numeric, "n": Numeric, "i": Numeric}
	env := func(table, query string) Source {
		return Source{PostgresEnv: "COHORT_TEST_PG", Table: table, Query: query}
	}
	// Several cursor batches (3 rows each) and the three numeric types.
	tb, err := Open(ctx, env("ok", ""), "t", schema, ReadOptions{BatchRows: 3})
	if err != nil {
		t.Fatal(err)
	}
	if tb.NumRows() != 25 {
		t.Fatalf("%d rows, want 25", tb.NumRows())
	}
	sum := 0.0
	for _, name := range []string{"v", "n", "i"} {
		c, _ := tb.Column(name)
		for _, x := range c.Num {
			sum += x
		}
	}
	if sum != 325*2.5 {
		t.Fatalf("sum %v, want %v", sum, 325*2.5)
	}
	// A connection file must be private.
	file := filepath.Join(t.TempDir(), "pg.conn")
	os.WriteFile(file, []byte(good), 0o644)
	_, err = Open(ctx, Source{PostgresFile: file, Table: "ok"}, "t", schema, ReadOptions{})
	mustErr(t, err, ErrSource, "0644", "0600")
	os.Chmod(file, 0o600)
	if _, err := Open(ctx, Source{PostgresFile: file, Table: "ok"}, "t", schema, ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, Source{PostgresEnv: "COHORT_TEST_PG_BAD", Table: "ok"}, "t", schema, ReadOptions{})
	mustErr(t, err, ErrSource, "COHORT_TEST_PG_BAD", "connect")
	if strings.Contains(err.Error(), "not-the-password") || strings.Contains(err.Error(), srv.Dir+" user") {
		t.Fatalf("the error shows the connection string: %v", err)
	}
	_, err = Open(ctx, Source{PostgresEnv: "COHORT_TEST_PG_UNSET", Table: "ok"}, "t", schema, ReadOptions{})
	mustErr(t, err, ErrSource, "COHORT_TEST_PG_UNSET", "not set")
	_, err = Open(ctx, env("", "SELECT ward, v, n, i FROM missing_table"), "t", schema, ReadOptions{})
	mustErr(t, err, ErrSource, "missing_table", "SQLSTATE")
	_, err = Open(ctx, env("texty", ""), "t", map[string]Kind{"v": Numeric}, ReadOptions{})
	mustErr(t, err, ErrSource, "table texty", `column "v"`, "numeric")
	_, err = Open(ctx, env("nully", ""), "t", map[string]Kind{"v": Numeric}, ReadOptions{})
	mustErr(t, err, ErrFormat, "table nully", "row 2", `column "v"`, "NULL")
	_, err = Open(ctx, env("", "WITH d AS (DELETE FROM ok RETURNING *) SELECT * FROM d"), "t", schema, ReadOptions{})
	mustErr(t, err, ErrSource)
	if tb, err := Open(ctx, env("ok", ""), "t", schema, ReadOptions{}); err != nil || tb.NumRows() != 25 {
		t.Fatalf("after a refused write: %v", err)
	}
	_, err = Open(ctx, env("ok", ""), "t", schema, ReadOptions{MaxBytes: 200, BatchRows: 2})
	mustErr(t, err, ErrTooLarge)

	// A write that fails half way (PostgreSQL text cannot hold NUL) leaves
	// no table behind.
	bad := &Table{Name: "t", Columns: []*Column{{Name: "ward", Kind: Categorical, Str: []string{"a", "b\x00c"}}}}
	err = Write(ctx, env("half", ""), bad)
	mustErr(t, err, ErrSource, "table half")
	_, err = Open(ctx, env("half", ""), "t", nil, ReadOptions{})
	mustErr(t, err, ErrSource, "does not exist")
}
