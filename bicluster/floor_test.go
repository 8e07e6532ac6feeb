package bicluster_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/sim"
)

// TestSimGroupBelowFloorLeftOut: over real nodes whose policy's floor is
// three parties, a merge group holding the locals of two of the three
// parties (org01's and org02's; org03's differs) is never aggregated: its
// sums would be decrypted over two parties, though the step runs over
// three (issue 30, finding 9: the floor is the node's, per merge slot, not
// the step's). By default (params.min_group_parties 3) the job leaves the
// group out, the same at every party, and ends without it; before, every
// party refused the merge and the job failed. A spec that asks for groups
// of two is refused at admission by every node, naming the rule and the
// spec's field, never the floor or a count.
func TestSimGroupBelowFloorLeftOut(t *testing.T) {
	t.Parallel()
	spec, parties, _ := levelConsortium(t, []float64{10, 10, 100}, []int{6, 6, 6})
	pol := policy.Permissive()
	pol.Floors.MinParties = 3
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := simtest.StartCluster(t, ctx, parties, sim.ClusterOptions{
		Kinds: kinds(""), TablesDir: filepath.Dir(spec), Setup: simtest.ThresholdKeys(simKeyBits), Timing: fastTiming, Policy: pol,
	})
	raw, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	submit := func(spec []byte) (string, *node.JobRecord) {
		id, err := cl.Node("org01").Submit(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := cl.Node("org01").Wait(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return id, rec
	}
	id, rec := submit(raw)
	if rec.Status != node.StatusDone {
		t.Fatalf("the job failed instead of leaving the group out: %s", rec.Error)
	}
	var res struct {
		Biclusters []json.RawMessage `json:"biclusters"`
	}
	if err := json.Unmarshal(rec.Result, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Biclusters) != 0 {
		t.Fatalf("the group of two parties was published: %s", rec.Result)
	}
	iterated := false // a positive control: the iterations' shares were sent
	for _, p := range parties {
		entries, err := audit.ReadFile(cl.LedgerPath(p))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Job != id {
				continue
			}
			iterated = iterated || e.Phase == "iterate" && e.Type == secureagg.TypeShare
			if e.Phase == "merge" && e.Type != "job/output" {
				t.Errorf("%s sent %s of the merge to %s", p, e.Type, e.Peer)
			}
		}
	}
	if !iterated {
		t.Error("no ledger holds a share of the iterations: the job did not run")
	}

	_, rec = submit([]byte(strings.Replace(string(raw), "params: {", "params: {min_group_parties: 2, ", 1)))
	if rec.Status == node.StatusDone {
		t.Fatalf("groups of two were admitted under a floor of three: %s", rec.Result)
	}
	for _, p := range parties {
		want := p + ": rule floors.min_parties"
		if !strings.Contains(rec.Error, want) || !strings.Contains(rec.Error, "params.min_group_parties") {
			t.Errorf("the job's error %q does not say %q and the spec's field", rec.Error, want)
		}
	}
	for _, digit := range []string{"2", "3"} {
		if strings.Contains(rec.Error, "parties"+digit) || strings.Contains(rec.Error, digit+" parties") || strings.Contains(rec.Error, digit+" of") {
			t.Errorf("the job's error %q states a count", rec.Error)
		}
	}
}
