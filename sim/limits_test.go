package sim_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/kinds"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sim"
)

// A node's max_table_rows refuses a kind that loads whole tables into
// memory (sjc), naming the table and the kind but not how many rows the
// table has; a sum over tables above the limit still runs, since its rows
// are streamed and only the total is kept.
func TestMaxTableRowsRefusesWholeTableKinds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := filepath.Join("..", "examples")
	c := simtest.StartCluster(t, ctx, parties, sim.ClusterOptions{
		Kinds: kinds.All(), TablesDir: dir, Setup: simtest.ThresholdKeys(keyBits), MaxTableRows: 2,
	})
	run := func(example string) *node.JobRecord {
		t.Helper()
		spec, err := os.ReadFile(filepath.Join(dir, example, "spec.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		// The specs' paths are relative to their example's directory.
		spec = []byte(strings.ReplaceAll(string(spec), "path: data/", "path: "+example+"/data/"))
		id, err := c.Node("north").Submit(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := c.Node("north").Wait(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	if rec := run("sum"); rec.Status != node.StatusDone {
		t.Fatalf("sum over tables of 2 to 4 rows with max_table_rows 2: %s %q, want done (streamed)", rec.Status, rec.Error)
	}
	rec := run("sjc")
	text := rec.Error + " " + strings.Join(mapValues(rec.Failures), " ")
	if rec.Status != node.StatusFailed || !strings.Contains(text, "table policies: kind sjc loads whole tables") ||
		!strings.Contains(text, "max_table_rows") {
		t.Fatalf("sjc over tables above max_table_rows: %s %q, want refused naming the table, the kind and the setting", rec.Status, text)
	}
	t.Logf("refusal: %s", text)
	for _, n := range []string{"60", "59", "61"} { // policies.csv's rows
		if strings.Contains(text, " "+n+" ") {
			t.Errorf("the refusal %q gives the table's size", text)
		}
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
