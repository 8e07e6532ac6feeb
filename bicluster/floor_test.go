package bicluster_test

import (
	"context"
	"fmt"
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

// TestSimSlotBelowFloorNotDecrypted: over real nodes whose policy's floor
// is three parties, a merge whose one kept group holds the locals of two
// of the three parties (org01's and org02's; org03's differs) is refused
// by every party before it sends anything of the merge, naming the rule
// and the coordinator and neither the floor nor the group's count: the
// group's sums would be decrypted over two parties, though the step runs
// over three (issue 30, finding 9: the floor is the node's, per merge
// slot, not the step's).
func TestSimSlotBelowFloorNotDecrypted(t *testing.T) {
	spec, parties, _ := levelConsortium(t, []float64{10, 10, 100}, []int{6, 6, 6})
	pol := policy.Permissive()
	pol.Floors.MinParties = 3
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := simtest.StartCluster(t, ctx, parties, sim.ClusterOptions{
		Kinds: kinds(""), TablesDir: filepath.Dir(spec), Setup: sim.ThresholdKeys(simKeyBits), Timing: fastTiming, Policy: pol,
	})
	raw, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	id, err := cl.Node("org01").Submit(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := cl.Node("org01").Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status == node.StatusDone {
		t.Fatalf("a group of two parties' locals was decrypted under a floor of three: %s", rec.Result)
	}
	iterated := false // a positive control: the iterations' shares were sent
	for _, p := range parties {
		want := fmt.Sprintf("party %s refuses merge round 0 of coordinator ", p)
		rule := fmt.Sprintf("the sums of group 0: refused by %s's policy: rule floors.min_parties", p)
		if !strings.Contains(rec.Error, want) || !strings.Contains(rec.Error, rule) {
			t.Errorf("the job's error %q does not say %q and %q", rec.Error, want, rule)
		}
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
		t.Error("no ledger holds a share of the iterations: the floor held the whole job back, not the group")
	}
	for _, digit := range []string{"2", "3"} {
		if strings.Contains(rec.Error, "parties"+digit) || strings.Contains(rec.Error, digit+" parties") || strings.Contains(rec.Error, digit+" of") {
			t.Errorf("the job's error %q states a count", rec.Error)
		}
	}
}
