package table

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit"
)

// TestSourceFigures measures what docs/sources.md reports: rows per second
// and peak heap when the sum job's read (Open with the sum schema) loads an
// N-row table from each source. It runs only with COHORT_SOURCE_FIGURES=N:
//
//	COHORT_SOURCE_FIGURES=1000000 go test -run SourceFigures -v -timeout 30m ./table
func TestSourceFigures(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("COHORT_SOURCE_FIGURES"))
	if n <= 0 {
		t.Skip("set COHORT_SOURCE_FIGURES=ROWS to measure reading from every source")
	}
	ctx := context.Background()
	dir := t.TempDir()
	schema := map[string]Kind{"ward": Categorical, "v": Numeric}
	wards := []string{"cardio", "neuro", "ortho", "paeds", "onco"}
	t0 := &Table{Name: "admissions", Columns: []*Column{{Name: "ward", Kind: Categorical}, {Name: "v", Kind: Numeric}}}
	for i := 0; i < n; i++ {
		v := float64(i%1000) / 4
		t0.Columns[0].Str = append(t0.Columns[0].Str, wards[i%len(wards)])
		t0.Columns[1].Num = append(t0.Columns[1].Num, v)
		t0.Columns[1].Str = append(t0.Columns[1].Str, strconv.FormatFloat(v, 'g', -1, 64))
	}
	sources := []Source{
		{Path: filepath.Join(dir, "a.csv")},
		{Path: filepath.Join(dir, "a.parquet")},
		{SQLite: filepath.Join(dir, "a.db"), Table: "admissions"},
	}
	if srv := pgShared.Try(t); srv != nil {
		t.Setenv("COHORT_FIGURES_PG", srv.ConnString(srv.Password))
		sources = append(sources, Source{PostgresEnv: "COHORT_FIGURES_PG", Table: "admissions"})
	}
	for _, src := range sources {
		if err := Write(ctx, src, t0); err != nil {
			t.Fatal(err)
		}
	}
	t0 = nil
	t.Logf("%d rows, GOMAXPROCS %d", n, runtime.GOMAXPROCS(0))
	t.Logf("%-9s %10s %12s %14s", "source", "seconds", "rows/s", "peak heap MiB")
	for _, src := range sources {
		runtime.GC()
		peak := testkit.HeapPeak()
		start := time.Now()
		tb, err := Open(ctx, src, "admissions", schema, ReadOptions{})
		d := time.Since(start)
		p := peak()
		if err != nil {
			t.Fatal(err)
		}
		if tb.NumRows() != n {
			t.Fatalf("%s: %d rows", src, tb.NumRows())
		}
		t.Logf("%-9s %10.2f %12.0f %14.0f", src.Type(), d.Seconds(), float64(n)/d.Seconds(), float64(p)/(1<<20))
	}
}
