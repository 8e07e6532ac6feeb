package bicluster

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/cohortdm/cohort/table"
)

// TestFigureDenQueryAgainstLoad times, for docs/sources.md, a party's
// first-iteration Den asked of the layer (columnWeights' ColumnSums: one
// query) against the load Phoenix needs anyway (table.Open with the
// job's schema, then FromTable), over a PostgreSQL table named by
// $COHORT_FIGURE_DEN_TABLE in the database of $COHORT_FIGURE_DEN_PG (a
// connection string); skipped without them (scripts/tables35-figure.sh).
func TestFigureDenQueryAgainstLoad(t *testing.T) {
	name := os.Getenv("COHORT_FIGURE_DEN_TABLE")
	if os.Getenv("COHORT_FIGURE_DEN_PG") == "" || name == "" {
		t.Skip("set COHORT_FIGURE_DEN_PG and COHORT_FIGURE_DEN_TABLE (scripts/tables35-figure.sh)")
	}
	ctx := context.Background()
	src := table.Source{PostgresEnv: "COHORT_FIGURE_DEN_PG", Table: name}
	agg, err := table.NewAggregator(src, nil, table.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cols, err := agg.Columns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	agg.Close()
	schema := map[string]table.Kind{}
	var nums []string
	for _, c := range cols {
		if c == "id" {
			schema[c] = table.ID
			continue
		}
		schema[c] = table.Numeric
		nums = append(nums, c)
	}
	if agg, err = table.NewAggregator(src, schema, table.ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	defer agg.Close()
	start := time.Now()
	den, rows, err := agg.ColumnSums(ctx, nums, &positive)
	if err != nil {
		t.Fatal(err)
	}
	query := time.Since(start)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start = time.Now()
	tb, err := table.Open(ctx, src, name, schema, table.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := FromTable(tb)
	if err != nil {
		t.Fatal(err)
	}
	load := time.Since(start)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	byName := map[string]float64{}
	for i, c := range nums {
		byName[c] = den[i]
	}
	for j, c := range m.ColNames { // the loaded table's order
		den[j] = byName[c]
	}
	if err := checkWeights(m, den, rows); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d rows × %d columns: Den query %.2f s, load %.2f s (%.0f MiB allocated), checked equal",
		rows, len(nums), query.Seconds(), load.Seconds(), float64(after.TotalAlloc-before.TotalAlloc)/(1<<20))
}
