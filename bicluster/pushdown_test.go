package bicluster_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/table"
)

// TestSimDenFromTheLayer: over real nodes, each party's table in an
// SQLite database of its own (catalogue name m, database table vault_m,
// with a column "secret" the spec's schema leaves out, as a policy keeps a
// column home), the first iteration's Den is one pushed-down query per
// party, in its node's log at debug level, summing Σ max(x, 0) of every
// numeric column and naming neither the secret column nor an infinity;
// the biclusters are those of the same tables read from CSV; no Raft
// store holds the database table's name.
func TestSimDenFromTheLayer(t *testing.T) {
	t.Parallel()
	spec, names := simData(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out := t.TempDir()
	if _, err := sim.Run(ctx, spec, sim.RunOptions{Kinds: kinds(""), Out: out, Setup: simtest.ThresholdKeys(simKeyBits), Timing: fastTiming}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := normalised(t, raw)

	const physical = "vault_m"
	dir := filepath.Dir(spec)
	tables := map[string]map[string]table.Source{}
	var schema []string
	for _, name := range names {
		tb, err := table.Load(filepath.Join(dir, name+".csv"), "m", nil)
		if err != nil {
			t.Fatal(err)
		}
		simtest.WriteWithSecret(t, ctx, tb, table.Source{SQLite: filepath.Join(dir, name+".db"), Table: physical})
		tables[name] = map[string]table.Source{"m": {SQLite: name + ".db", Table: physical}}
		if schema == nil {
			for _, c := range tb.Columns {
				kind := "numeric"
				if c.Name == "id" {
					kind = "id"
				}
				schema = append(schema, c.Name+": "+kind)
			}
		}
	}
	yaml := "kind: bicluster\nparties:\n"
	for _, name := range names {
		yaml += "  - name: " + name + "\n    tables: [{name: m}]\n"
	}
	yaml += "schema:\n  m: {" + strings.Join(schema, ", ") + "}\nparams: {}\n"
	dbSpec := filepath.Join(dir, "db-spec.yaml")
	if err := os.WriteFile(dbSpec, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	var logged testkit.LockedBuffer
	c := simtest.StartCluster(t, ctx, names, sim.ClusterOptions{
		Kinds: kinds(""), TablesDir: dir, Tables: tables, Setup: simtest.ThresholdKeys(simKeyBits), Timing: fastTiming,
		Logger: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	rec := submitWait(t, ctx, c.Node("org01"), dbSpec, 0, nil)
	if got := normalised(t, rec.Result); !slices.Equal(got, want) {
		t.Fatalf("from SQLite:\n%v\nfrom CSV:\n%v", got, want)
	}
	sums := regexp.MustCompile(`TOTAL\(CASE WHEN \\"c\d+\\" < \? THEN \? ELSE \\"c\d+\\" END\)`)
	n := 0
	for _, line := range strings.Split(logged.String(), "\n") {
		if !strings.Contains(line, `msg="table: query pushed down"`) {
			continue
		}
		if strings.Contains(line, "secret") || strings.Contains(line, "Inf") && !strings.Contains(line, "9e999") {
			t.Errorf("a pushed-down query names the column kept home or an infinity: %s", line)
		}
		if got := len(sums.FindAllString(line, -1)); got == 20 && strings.Contains(line, `FROM \"`+physical+`\"`) {
			n++
			if !strings.Contains(line, "level=DEBUG") || !strings.Contains(line, "job=") {
				t.Errorf("the query is logged as %q, want a debug record with the job", line)
			}
		}
	}
	if n != len(names) {
		t.Fatalf("%d records of one query summing the 20 columns' weights, want one per party:\n%s", n, logged.String())
	}
	c.Close() // the Raft stores are read whole once the nodes are down
	simtest.QueryNotInRaft(t, c, physical, "bicluster")
}
