package quantile

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/policy"
)

// A coordinator that skips the release step still publishes the values:
// the last count round's committed counts determine them, and any member
// can derive them from the log. So each value is counted against every
// party's allowance of exact releases before the count round that could
// finish its search, not at the release step. Over real nodes whose
// allowance is one value per dataset: a median published without the
// release step used it up, and a second median over the same datasets is
// refused at admission, naming the rule; the skipped job's ledgers and
// messages stay within the leakage profile.
func TestSkippedReleaseStillCounts(t *testing.T) {
	t.Parallel()
	columns := dense()
	spec, parties := consortium(t, columns, denseParams("0.5"))
	pol := policy.Default()
	pol.ExactReleases = 1
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	var capt capture
	c := policyCluster(t, ctx, spec, parties, capt.registry("org02", liar{round: noRound, skipRelease: true}.Coordinate), pol)
	if err := c.MakeLeader(ctx, "org01"); err != nil {
		t.Fatal(err)
	}
	n := c.Node("org01")
	id := submit(t, ctx, n, spec)
	rec, got := waitJob(t, ctx, n, id)
	if len(got.Quantiles) != 1 {
		t.Fatalf("the skipped release published %s", rec.Result)
	}
	for _, r := range rec.Steps {
		if r.Phase == releaseRound.Phase {
			t.Fatalf("the coordinator ran the release step it was to skip")
		}
	}
	checkLedgers(t, c, parties, id, -1)
	capt.checkSent(t, columns[1], pooledOf(columns))
	capt.reset()

	id = submit(t, ctx, n, spec)
	rec = failedJob(t, ctx, n, id, "the allowance was spent by the values published without a release step")
	if !strings.Contains(rec.Error, "exact_releases") {
		t.Errorf("the failure %q does not name the rule exact_releases", rec.Error)
	}
	checkNoData(t, rec.Error)
	t.Logf("refused: %s", rec.Error)
}
