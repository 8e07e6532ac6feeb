package sim_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/internal/pgtest"
	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/quantile"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sum"
	"github.com/cohortdm/cohort/table"
)

func init() { testkit.SmallKeys() }

// keyBits is the modulus of the tests' threshold keys: 512, as sum's and
// quantile's tests, since no test here is about the size (the examples'
// figures use 2048 bits); 1024 cost the Paillier arithmetic four times
// over.
const keyBits = 512

// TestMain runs four parallel tests at once: most of the package's time is
// clusters starting and electing a leader, not computing (18 s of CPU in 52 s
// before, 28 Nov 2026). The tests that set an environment variable are not
// parallel. It stops the shared PostgreSQL server once every test has run.
func TestMain(m *testing.M) {
	testkit.WaitingParallel(4)
	code := m.Run()
	if err := pgShared.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "stop the shared PostgreSQL test server: %v\n", err)
	}
	os.Exit(code)
}

// pgShared is the test binary's one PostgreSQL server; each test that
// reads PostgreSQL tables gets a database of its own on it.
var pgShared pgtest.Shared

// example is a bundled example: its spec's kind, table, schema and params.
type example struct {
	kind, table, schema, params string
	columns                     map[string]table.Kind
}

var examples = map[string]example{
	"sum": {"sum", "admissions", "{ward: categorical, v: numeric}", "{column: v}",
		map[string]table.Kind{"ward": table.Categorical, "v": table.Numeric}},
	"quantile": {"quantile", "stays", "{ward: categorical, stay: numeric}", "{column: stay, quantiles: [0.5, 0.9], precision: 1, range: [0, 60]}",
		map[string]table.Kind{"ward": table.Categorical, "stay": table.Numeric}},
}

var parties = []string{"north", "south", "west"}

// writeSpec copies the example's tables into dir in the given source type
// and writes a spec whose party tables name them.
func writeSpec(t *testing.T, ctx context.Context, dir, name, srcType string) string {
	t.Helper()
	ex := examples[name]
	var b strings.Builder
	fmt.Fprintf(&b, "kind: %s\nparties:\n", ex.kind)
	for _, p := range parties {
		csv := filepath.Join("..", "examples", name, "data", p+".csv")
		var src table.Source
		var entry string
		switch srcType {
		case "csv":
			entry = fmt.Sprintf("path: %s.csv", p)
			src = table.Source{Path: filepath.Join(dir, p+".csv")}
		case "parquet":
			entry = fmt.Sprintf("source: {path: %s.parquet}", p)
			src = table.Source{Path: filepath.Join(dir, p+".parquet")}
		case "sqlite":
			entry = fmt.Sprintf("source: {sqlite: %s.db, table: %s}", p, ex.table)
			src = table.Source{SQLite: filepath.Join(dir, p+".db"), Table: ex.table}
		case "postgres":
			tbl := name + "_" + p
			entry = fmt.Sprintf("source: {postgres_env: COHORT_TEST_PG, query: \"SELECT * FROM %s WHERE true\"}", tbl)
			src = table.Source{PostgresEnv: "COHORT_TEST_PG", Table: tbl}
		}
		tb, err := table.Open(ctx, table.Source{Path: csv}, ex.table, ex.columns, table.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := table.Write(ctx, src, tb); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "  - name: %s\n    tables: [{name: %s, %s}]\n", p, ex.table, entry)
	}
	fmt.Fprintf(&b, "schema:\n  %s: %s\nparams: %s\n", ex.table, ex.schema, ex.params)
	spec := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(spec, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return spec
}

// Every source type gives the bundled examples the same job results as
// their CSV files, through real nodes. Each example's CSV run comes first;
// the other source types then run side by side (parallel subtests of this
// serial test, which sets the PostgreSQL variable they read): each
// simulation mostly waits for its cluster to start and elect a leader.
func TestExamplesFromEverySource(t *testing.T) {
	types := []string{"parquet", "sqlite", "postgres"}
	if testing.Short() {
		t.Skip("runs eight simulations")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel) // once the parallel subtests, which run after this body, end
	kinds := job.Registry{"sum": sum.Kind{}, "quantile": quantile.Kind{}}
	// One database for both examples' tables (named by example).
	pg := pgShared.Try(t)
	if pg != nil {
		t.Setenv("COHORT_TEST_PG", pg.ConnString(pg.Password))
	}
	run := func(t *testing.T, name, st string) map[string]any {
		dir := t.TempDir()
		spec := writeSpec(t, ctx, dir, name, st)
		res, err := sim.Run(ctx, spec, sim.RunOptions{Kinds: kinds, Out: filepath.Join(dir, "out"), Setup: simtest.ThresholdKeys(keyBits)})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"job", "timing", "bytes"} {
			delete(res, k)
		}
		return res
	}
	for _, name := range []string{"sum", "quantile"} {
		var want map[string]any
		t.Run(name+"/csv", func(t *testing.T) {
			want = run(t, name, "csv")
			t.Logf("%s: %v", name, want)
		})
		for _, st := range types {
			t.Run(name+"/"+st, func(t *testing.T) {
				t.Parallel() // after the body: every CSV result is in
				if st == "postgres" && pg == nil {
					t.Skip("no PostgreSQL test server (logged above)")
				}
				if want == nil {
					t.Fatalf("no result from %s's CSV files to compare with", name)
				}
				if res := run(t, name, st); !reflect.DeepEqual(res, want) {
					t.Fatalf("%s from %s: %v, want %v (from CSV)", name, st, res, want)
				}
			})
		}
	}
}

// A spec table whose source fails to read is refused before any node
// starts, naming the party, the source and the row, and leaves no output.
func TestCheckRefusesBadSources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	spec := writeSpec(t, ctx, dir, "sum", "sqlite")
	kinds := job.Registry{"sum": sum.Kind{}}
	for _, tc := range []struct{ from, to, want string }{
		{"north.db, table: admissions", "missing.db, table: admissions", "missing.db"},
		{"north.db, table: admissions", "north.db, query: \"SELECT ward, v FROM nope\"", "no such table"},
		{"north.db, table: admissions", "north.db, query: \"SELECT ward, NULL AS v FROM admissions\"", "NULL"},
		{"north.db, table: admissions", "../north.db, table: admissions", "stays inside"},
	} {
		body, _ := os.ReadFile(spec)
		bad := filepath.Join(dir, "bad.yaml")
		os.WriteFile(bad, []byte(strings.Replace(string(body), tc.from, tc.to, 1)), 0o644)
		out := filepath.Join(dir, "out")
		_, err := sim.Run(ctx, bad, sim.RunOptions{Kinds: kinds, Out: out})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", tc.to, err, tc.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: a refused spec left %s", tc.to, out)
		}
	}
}

// Running nodes read a table from their own mapping (node.yaml tables:)
// or the spec's path under tables_dir, and refuse a database the spec
// names: a spec is any member's, a node's sources are its own.
func TestNodesReadTheirOwnSources(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	writeSpec(t, ctx, dir, "sum", "sqlite") // north.db, south.db, west.db
	for _, p := range parties {
		b, _ := os.ReadFile(filepath.Join("..", "examples", "sum", "data", p+".csv"))
		os.WriteFile(filepath.Join(dir, p+".csv"), b, 0o644)
	}
	c := simtest.StartCluster(t, ctx, parties, sim.ClusterOptions{
		Kinds: job.Registry{"sum": sum.Kind{}}, TablesDir: dir, Setup: simtest.ThresholdKeys(keyBits),
		Tables: map[string]map[string]table.Source{"north": {"admissions": {SQLite: "north.db", Table: "admissions"}}},
	})
	defer c.Close()
	run := func(west string) (*node.JobRecord, error) {
		spec := "kind: sum\nparties:\n" +
			"  - {name: north, tables: [{name: admissions}]}\n" +
			"  - {name: south, tables: [{name: admissions, path: south.csv}]}\n" +
			"  - {name: west, tables: [{name: admissions, " + west + "}]}\n" +
			"schema: {admissions: {ward: categorical, v: numeric}}\nparams: {column: v}\n"
		id, err := c.Node("north").Submit(ctx, []byte(spec))
		if err != nil {
			return nil, err
		}
		return c.Node("north").Wait(ctx, id)
	}
	rec, err := run("source: {sqlite: west.db, table: admissions}")
	if err != nil {
		t.Fatal(err)
	}
	// west's policy refuses a table it cannot resolve, before it reads a
	// row, with the same answer whether the table is missing or may not be
	// named (a spec-named database): the submitter learns nothing of
	// west's files; west's own ledger says which.
	named := refusalOf(t, rec, "west")
	var res struct {
		Sum      float64           `json:"sum"`
		Excluded map[string]string `json:"excluded"`
	}
	rec, err = run("path: west.csv")
	if err != nil {
		t.Fatal(err)
	}
	res.Excluded = nil
	json.Unmarshal(rec.Result, &res)
	if rec.Status != node.StatusDone || res.Sum != 79.75 || len(res.Excluded) != 0 {
		t.Fatalf("mapped north, CSV south and west: %s %q %s", rec.Status, rec.Error, rec.Result)
	}
	rec, err = run("path: missing.csv")
	if err != nil {
		t.Fatal(err)
	}
	if missing := refusalOf(t, rec, "west"); missing != named || strings.Contains(missing, "missing.csv") || strings.Contains(missing, dir) {
		t.Fatalf("a missing table's refusal %q, a forbidden one's %q: want one answer, naming no file", missing, named)
	}
	entries, err := audit.ReadFile(filepath.Join(c.DataDir("west"), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var details []string
	for _, e := range entries {
		if e.Type == audit.DecisionType && e.Rule == "tables" {
			details = append(details, e.Reason)
		}
	}
	if len(details) != 2 || !strings.Contains(details[0], "only simulations") || !strings.Contains(details[1], "missing.csv") {
		t.Fatalf("west's own ledger: %q, want each refusal's cause", details)
	}
}

// refusalOf returns the reason party's policy refused a failed job with.
func refusalOf(t *testing.T, rec *node.JobRecord, party string) string {
	t.Helper()
	text := rec.Error + fmt.Sprint(rec.Failures)
	if rec.Status != node.StatusFailed || !strings.Contains(text, party+": rule tables: ") {
		t.Fatalf("job %s: %q, want a refusal by %s under rule tables", rec.Status, text, party)
	}
	text = text[strings.Index(text, party+": rule tables: "):]
	if end := strings.IndexAny(text, ";\n"); end > 0 {
		text = text[:end]
	}
	return strings.TrimSuffix(text, "map[]")
}
