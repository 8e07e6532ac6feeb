package sum_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sum"
	"github.com/cohortdm/cohort/table"
)

// The query a party pushes down to its database is in its node's own log
// at debug level, with the job's id, and in no committed Raft record of
// any node: the log reaches every member, and the query names the
// organisation's tables. Over real nodes, each mapping the spec's table
// to an SQLite table of its own (catalogue name "loans", database table
// vault_ledger_q7).
func TestSumPushedDownQueryStaysInTheNodeLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	names := []string{"org01", "org02", "org03"}
	const physical = "vault_ledger_q7"
	tables := map[string]map[string]table.Source{}
	for i, name := range names {
		src := table.Source{SQLite: filepath.Join(dir, name+".db"), Table: physical}
		v := &table.Column{Name: "v", Kind: table.Numeric, Num: []float64{float64(i + 1), 2.5}, Str: []string{"", ""}}
		if err := table.Write(context.Background(), src, &table.Table{Name: "loans", Columns: []*table.Column{v}}); err != nil {
			t.Fatal(err)
		}
		tables[name] = map[string]table.Source{"loans": {SQLite: name + ".db", Table: physical}}
	}
	spec := filepath.Join(dir, "spec.yaml")
	yaml := "kind: sum\nparties:\n"
	for _, name := range names {
		yaml += "  - name: " + name + "\n    tables: [{name: loans}]\n"
	}
	yaml += "schema:\n  loans: {v: numeric}\nparams: {column: v}\n"
	if err := os.WriteFile(spec, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	var logged testkit.LockedBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := simtest.StartCluster(t, ctx, names, sim.ClusterOptions{
		TablesDir: dir, Tables: tables, Setup: simtest.ThresholdKeys(keyBits), Timing: fastTiming,
		Kinds:  job.Registry{"sum": sum.Kind{}},
		Logger: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	defer c.Close()
	if res := runJob(t, ctx, c, spec); res["sum"].(float64) != 1+2+3+3*2.5 {
		t.Fatalf("sum %v", res["sum"])
	}
	// The text handler writes the query quoted: FROM \"vault_ledger_q7\".
	query := `FROM \"` + physical + `\""`
	n := 0
	for _, line := range strings.Split(logged.String(), "\n") {
		if strings.Contains(line, query) {
			n++
			if !strings.Contains(line, "level=DEBUG") || !strings.Contains(line, `msg="table: query pushed down"`) || !strings.Contains(line, "job=") {
				t.Errorf("the query is logged as %q, want a debug record with the job", line)
			}
		}
	}
	if n < len(names) {
		t.Fatalf("%d log records carry the pushed-down query, want one per party at least:\n%s", n, logged.String())
	}
	c.Close() // the Raft stores are read whole once the nodes are down
	simtest.QueryNotInRaft(t, c, physical, "loans")
}
