package sim_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sum"
	"github.com/cohortdm/cohort/table"
)

// sim's check of a PostgreSQL table reads its header only: a missing
// table or column is refused before any node starts with the message the
// full check gives, a query whose rows would fail is not run, and a row
// Open refuses (a NULL) fails the job itself instead.
func TestCheckReadsNoPostgresRow(t *testing.T) {
	srv := pgShared.Start(t)
	t.Setenv("COHORT_TEST_PG", srv.ConnString(srv.Password))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, os.Getenv("COHORT_TEST_PG"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE adm (ward text, v float8)",
		"INSERT INTO adm VALUES ('a', 1), ('b', 2.5), ('c', 4)",
		"CREATE TABLE adm_null (ward text, v float8)",
		"INSERT INTO adm_null VALUES ('a', 1), ('b', NULL)",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close(ctx)
	kinds := job.Registry{"sum": sum.Kind{}}
	schema := map[string]table.Kind{"ward": table.Categorical, "v": table.Numeric}
	spec := func(source, column string) *job.Spec {
		t.Helper()
		raw := "kind: sum\nparties:\n"
		for _, p := range []string{"north", "south", "west"} {
			raw += "  - {name: " + p + ", tables: [{name: admissions, source: {postgres_env: COHORT_TEST_PG, " + source + "}}]}\n"
		}
		cols := "{ward: categorical, " + column + ": numeric}"
		if column == "ward" {
			cols = "{ward: numeric}"
		}
		raw += "schema: {admissions: " + cols + "}\nparams: {column: " + column + "}\n"
		s, err := job.ParseSpec([]byte(raw), "spec.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	full := func(src table.Source, schema map[string]table.Kind) error {
		return table.Check(ctx, src, schema, table.ReadOptions{})
	}
	pg := func(tbl, query string) table.Source {
		return table.Source{PostgresEnv: "COHORT_TEST_PG", Table: tbl, Query: query}
	}

	if err := sim.Check(ctx, spec("table: adm", "v"), kinds); err != nil {
		t.Fatalf("a good table: %v", err)
	}
	// Evaluating any row divides by zero: the full check does, sim's does not.
	div := "SELECT ward, 1 / (v - v) AS v FROM adm"
	if err := full(pg("", div), schema); err == nil || !strings.Contains(err.Error(), "division by zero") {
		t.Fatalf("the full check of %q: %v, want division by zero", div, err)
	}
	if err := sim.Check(ctx, spec("query: \""+div+";\"", "v"), kinds); err != nil {
		t.Fatalf("sim's check evaluated a row of %q: %v", div, err)
	}
	for _, tc := range []struct {
		name, source, column string
		src                  table.Source
		schema               map[string]table.Kind
	}{
		{"missing table", "table: nope", "v", pg("nope", ""), schema},
		{"missing column", "table: adm", "w", pg("adm", ""), map[string]table.Kind{"ward": table.Categorical, "w": table.Numeric}},
		{"text as numeric", "table: adm", "ward", pg("adm", ""), map[string]table.Kind{"ward": table.Numeric}},
		{"missing table in a query", "query: \"SELECT ward, v FROM nope\"", "v", pg("", "SELECT ward, v FROM nope"), schema},
	} {
		want := full(tc.src, tc.schema)
		err := sim.Check(ctx, spec(tc.source, tc.column), kinds)
		if want == nil || err == nil || !errors.Is(err, job.ErrSpec) || !errors.Is(err, table.ErrSource) || !strings.HasSuffix(err.Error(), want.Error()) {
			t.Errorf("%s: sim's check says %v, want the full check's %v", tc.name, err, want)
		}
	}

	// The NULL passes the check and fails the job, naming the column.
	s := spec("table: adm_null", "v")
	if err := sim.Check(ctx, s, kinds); err != nil {
		t.Fatalf("sim's check read a row: %v", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "spec.yaml")
	raw, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	_, err = sim.Run(ctx, path, sim.RunOptions{Kinds: kinds, Out: out, Setup: sim.ThresholdKeys(keyBits)})
	if err == nil || !strings.Contains(err.Error(), "failed") || !strings.Contains(err.Error(), `"v"`) {
		t.Fatalf("a NULL in the summed column: %v, want the job to fail naming the column", err)
	}
	if _, err := os.Stat(filepath.Join(out, "result.json")); !os.IsNotExist(err) {
		t.Fatalf("a failed job left a result: %v", err)
	}
}
