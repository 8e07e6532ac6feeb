package job

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/table"
)

func TestResolveSource(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	for _, f := range []string{"a.csv", "a.parquet", "h.db"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(outside, "secret.db"), nil, 0o644)
	os.Symlink(filepath.Join(outside, "secret.db"), filepath.Join(root, "link.db"))
	realRoot, _ := filepath.EvalSymlinks(root)

	// A node's own mapping wins over the spec's path.
	mapped := map[string]table.Source{
		"loans": {SQLite: "h.db", Table: "loans"},
		"pg":    {PostgresFile: "/etc/cohort/pg.conn", Query: "SELECT 1"},
		"leak":  {SQLite: "link.db", Table: "t"},
		"up":    {Path: "../x.csv"},
	}
	src, err := ResolveSource(root, TableSpec{Name: "loans", Path: "a.csv"}, mapped, false)
	if err != nil || src.SQLite != filepath.Join(realRoot, "h.db") || src.Table != "loans" {
		t.Fatalf("mapped: %+v, %v", src, err)
	}
	// An operator's connection file may live outside tables_dir.
	if src, err := ResolveSource(root, TableSpec{Name: "pg"}, mapped, false); err != nil || src.PostgresFile != "/etc/cohort/pg.conn" {
		t.Fatalf("mapped postgres file: %+v, %v", src, err)
	}
	// ...but a mapped table file may not, symlinks included.
	for _, name := range []string{"leak", "up"} {
		if _, err := ResolveSource(root, TableSpec{Name: name}, mapped, false); !errors.Is(err, ErrTablePath) {
			t.Errorf("mapped %s: %v, want ErrTablePath", name, err)
		}
	}
	// Unmapped: the spec's path, Parquet by extension.
	src, err = ResolveSource(root, TableSpec{Name: "x", Path: "a.parquet"}, nil, false)
	if err != nil || src.Type() != table.Parquet || src.Path != filepath.Join(realRoot, "a.parquet") {
		t.Fatalf("path: %+v, %v", src, err)
	}
	// A running node refuses a source named by the spec; a simulation
	// reads it, inside root only.
	spec := TableSpec{Name: "x", Source: &table.Source{SQLite: "h.db", Query: "SELECT v FROM t"}}
	if _, err := ResolveSource(root, spec, nil, false); !errors.Is(err, ErrTableSource) || !strings.Contains(err.Error(), "node.yaml") {
		t.Fatalf("spec source on a node: %v", err)
	}
	if src, err := ResolveSource(root, spec, nil, true); err != nil || src.SQLite != filepath.Join(realRoot, "h.db") {
		t.Fatalf("spec source in sim: %+v, %v", src, err)
	}
	for _, s := range []*table.Source{{SQLite: "link.db", Table: "t"}, {PostgresFile: filepath.Join(outside, "secret.db"), Table: "t"}} {
		if _, err := ResolveSource(root, TableSpec{Name: "x", Source: s}, nil, true); !errors.Is(err, ErrTablePath) {
			t.Errorf("spec source %+v: %v, want ErrTablePath", s, err)
		}
	}
	if _, err := ResolveSource(root, TableSpec{Name: "x"}, nil, true); !errors.Is(err, ErrTableSource) {
		t.Fatalf("no path, not mapped: %v", err)
	}
}

func TestSpecTableSources(t *testing.T) {
	ok := `kind: x
parties:
  - name: a
    tables: [{name: l, source: {sqlite: data/l.db, table: loans}}]
  - name: b
    tables: [{name: l, source: {postgres_env: COHORT_PG, query: "SELECT v FROM loans"}}]
  - name: c
    tables: [{name: l}]
`
	s, err := ParseSpec([]byte(ok), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Parties[0].Tables[0].Source; got == nil || got.SQLite != "data/l.db" || got.Table != "loans" {
		t.Fatalf("source %+v", got)
	}
	// The source survives the round trip through the log.
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseSpec(b, "log")
	if err != nil || *again.Parties[1].Tables[0].Source != *s.Parties[1].Tables[0].Source {
		t.Fatalf("re-parsed: %v", err)
	}
	for field, bad := range map[string]string{
		"not both":      `[{name: l, path: a.csv, source: {sqlite: a.db, table: t}}]`,
		"outside":       `[{name: l, source: {sqlite: ../a.db, table: t}}]`,
		"absolute":      `[{name: l, source: {postgres_file: /etc/pg, table: t}}]`,
		"write query":   `[{name: l, source: {sqlite: a.db, query: "DELETE FROM t"}}]`,
		"two stores":    `[{name: l, source: {sqlite: a.db, postgres_env: X, table: t}}]`,
		"table + query": `[{name: l, source: {sqlite: a.db, table: t, query: "SELECT 1"}}]`,
	} {
		if _, err := ParseSpec([]byte("kind: x\nparties: [{name: a, tables: "+bad+"}]\n"), "s.yaml"); !errors.Is(err, ErrSpec) {
			t.Errorf("%s: %v, want ErrSpec", field, err)
		}
	}
}
