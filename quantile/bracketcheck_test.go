package quantile

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/wire"
)

// sparseMedian is three parties' columns whose pooled median is one of
// three rows alone near 50, between 101 rows near 10 and 100 near 90: a
// bracket around it soon holds those three rows only, fewer than the
// default floor's k = 5. (Long values, so that the leakage check's
// needles cannot turn up in random shares by chance.)
func sparseMedian() [][]float64 {
	const low, mid, high = 10.123456789, 50.123456789, 90.123456789
	rep := func(v float64, n int) []float64 { return slices.Repeat([]float64{v}, n) }
	return [][]float64{
		append(rep(low, 40), mid),
		slices.Concat(rep(low, 30), rep(high, 30), []float64{mid}),
		slices.Concat(rep(low, 31), rep(high, 70), []float64{mid}),
	}
}

// The median of sparseMedian under the default policy is refused at the
// counting round whose counts would leave its bracket with those three
// rows, before the round's counts are decrypted: the refusal names
// floors.min_k and no number; no committed round's counts pin the median
// to fewer than five rows (the committed brackets all hold more); every
// message is one the profile allows. Where a bracket keeps five rows or
// more (dense), the check lets the search run (TestExactReleasesBounded).
func TestSmallBracketRefusedBeforeDecryption(t *testing.T) {
	t.Parallel()
	columns := sparseMedian()
	pooled := pooledOf(columns)
	spec, parties := consortium(t, columns, ", quantiles: [0.5], precision: 0.5, range: [0, 100]")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var capt capture
	c := policyCluster(t, ctx, spec, parties, capt.registry("org02", nil), policy.Default())
	if err := c.MakeLeader(ctx, "org01"); err != nil {
		t.Fatal(err)
	}
	n := c.Node("org01")
	id := submit(t, ctx, n, spec)
	rec := failedJob(t, ctx, n, id, "the median's bracket would hold three rows")
	if !strings.Contains(rec.Error, "would leave a quantile's bracket with fewer rows than a party's floors.min_k") {
		t.Fatalf("the failure %q is not the brackets' check", rec.Error)
	}
	checkNoData(t, rec.Error)
	checkLedgers(t, c, parties, id, -1)
	capt.checkSent(t, columns[1], pooled)
	capt.checkDecisions(t, pooled, parties)

	// Replay the committed rounds: every bracket they leave holds five
	// rows or more.
	exact := newSearch([]float64{0.5}, 0.5, []float64{0, 100})
	capt.mu.Lock()
	defer capt.mu.Unlock()
	for _, cm := range capt.decisions {
		var d decision
		if cm.decision == nil || cm.phase != count.Phase || wire.Unmarshal(cm.decision, &d) != nil || d.Counts == nil {
			continue
		}
		a, err := count.Args(job.Step{Phase: count.Phase, Args: cm.args})
		if err != nil {
			t.Fatal(err)
		}
		var total *int64
		cs := d.Counts
		if a.Total {
			total, cs = &cs[0], cs[1:]
		}
		if err := exact.apply(total, a.Thresholds, cs); err != nil {
			t.Fatal(err)
		}
	}
	if !exact.counted {
		t.Fatal("the search never counted the rows")
	}
	if b := exact.brackets[0]; b.cHi-b.cLo < 5 {
		t.Errorf("the committed counts leave a bracket of %d rows", b.cHi-b.cLo)
	}
}
