package table_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/table"
)

// TestClickHouseInNodeCatalogue: node.yaml's tables: takes a ClickHouse
// source and refuses a bad one by its entry's name; the policy's dataset
// identity of a ClickHouse source is its connection (a digest, never the
// DSN) and its table or query, and its name is the catalogue's.
func TestClickHouseInNodeCatalogue(t *testing.T) {
	dir := t.TempDir()
	write := func(tables string) (*node.Config, error) {
		path := filepath.Join(dir, "node.yaml")
		yaml := "name: north\ndata_dir: data\nconsortium: consortium.yaml\ntables:\n" + tables
		if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		return node.LoadConfig(path)
	}
	cfg, err := write("  loans: {clickhouse_env: COHORT_CH, table: ledger.loans}\n  recent: {clickhouse_env: COHORT_CH, query: \"SELECT amount FROM ledger.loans WHERE year = 2025\"}\n")
	if err != nil {
		t.Fatal(err)
	}
	if src := cfg.Tables["loans"]; src.Type() != table.ClickHouse || src.ClickHouseEnv != "COHORT_CH" || src.Table != "ledger.loans" {
		t.Fatalf("loans: %+v", src)
	}
	for entry, bad := range map[string]string{
		"tables.a": "  a: {clickhouse_env: \"COHORT CH\", table: loans}\n",
		"tables.b": "  b: {clickhouse_env: COHORT_CH, query: \"ALTER TABLE loans DELETE WHERE 1\"}\n",
		"tables.c": "  c: {clickhouse_env: COHORT_CH, postgres_env: PG, table: loans}\n",
		"tables.d": "  d: {clickhouse_env: COHORT_CH}\n",
	} {
		if _, err := write(bad); err == nil || !strings.Contains(err.Error(), entry) {
			t.Errorf("%s: %v, want an error naming %s", strings.TrimSpace(bad), err, entry)
		}
	}

	const dsn = "clickhouse://cohort:s3cret@ch.internal:9000/ledger"
	t.Setenv("COHORT_CH", dsn)
	t.Setenv("COHORT_CH_OTHER", "clickhouse://cohort:s3cret@ch2.internal:9000/ledger")
	loans := table.Source{ClickHouseEnv: "COHORT_CH", Table: "ledger.loans"}
	id := job.DatasetIdentity(loans)
	if strings.Contains(id, "s3cret") || strings.Contains(id, "ch.internal") || !strings.HasPrefix(id, "clickhouse:") || !strings.HasSuffix(id, "|table:ledger.loans") {
		t.Fatalf("identity %q", id)
	}
	other := loans
	other.ClickHouseEnv = "COHORT_CH_OTHER"
	if job.DatasetIdentity(other) == id {
		t.Fatal("two clusters' tables are one dataset")
	}
	q1 := table.Source{ClickHouseEnv: "COHORT_CH", Query: "SELECT amount FROM ledger.loans  WHERE year = 2025"}
	q2 := table.Source{ClickHouseEnv: "COHORT_CH", Query: "SELECT amount\nFROM ledger.loans WHERE year = 2025"}
	if job.DatasetIdentity(q1) != job.DatasetIdentity(q2) || job.DatasetIdentity(q1) == id {
		t.Fatal("a query's identity is not its text with white space folded")
	}
	// A spec table resolved through the catalogue is named by it, under
	// any spec name; one the catalogue does not hold by its variable.
	src, err := job.ResolveSource(dir, job.TableSpec{Name: "loans"}, cfg.Tables, false)
	if err != nil {
		t.Fatal(err)
	}
	if name, err := job.DatasetName(dir, src, cfg.Tables); err != nil || name != "loans" {
		t.Fatalf("dataset name %q, %v; want loans", name, err)
	}
	if name, err := job.DatasetName(dir, other, cfg.Tables); err != nil || name != "$COHORT_CH_OTHER#ledger.loans" {
		t.Fatalf("dataset name %q, %v", name, err)
	}
}
