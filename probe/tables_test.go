package probe

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/chtest"
	"github.com/cohortdm/cohort/internal/pgtest"
	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/table"
)

// physical is every party's database table: the name the organisation
// gives it, which must stay at its node.
const physical = "vault_ledger_q7"

// probeSources writes each party's table "loans" (a categorical ward and
// a numeric v) to its own store: org01's in ClickHouse and org02's in
// PostgreSQL when their servers can be started here, else in SQLite as
// org03's always is; it returns each node's catalogue and the text that
// names each source in a log record.
func probeSources(t *testing.T, dir string) (map[string]map[string]table.Source, map[string]string) {
	t.Helper()
	ctx := context.Background()
	loans := &table.Table{Name: "loans", Columns: []*table.Column{
		{Name: "ward", Kind: table.Categorical, Str: []string{"cardio", "neuro", "onco"}},
		{Name: "v", Kind: table.Numeric, Num: []float64{1, 2.5, 4}, Str: []string{"1", "2.5", "4"}},
	}}
	sqlite := func(name string) (table.Source, string) {
		return table.Source{SQLite: name + ".db", Table: physical}, name + ".db"
	}
	srcs := map[string]table.Source{}
	logged := map[string]string{}
	srcs["org01"], logged["org01"] = sqlite("org01")
	if ch := chtest.Try(t); ch != nil {
		t.Setenv("COHORT_PROBE_CH", ch.ReadOnlyDSN())
		t.Setenv("COHORT_PROBE_CH_ADMIN", ch.DSN("admin", ch.AdminPassword))
		if err := table.Write(ctx, table.Source{ClickHouseEnv: "COHORT_PROBE_CH_ADMIN", Table: physical}, loans); err != nil {
			t.Fatal(err)
		}
		srcs["org01"], logged["org01"] = table.Source{ClickHouseEnv: "COHORT_PROBE_CH", Table: physical}, "$COHORT_PROBE_CH"
	}
	srcs["org02"], logged["org02"] = sqlite("org02")
	if pg := pgtest.Try(t); pg != nil {
		t.Setenv("COHORT_PROBE_PG", pg.ConnString(pg.Password))
		srcs["org02"], logged["org02"] = table.Source{PostgresEnv: "COHORT_PROBE_PG", Table: physical}, "$COHORT_PROBE_PG"
	}
	srcs["org03"], logged["org03"] = sqlite("org03")
	tables := map[string]map[string]table.Source{}
	for name, src := range srcs {
		w := src
		if w.SQLite != "" {
			w.SQLite = filepath.Join(dir, w.SQLite)
		}
		if w.ClickHouseEnv == "" {
			if err := table.Write(ctx, w, loans); err != nil {
				t.Fatal(err)
			}
		}
		tables[name] = map[string]table.Source{"loans": src}
	}
	// org03 also maps "broken": a table with a NULL in v.
	db, err := sql.Open("sqlite", filepath.Join(dir, "org03.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE broken_q9 (ward TEXT, v REAL); INSERT INTO broken_q9 VALUES ('cardio', 1), ('neuro', NULL)`); err != nil {
		t.Fatal(err)
	}
	tables["org03"]["broken"] = table.Source{SQLite: "org03.db", Table: "broken_q9"}
	return tables, logged
}

func writeTableSpec(t *testing.T, dir, file string, tables map[string]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("kind: probe\nparties:\n")
	for _, name := range []string{"org01", "org02", "org03"} {
		fmt.Fprintf(&b, "  - name: %s\n", name)
		if tb := tables[name]; tb != "" {
			fmt.Fprintf(&b, "    tables: [{name: %s}]\n", tb)
		}
	}
	b.WriteString("schema:\n  loans: {ward: categorical, v: numeric}\n  broken: {ward: categorical, v: numeric}\nparams: {values: 40, backend: paillier}\n")
	path := filepath.Join(dir, file)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// submit runs a spec on the cluster and returns the job's record.
func submit(t *testing.T, ctx context.Context, c *sim.Cluster, spec string) *node.JobRecord {
	t.Helper()
	raw, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	n := c.Running()[0]
	id, err := n.Submit(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := n.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// A probe whose parties have tables checks each where it lives, over real
// nodes each mapping the spec's "loans" to a table of its own (ClickHouse,
// PostgreSQL and SQLite where their servers run here): the check is one
// query pushed down to the database, which is in the node's own log at
// debug level with the job, and in no node's Raft store; the result names
// the tables checked. A table Open would refuse (a NULL) fails the probe,
// naming its party, the table and the row.
func TestProbeChecksTablesWhereTheyLive(t *testing.T) {
	dir := t.TempDir()
	names := []string{"org01", "org02", "org03"}
	tables, sources := probeSources(t, dir)
	var logged testkit.LockedBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := simtest.StartCluster(t, ctx, names, sim.ClusterOptions{
		TablesDir: dir, Tables: tables, Setup: simtest.ThresholdKeys(keyBits), Timing: node.Timing{SendMS: 3000, StepMS: 60000},
		Kinds:  job.Registry{"probe": Kind{}},
		Logger: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	defer c.Close()
	rec := submit(t, ctx, c, writeTableSpec(t, dir, "probe.yaml", map[string]string{"org01": "loans", "org02": "loans", "org03": "loans"}))
	if rec.Status != node.StatusDone {
		t.Fatalf("probe %s: %s", rec.Status, rec.Error)
	}
	var res map[string]any
	if err := json.Unmarshal(rec.Result, &res); err != nil {
		t.Fatal(err)
	}
	if res["exact"] != true || fmt.Sprint(res["tables"]) != "map[org01:[loans] org02:[loans] org03:[loans]]" {
		t.Fatalf("result %v", res)
	}
	// The text handler writes the query quoted: FROM \"vault_ledger_q7\".
	query := `FROM \"` + physical + `\"`
	for _, name := range names {
		n := 0
		for _, line := range strings.Split(logged.String(), "\n") {
			if strings.Contains(line, query) && strings.Contains(line, sources[name]) {
				n++
				if !strings.Contains(line, "level=DEBUG") || !strings.Contains(line, `msg="table: query pushed down"`) || !strings.Contains(line, "job="+rec.ID) {
					t.Errorf("%s's query is logged as %q, want a debug record with the job", name, line)
				}
			}
		}
		if n == 0 {
			t.Errorf("no log record carries %s's pushed-down query (source %s):\n%s", name, sources[name], logged.String())
		}
	}

	bad := submit(t, ctx, c, writeTableSpec(t, dir, "broken.yaml", map[string]string{"org03": "broken"}))
	if bad.Status != node.StatusFailed || !strings.Contains(bad.Error, "party org03: table broken:") || !strings.Contains(bad.Error, `row 2: column "v": NULL value`) {
		t.Fatalf("probe over a table with a NULL: %s: %s", bad.Status, bad.Error)
	}

	c.Close() // the Raft stores are read whole once the nodes are down
	simtest.QueryNotInRaft(t, c, physical, "loans")
}
