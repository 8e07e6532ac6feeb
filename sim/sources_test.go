package sim_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/pgtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/quantile"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sum"
	"github.com/cohortdm/cohort/table"
)

func init() {
	if err := paillier.AllowTestKeySizes(); err != nil {
		panic(err)
	}
}

// example is a bundled example: its spec's kind, table, schema and params.
type example struct {
	kind, table, schema, params string
	columns                     map[string]table.Kind
}

var examples = map[string]example{
	"sum": {"sum", "admissions", "{ward: categorical, v: numeric}", "{column: v}",
		map[string]table.Kind{"ward": table.Categorical, "v": table.Numeric}},
	"quantile": {"quantile", "stays", "{ward: categorical, stay: numeric}", "{column: stay, quantiles: [0.5, 0.9], precision: 0.05}",
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
// their CSV files, through real nodes.
func TestExamplesFromEverySource(t *testing.T) {
	types := []string{"csv", "parquet", "sqlite", "postgres"}
	if testing.Short() {
		t.Skip("runs eight simulations")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	kinds := job.Registry{"sum": sum.Kind{}, "quantile": quantile.Kind{}}
	for _, name := range []string{"sum", "quantile"} {
		var want map[string]any
		for _, st := range types {
			t.Run(name+"/"+st, func(t *testing.T) {
				if st == "postgres" {
					srv := pgtest.Start(t)
					t.Setenv("COHORT_TEST_PG", srv.ConnString(srv.Password))
				}
				dir := t.TempDir()
				spec := writeSpec(t, ctx, dir, name, st)
				res, err := sim.Run(ctx, spec, sim.RunOptions{Kinds: kinds, Out: filepath.Join(dir, "out"), Setup: sim.ThresholdKeys(1024)})
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range []string{"job", "timing", "bytes"} {
					delete(res, k)
				}
				if want == nil {
					want = res
					t.Logf("%s: %v", name, res)
					return
				}
				if !reflect.DeepEqual(res, want) {
					t.Fatalf("%s from %s: %v, want %v (from CSV)", name, st, res, want)
				}
			})
		}
	}
}

// A spec table whose source fails to read is refused before any node
// starts, naming the party, the source and the row, and leaves no output.
func TestCheckRefusesBadSources(t *testing.T) {
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
