package kde_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/kde"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
)

// Resubmitting a kde job publishes a fresh sample of the same rows each
// time, so every party's policy bounds the samples of a dataset
// (synthetic_releases): over real nodes allowing one, the example runs
// once and is refused the second time, every party naming the rule.
func TestSyntheticAllowanceNodes(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	raw, err := os.ReadFile(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := job.ParseSpec(raw, exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	pol := policy.Default()
	pol.SyntheticReleases = 1
	cl := simtest.StartCluster(t, ctx, spec.PartyNames(), sim.ClusterOptions{
		Kinds: job.Registry{"kde": kde.Kind{}}, TablesDir: filepath.Dir(exampleSpec), Policy: pol,
		Timing: node.Timing{HeartbeatMS: 2000, ElectionMS: 2000, StepMS: 60000},
	})
	leader, err := cl.WaitLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var recs []*node.JobRecord
	for range 2 {
		id, err := leader.Submit(ctx, raw)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := leader.Wait(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if recs[0].Status != node.StatusDone {
		t.Fatalf("the first sample: %s %s", recs[0].Status, recs[0].Error)
	}
	if recs[1].Status == node.StatusDone || !strings.Contains(recs[1].Error, "synthetic_releases") {
		t.Fatalf("the second sample: %s %q, want a refusal naming synthetic_releases", recs[1].Status, recs[1].Error)
	}
	for _, p := range spec.PartyNames() {
		if f := recs[1].Failures[p]; !strings.Contains(f, "synthetic_releases") {
			t.Errorf("%s's failure %q does not name the rule", p, f)
		}
	}
}
