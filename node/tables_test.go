package node_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/node"
)

// node.yaml maps logical tables to the node's own sources; a bad source is
// a config error naming the table, and a connection file is found beside
// node.yaml.
func TestConfigTables(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(body string) string { return node.WriteConfig(t, dir, "tables_dir: tables\n"+body) }
	cfg, err := node.LoadConfig(write(`tables:
  loans: {sqlite: bank.db, table: loans}
  stays: {postgres_file: secrets/pg.conn, query: "SELECT ward, stay FROM stays WHERE year = 2025"}
  wide: {path: wide.parquet}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Tables["loans"]; got.SQLite != "bank.db" || got.Table != "loans" {
		t.Fatalf("loans: %+v", got)
	}
	if got := cfg.Tables["stays"].PostgresFile; got != filepath.Join(dir, "secrets/pg.conn") {
		t.Fatalf("postgres_file resolved to %q", got)
	}
	for body, want := range map[string]string{
		"tables:\n  loans: {sqlite: bank.db}\n":                          "tables.loans",
		"tables:\n  loans: {sqlite: bank.db, query: \"DROP TABLE x\"}\n": "read-only SELECT",
		"tables:\n  loans: {mysql: x}\n":                                 "mysql",
		"tables:\n  loans: {sqlite: bank.db, table: t, max_rows: -1}\n":  "max_rows",
		"max_table_rows: -5\n":                                           "max_table_rows",
		"sjc_group_rows: sometimes\n":                                    "sjc_group_rows",
	} {
		_, err := node.LoadConfig(write(body))
		if !errors.Is(err, node.ErrConfig) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want a config error naming %q", body, err, want)
		}
	}
}

// sjc_group_rows reads true, false (as YAML booleans or strings) and
// auto; unset is auto.
func TestConfigGroupRows(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for body, want := range map[string]string{"": "", "sjc_group_rows: true\n": "true", "sjc_group_rows: false\n": "false",
		"sjc_group_rows: auto\n": "auto", "sjc_group_rows: \"true\"\n": "true"} {
		cfg, err := node.LoadConfig(node.WriteConfig(t, dir, body))
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		if cfg.SJCGroupRows != want {
			t.Errorf("%q: %q, want %q", body, cfg.SJCGroupRows, want)
		}
	}
}
