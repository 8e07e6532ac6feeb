package sum_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sum"
)

// rewriteTable replaces one party's CSV in a consortium made by consortium().
func rewriteTable(t *testing.T, spec, party, csv string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(filepath.Dir(spec), party+".csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
}

func startSumCluster(t *testing.T, ctx context.Context, spec string, names []string) *sim.Cluster {
	t.Helper()
	c := simtest.StartCluster(t, ctx, names, sim.ClusterOptions{
		Kinds: job.Registry{"sum": sum.Kind{}}, TablesDir: filepath.Dir(spec),
		Setup: simtest.ThresholdKeys(keyBits), Timing: fastTiming,
	})
	t.Cleanup(func() { c.Close() })
	return c
}

// A party whose table has a header and no rows contributes zero, at once:
// it is neither excluded nor waited for.
func TestSumEmptyTable(t *testing.T) {
	spec, names, _ := consortium(t, 3, "", func(p, r int) float64 { return float64(p + 1) })
	rewriteTable(t, spec, names[1], "id,v\n")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := startSumCluster(t, ctx, spec, names)
	start := time.Now()
	res := runJob(t, ctx, c, spec)
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("took %v with an empty table", took)
	}
	if res["sum"].(float64) != 5*1+5*3 {
		t.Fatalf("sum %v, want 20", res["sum"])
	}
	if res["excluded"] != nil {
		t.Fatalf("excluded %v", res["excluded"])
	}
}

// A party that cannot read its input withdraws at once and is excluded
// with its own error; when every party fails, the failed job names each
// party and its error.
func TestSumPartyErrorsAreNamed(t *testing.T) {
	spec, names, _ := consortium(t, 3, "", func(p, r int) float64 { return 1 })
	rewriteTable(t, spec, names[2], "id,w\n1,2\n")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := startSumCluster(t, ctx, spec, names)
	start := time.Now()
	res := runJob(t, ctx, c, spec)
	if took := time.Since(start); took > time.Duration(fastTiming.StepMS)*time.Millisecond/4 {
		t.Errorf("took %v: the others waited for the failing party", took)
	}
	excl, _ := res["excluded"].(map[string]any)
	why, _ := excl[names[2]].(string)
	if !strings.Contains(why, `column "v"`) {
		t.Fatalf("excluded %v, want %s named with its error", res["excluded"], names[2])
	}

	for _, n := range names {
		rewriteTable(t, spec, n, "id,w\n1,2\n")
	}
	raw, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.Node(names[0]).Submit(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := c.Node(names[0]).Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != node.StatusFailed {
		t.Fatalf("job %s", rec.Status)
	}
	for _, n := range names {
		if !strings.Contains(rec.Failures[n], `column "v"`) {
			t.Errorf("failures %v: %s's error missing", rec.Failures, n)
		}
	}
	// The job's own error says how many are left and why each went.
	if !strings.Contains(rec.Error, "no party remains") || strings.Count(rec.Error, `column "v"`) != len(names) {
		t.Errorf("job error %q: want that no party remains and each party's cause", rec.Error)
	}
}

// Out-of-range and mistyped params are refused with the field named; a
// timeout that would overflow a duration is not quietly replaced by the
// default.
func TestSumParamsRefused(t *testing.T) {
	t.Parallel()
	for params, field := range map[string]string{
		"{column: v, timeout_ms: 9223372036854775807}": "params.timeout_ms",
		"{column: v, timeout_ms: -1}":                  "params.timeout_ms",
		"{column: v, frac_bits: x}":                    "params.frac_bits",
		"{column: v, value_bits: 0}":                   "params.value_bits",
		"{column: v, noise: {mechanism: cauchy}}":      "params.noise.mechanism",
		"{column: v, noise: {epsilon: [1]}}":           "params.noise.epsilon",
		"{column: v, colour: red}":                     "params.colour",
		"{}":                                           "params.column",
	} {
		spec, err := job.ParseSpec([]byte("kind: sum\nparties: [{name: a}]\nparams: "+params+"\n"), "spec.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if err := (sum.Kind{}).Validate(spec); err == nil || !strings.Contains(err.Error(), "field "+field) {
			t.Errorf("%s: %v, want an error naming %s", params, err, field)
		}
	}
}
