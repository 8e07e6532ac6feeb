package table

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLabelKeepsDirectoriesOut: with a Label, no error of Open names the
// directory a file sits in, whatever fails (a missing file, a bad cell, a
// missing database), and the chain still answers errors.Is.
func TestLabelKeepsDirectoriesOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "secret-place")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("v\n1\nNaN\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		src  Source
		want error
	}{
		{Source{Path: filepath.Join(dir, "missing.csv")}, os.ErrNotExist},
		{Source{Path: filepath.Join(dir, "missing.parquet")}, os.ErrNotExist},
		{Source{Path: bad}, ErrFormat},
		{Source{SQLite: filepath.Join(dir, "missing.db"), Table: "t"}, os.ErrNotExist},
		{Source{PostgresFile: filepath.Join(dir, "pg.conn"), Table: "t"}, os.ErrNotExist},
	} {
		_, err := Open(context.Background(), tc.src, "t", map[string]Kind{"v": Numeric}, ReadOptions{Label: Label(tc.src)})
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", Label(tc.src), err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), dir) || strings.Contains(err.Error(), "secret-place") {
			t.Errorf("the error names the directory: %v", err)
		}
		if !strings.Contains(err.Error(), Label(tc.src)) {
			t.Errorf("the error does not name the source as %q: %v", Label(tc.src), err)
		}
	}
}

func TestLabel(t *testing.T) {
	for _, tc := range []struct {
		src  Source
		want string
	}{
		{Source{Path: "/srv/acme/tables/north.csv"}, "north.csv"},
		{Source{SQLite: "/srv/acme/h.db", Table: "visits"}, "sqlite h.db table visits"},
		{Source{SQLite: "/srv/acme/h.db", Query: "SELECT * FROM v WHERE region = 'x'"}, "sqlite h.db (query)"},
		{Source{PostgresEnv: "PG", Table: "visits"}, "postgres (connection from $PG) table visits"},
	} {
		if got := Label(tc.src); got != tc.want {
			t.Errorf("Label(%+v) = %q, want %q", tc.src, got, tc.want)
		}
	}
}
