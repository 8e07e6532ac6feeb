package sjc_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/sjc/internal/reftree"
	"github.com/cohortdm/cohort/tree"
)

// TestJobHiddenGainsXuExample: with hide_gains the thesis's example grows
// the same tree as in-process.
func TestJobHiddenGainsXuExample(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	spec, g, data := loadSpec(t, filepath.Join("testdata", "xu-example", "spec.yaml"))
	want, err := sjc.Build(g, data, sjc.Params{MaxDepth: 10, MinSplit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if spec.Params == nil {
		spec.Params = map[string]any{}
	}
	spec.Params["hide_gains"] = true
	run, err := runJob(t, ctx, spec, jobtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := tree.Diff(want, run.tree); d != "" {
		t.Fatalf("hidden-gains tree differs from the in-process tree: %s", d)
	}
}

// TestJobHiddenGainsRandomSchemas: with hide_gains the job grows exactly
// the reference's tree (join then build) on random acyclic schemas,
// several tables per party included.
func TestJobHiddenGainsRandomSchemas(t *testing.T) {
	t.Parallel()
	const want = 12
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rng := rand.New(rand.NewPCG(32, 2026))
	done, splits, shared, crossed := 0, 0, 0, 0
	for attempt := 0; done < want; attempt++ {
		rc := newRandomCase(rng)
		g, err := sjc.NewGraph(rc.spec)
		if err != nil {
			t.Fatal(err)
		}
		data := loadTables(t, rc.spec, rc.csv)
		ref, rerr := reftree.Build(g, data, rc.p)
		if rerr != nil {
			continue
		}
		spec := writeCase(t, rc)
		spec.Params["hide_gains"] = true
		run, err := runJob(t, ctx, spec, jobtest.Options{Seed: []byte(fmt.Sprint(attempt))})
		if err != nil {
			t.Fatalf("case %d (%s, %d tables, %d parties): %v", attempt, rc.shape, len(g.Tables), len(spec.Parties), err)
		}
		if d := tree.Diff(ref, run.tree); d != "" {
			t.Fatalf("case %d (%s, %d tables, params %+v): hidden-gains tree differs from the reference: %s", attempt, rc.shape, len(g.Tables), rc.p, d)
		}
		if len(g.Tables) > len(g.PartiesBut("")) {
			shared++
		}
		if len(g.PartiesBut("")) >= 2 {
			crossed++
		}
		n, _ := run.tree.Size()
		splits += (n - 1) / 2
		done++
	}
	if shared == 0 || crossed == 0 {
		t.Errorf("%d cases with a party holding two tables, %d with two parties holding tables: a kind of comparison went untested", shared, crossed)
	}
	t.Logf("%d random schemas (%d with a party holding two tables, %d with secure comparisons): hidden-gains tree = reference tree (%d internal nodes)", done, shared, crossed, splits)
}
