package table

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"modernc.org/sqlite"
)

// sqliteSecretValue is a cell value that no error text may quote.
const sqliteSecretValue = "s3cr3tvalue"

// sqliteLeaks fails t when text names the database file's directory or
// a cell value, and when it does not name what a reader needs: the
// source's label and each of want.
func sqliteLeaks(t *testing.T, what string, err error, dir string, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	for _, s := range []string{dir, filepath.Base(dir), sqliteSecretValue} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("%s: error names %q: %v", what, s, err)
		}
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error does not say %q: %v", what, w, err)
		}
	}
}

// sqliteFixture is a database file in a directory whose name no error
// may carry, holding table t (ward, v, path) whose second row's path is
// the secret value, and that value again as text in table tx.
func sqliteFixture(t *testing.T) (dir, path string) {
	dir = filepath.Join(t.TempDir(), "acme-private-dbs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, "clinic.db")
	sqliteExec(t, path,
		"CREATE TABLE t (ward TEXT, v REAL, path TEXT)",
		"INSERT INTO t VALUES ('a', 1, '$.a'), ('b', 2, '"+sqliteSecretValue+"')",
		"CREATE TABLE tx (ward TEXT, v TEXT)",
		"INSERT INTO tx VALUES ('a', '"+sqliteSecretValue+"')")
	return dir, path
}

// Each way an SQLite source fails, read whole (Open) or aggregated where
// it lives (Aggregator), names the source by its label and the kind of
// failure, never the database file's directory nor a cell value: the
// text reaches every member's log. The error keeps its kind for
// errors.Is and As.
func TestSQLiteErrorsRedacted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, path := sqliteFixture(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	corrupt := filepath.Join(dir, "corrupt.db")
	truncated := filepath.Join(dir, "truncated.db")
	if err := os.WriteFile(corrupt, []byte(strings.Repeat("not a database "+sqliteSecretValue+" ", 40)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(truncated, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	schema := map[string]Kind{"ward": Categorical, "v": Numeric}
	for _, c := range []struct {
		name   string
		src    Source
		schema map[string]Kind
		driver bool // the driver's error is still found by errors.As
		want   []string
	}{
		{"missing file", Source{SQLite: filepath.Join(dir, "gone.db"), Table: "t"}, schema, false,
			[]string{"sqlite gone.db table t", "no such file or directory"}},
		{"not a database", Source{SQLite: corrupt, Table: "t"}, schema, true,
			[]string{"sqlite corrupt.db table t", "file is not a database (SQLite result code 26)"}},
		{"truncated", Source{SQLite: truncated, Table: "t"}, schema, true,
			[]string{"sqlite truncated.db table t", "malformed"}},
		{"missing table", Source{SQLite: path, Table: "nope"}, schema, true,
			[]string{"sqlite clinic.db table nope", "no such table"}},
		{"missing column", Source{SQLite: path, Query: "SELECT ward, nope AS v FROM t"}, schema, true,
			[]string{"sqlite clinic.db (query)", "no such column"}},
		// The second row's path is no JSON path, and SQLite's message
		// quotes it: the read fails after its first row.
		{"value in the message", Source{SQLite: path, Query: "SELECT ward, v, coalesce(json_extract('{}', path), '-') AS p FROM t"},
			map[string]Kind{"ward": Categorical, "v": Numeric, "p": Categorical}, true,
			[]string{"sqlite clinic.db (query)", "bad JSON path (SQLite result code 1)"}},
	} {
		opts := ReadOptions{Label: Label(c.src)}
		_, err := Open(ctx, c.src, "t", c.schema, opts)
		sqliteLeaks(t, c.name, err, dir, c.want...)
		var se *sqlite.Error
		if !errors.Is(err, ErrSource) || c.driver && !errors.As(err, &se) {
			t.Errorf("%s: error lost its kind: %v", c.name, err)
		}
		agg, aerr := NewAggregator(c.src, c.schema, opts)
		if aerr == nil {
			_, _, aerr = agg.ColumnSum(ctx, "v", nil)
			agg.Close()
		}
		sqliteLeaks(t, c.name+" (aggregate)", aerr, dir, c.want[0])
	}
}

// A database another connection holds locked fails a read after the
// source's busy timeout, saying so without the file's path.
func TestSQLiteLockedRedacted(t *testing.T) {
	t.Parallel()
	dir, path := sqliteFixture(t)
	db, err := sql.Open("sqlite", sqliteDSN(path, false))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), "ROLLBACK")
	src := Source{SQLite: path, Table: "t"}
	_, err = Open(context.Background(), src, "t", map[string]Kind{"v": Numeric}, ReadOptions{Label: Label(src)})
	sqliteLeaks(t, "locked", err, dir, "sqlite clinic.db table t", "database is locked (SQLite result code 5)")
}

// An aggregate's result that is not a number fails naming the result's
// column and the value's type; database/sql's own text quoted the value.
func TestSQLiteResultConversionRedacted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, path := sqliteFixture(t)
	src := Source{SQLite: path, Table: "t"}
	c, err := sqliteDB{}.connect(ctx, src, Label(src))
	if err != nil {
		t.Fatal(err)
	}
	defer c.close(ctx)
	var x, y float64
	err = c.row(ctx, "SELECT 1.5, path FROM t WHERE ward = 'b'", nil, []*float64{&x, &y})
	sqliteLeaks(t, "text result", err, dir, "sqlite clinic.db table t", "result column 2: a string value where a number was expected")
	err = c.row(ctx, "SELECT NULL", nil, []*float64{&x})
	sqliteLeaks(t, "NULL result", err, dir, "result column 1: NULL where a number was expected")
	err = c.row(ctx, "SELECT v FROM t WHERE ward = 'none'", nil, []*float64{&x})
	if !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("no row: %v, want sql.ErrNoRows", err)
	}
	if err := c.row(ctx, "SELECT v, '2.5' FROM t WHERE ward = 'b'", nil, []*float64{&x, &y}); err != nil || x != 2 || y != 2.5 {
		t.Errorf("numbers: %v %v %v", x, y, err)
	}
}
