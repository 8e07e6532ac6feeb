package sum_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sum"
	"github.com/cohortdm/cohort/wire"
)

// A root colluding with the coordinator withholds the total from a party
// that does not decrypt (issue 30, docs/security.md "Formed totals and a
// lying root"): over five real nodes, root org01 (org05 coordinates) never
// passes the total or the result down to org04, which is not among the
// t+1 decryptors asked up front, and decrypts with org02's and org03's
// shares. org04 must still record the total formed, having heard from the
// decryptors themselves, so that its guard refuses any later aggregate of
// the column in this job without a party of this one; before, org04 ended
// for want of its parent with nothing recorded, and could be made to help
// decrypt a re-run without the victim.
//
// org04 learns it only at its deadlines (it waits for its parent, then
// for the last honest share), so the job's length is a few hops: the step
// runs with a 15 s timeout (hops of about a second) and again four times
// longer if an honest party missed a hop (testkit.RetryLonger); it waited
// out 5 s hops (16 s) before.
func TestSumLyingRootCannotHideFormedTotal(t *testing.T) {
	t.Parallel()
	testkit.RetryLonger(t, 15*time.Second, func(step time.Duration) error {
		return lyingRootHidesTotal(t, step)
	})
}

// lyingRootHidesTotal runs the scenario of
// TestSumLyingRootCannotHideFormedTotal with the given step timeout on a
// fresh cluster and says what is wrong with its verdict.
func lyingRootHidesTotal(t *testing.T, step time.Duration) error {
	spec, names, want := consortium(t, 5, fmt.Sprintf(", timeout_ms: %d", step.Milliseconds()), randomValue(11))
	const root, coordinator, kept = "org01", "org05", "org04"
	withhold := wrapped{send: func(ctx context.Context, p job.Participant, to string, m *wire.Message, d wire.Disclosure) error {
		if to == kept && (m.Type == secureagg.TypeDown || m.Type == secureagg.TypeResult) {
			return nil // as if sent: org04 waits in vain
		}
		return p.Send(ctx, to, m, d)
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute+3*step)
	defer cancel()
	c := simtest.StartCluster(t, ctx, names, sim.ClusterOptions{
		TablesDir: filepath.Dir(spec), Setup: simtest.ThresholdKeys(keyBits), Timing: fastTiming,
		KindsFor: func(name string) job.Registry {
			if name == root {
				return job.Registry{"sum": withhold}
			}
			return job.Registry{"sum": sum.Kind{}}
		},
	})
	defer c.Close()
	if err := c.MakeLeader(ctx, coordinator); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	n := c.Node(coordinator)
	id, err := n.Submit(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := n.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	// The root's result includes every party: the job is done, and the
	// root and the coordinator know the total over all five.
	if rec.Status != node.StatusDone {
		return fmt.Errorf("job %s: %s", rec.Status, rec.Error)
	}
	var res map[string]any
	if err := json.Unmarshal(rec.Result, &res); err != nil {
		t.Fatal(err)
	}
	if got, _ := res["sum"].(float64); math.Abs(got-want) > 1e-3 {
		return fmt.Errorf("sum %v, want %v", res["sum"], want)
	}
	// org04 never held the total, yet its policy recorded it formed.
	if !formedAt(t, c, kept, id) {
		return fmt.Errorf("%s did not record the total formed: a later aggregate of the column without a party of it would pass its guard", kept)
	}
	return nil
}

// formedAt reads name's policy state and says whether it records a total
// of job id formed.
func formedAt(t *testing.T, c *sim.Cluster, name, id string) bool {
	t.Helper()
	st, err := policy.OpenStore(filepath.Join(c.DataDir(name), policy.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	return len(st.Formed(id)) > 0
}
