package node

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/internal/chtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"

	_ "modernc.org/sqlite"
)

// tableReader is the one part of a Participant that job.OpenTable uses
// on a failure that fits in memory: the member's TableSource.
type tableReader struct {
	job.Participant
	m member
}

func (r tableReader) TableSource(t job.TableSpec) (table.Source, error) { return r.m.TableSource(t) }

// dbFailure is the failure text a step that loads table name reports to
// the coordinator: job.OpenTable's error after the member's Redact.
func dbFailure(t *testing.T, m member, name string, schema map[string]table.Kind) string {
	t.Helper()
	_, err := job.OpenTable(context.Background(), tableReader{m: m}, job.TableSpec{Name: name}, "t", schema)
	if err == nil {
		t.Fatalf("table %s: no error", name)
	}
	return m.Redact(err.Error())
}

// What leaves the node when a database table fails to load names the
// catalogue's table, the database table and the kind of failure, and
// neither where the node keeps the database file, nor the ClickHouse
// server's address, port, user or password, nor a cell value.
func TestDatabaseFailureLeavesNothingPrivate(t *testing.T) {
	const secret = "s3cr3tvalue"
	tablesDir := t.TempDir()
	sub := filepath.Join(tablesDir, "acme-private-dbs")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(sub, "clinic.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"CREATE TABLE t (ward TEXT, v REAL, p TEXT)", "INSERT INTO t VALUES ('a', 1, '$.a'), ('b', 2, '" + secret + "')"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	// A catalogue's paths are inside tables_dir, relative to it.
	rel := filepath.Join("acme-private-dbs", "clinic.db")
	cfg := &Config{TablesDir: tablesDir, DataDir: t.TempDir(), Tables: map[string]table.Source{
		"lite_missing": {SQLite: rel, Table: "nope"},
		"lite_value":   {SQLite: rel, Query: "SELECT ward, v + length(coalesce(json_extract('{}', p), '')) AS v FROM t"},
	}}
	secrets := []string{tablesDir, sub, "acme-private-dbs", secret}
	srv := chtest.Try(t)
	if srv != nil {
		srv.Exec(t, "CREATE TABLE ledger (ward String, word String) ENGINE = Memory",
			"INSERT INTO ledger SELECT 'a', '"+secret+"'")
		t.Setenv("NODE_TEST_CH", srv.ReadOnlyDSN())
		t.Setenv("NODE_TEST_CH_BADPW", srv.DSN("cohort", "wrongpassword"))
		cfg.Tables["ch_missing"] = table.Source{ClickHouseEnv: "NODE_TEST_CH", Table: "nope"}
		cfg.Tables["ch_value"] = table.Source{ClickHouseEnv: "NODE_TEST_CH", Query: "SELECT ward, toFloat64(word) AS v FROM ledger"}
		cfg.Tables["ch_auth"] = table.Source{ClickHouseEnv: "NODE_TEST_CH_BADPW", Table: "ledger"}
		secrets = append(secrets, srv.Password, "wrongpassword", "127.0.0.1", strconv.Itoa(srv.Port), srv.Database, "user cohort")
	}
	m := member{n: &Node{cfg: cfg}}
	schema := map[string]table.Kind{"ward": table.Categorical, "v": table.Numeric}
	for name, want := range map[string][]string{
		"lite_missing": {"table lite_missing: ", "sqlite clinic.db table nope", "no such table"},
		"lite_value":   {"table lite_value: ", "sqlite clinic.db (query)", "bad JSON path"},
		"ch_missing":   {"table ch_missing: ", "table nope", "code: 60"},
		"ch_value":     {"table ch_value: ", "(query)", "code: 6, message: Cannot parse string"},
		"ch_auth":      {"table ch_auth: ", "table ledger", "code: 193"},
	} {
		if _, ok := cfg.Tables[name]; !ok {
			continue // no ClickHouse server here
		}
		msg := dbFailure(t, m, name, schema)
		t.Logf("%s: %s", name, msg)
		for _, s := range secrets {
			if strings.Contains(msg, s) {
				t.Errorf("%s: the failure names %q: %s", name, s, msg)
			}
		}
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: the failure does not say %q: %s", name, w, msg)
			}
		}
	}
}
