package quantile

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/table"
)

// toSQLite copies each party's CSV of a consortium into an SQLite database
// beside it and points the spec at it.
func toSQLite(t *testing.T, path string, names []string) *job.Spec {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Dir(path)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	spec := string(raw)
	for _, n := range names {
		tb, err := table.Open(ctx, table.Source{Path: filepath.Join(dir, n+".csv")}, "t", map[string]table.Kind{"id": table.ID, "v": table.Numeric}, table.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := table.Write(ctx, table.Source{SQLite: filepath.Join(dir, n+".db"), Table: "t"}, tb); err != nil {
			t.Fatal(err)
		}
		spec = strings.ReplaceAll(spec, "path: "+n+".csv", "source: {sqlite: "+n+".db, table: t}")
	}
	dbPath := filepath.Join(dir, "spec-sqlite.yaml")
	if err := os.WriteFile(dbPath, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err := job.LoadSpec(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// Counted by SQLite each round, the search takes the same rounds to the
// same quantiles as from the CSV files; a table that changes while the job
// runs withdraws its party, named with why, instead of counting another
// table than the one the session opened with.
func TestCountsPushedDown(t *testing.T) {
	path, names := consortium(t, mixed(), ", quantiles: [0.5, 0.9], precision: 0.01")
	fromCSV, err := job.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	fromDB := toSQLite(t, path, names)
	secrets := dealt(t, names)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	opts := jobtest.Options{Secrets: secrets, Seed: make([]byte, job.SeedSize), Policy: lax()}
	want, err := jobtest.Run(ctx, Kind{}, fromCSV, opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := jobtest.Run(ctx, Kind{}, fromDB, opts)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(want.Result)
	b, _ := json.Marshal(got.Result)
	if string(a) != string(b) {
		t.Fatalf("from SQLite %s, from CSV %s", b, a)
	}

	changed := names[2]
	opts.OnStep = func(ev jobtest.Event) jobtest.Fault {
		if ev.Kind == jobtest.Committed && ev.Step.Round == 0 {
			db, err := sql.Open("sqlite", filepath.Join(filepath.Dir(path), changed+".db"))
			if err == nil {
				_, err = db.Exec(`INSERT INTO t VALUES ('new', 1)`)
				db.Close()
			}
			if err != nil {
				t.Error(err)
			}
		}
		return jobtest.Fault{}
	}
	if rep, err := jobtest.Run(ctx, Kind{}, fromDB, opts); err == nil {
		t.Fatalf("the job succeeded over a table that changed: %v", rep.Result)
	} else if !strings.Contains(err.Error(), "party "+changed+": table t changed while the job ran") {
		t.Fatalf("%v: want %s named with its changed table", err, changed)
	}
}
