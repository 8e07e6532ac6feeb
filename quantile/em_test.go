package quantile

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/wire"
)

// emSpec is specWith over three parties, as the mechanism needs.
func emSpec(t *testing.T, params string) *job.Spec {
	t.Helper()
	s, err := job.ParseSpec([]byte("kind: quantile\nparties: [{name: a}, {name: b}, {name: c}]\nparams: "+params+"\n"), "spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Every bad param of the exponential mechanism is refused naming its field.
func TestValidateExponential(t *testing.T) {
	t.Parallel()
	ok := "column: v, range: [0, 100], precision: 1, noise: {mechanism: exponential, epsilon: 1}"
	if err := (Kind{}).Validate(emSpec(t, "{"+ok+"}")); err != nil {
		t.Fatalf("%s: %v", ok, err)
	}
	for params, field := range map[string]string{
		"column: v, precision: 1, noise: {mechanism: exponential, epsilon: 1}":                                  "params.range",
		"column: v, range: [0, 100], precision: 0, noise: {mechanism: exponential, epsilon: 1}":                 "params.precision",
		"column: v, range: [0, 100], precision: 0.01, noise: {mechanism: exponential, epsilon: 1}":              "params.precision",
		"column: v, range: [0, 100], precision: 1, noise: {mechanism: exponential, epsilon: 1, delta: 0.1}":     "params.noise.delta",
		"column: v, range: [0, 100], precision: 1, noise: {mechanism: exponential, epsilon: 1, sensitivity: 1}": "params.noise.sensitivity",
		"column: v, range: [0, 100], precision: 1, noise: {mechanism: exponential, epsilon: 0}":                 "params.noise.epsilon",
		"column: v, range: [0, 100], precision: 1, noise: {mechanism: exponential, epsilon: 1e-9}":              "params.noise.epsilon",
		"column: v, range: [0, 100], precision: 1, noise: {mechanism: exponential, epsilon: 1, colluders: 3}":   "params.noise.colluders",
	} {
		err := (Kind{}).Validate(emSpec(t, "{"+params+"}"))
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v, want an error naming %s", params, err, field)
		}
	}
	err := (Kind{}).Validate(specWith(t, "{"+ok+"}"))
	if err == nil || !strings.Contains(err.Error(), "parties") {
		t.Errorf("one party: %v, want an error naming parties", err)
	}
}

// The exponential mechanism over real nodes under the default policy
// (budget 100): at ε = 40 its noise is a twentieth of a row, so the draw
// is the candidate nearest the median; every party spends ε on its
// dataset column once per draw and makes no exact release; its ledger
// holds only secret shares of phase em, the public result and control
// messages; a coordinator that runs the step without a party is refused.
func TestExponentialOverRealNodes(t *testing.T) {
	t.Parallel()
	columns := dense()
	pooled := pooledOf(columns)
	spec, parties := consortium(t, columns, ", quantiles: [0.5], precision: 0.5, range: [100, 131], "+
		"noise: {mechanism: exponential, epsilon: 40}")
	pol := policy.Default()
	pol.Budget.Epsilon = 100
	pol.ExactReleases = 0
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := policyCluster(t, ctx, spec, parties, nil, pol)
	if err := c.MakeLeader(ctx, "org01"); err != nil {
		t.Fatal(err)
	}
	n := c.Node("org01")
	id := submit(t, ctx, n, spec)
	_, got := waitJob(t, ctx, n, id)
	ystar := pooled[rank(0.5, int64(len(pooled)))-1]
	if len(got.Quantiles) != 1 || math.Abs(got.Quantiles[0].Value-ystar) > 1 {
		t.Fatalf("result %+v, the exact median is %v", got, ystar)
	}
	for _, name := range parties {
		show, err := c.Node(name).Policy().Show()
		if err != nil {
			t.Fatal(err)
		}
		if e := show.Spent[name+".csv.v"].Epsilon; e < 40 || math.Mod(e, 40) != 0 {
			t.Errorf("%s spent ε %v on its column, want draws of 40", name, e)
		}
		entries, err := audit.ReadFile(c.LedgerPath(name))
		if err != nil {
			t.Fatal(err)
		}
		shares := 0
		for _, e := range entries {
			switch d := wire.Disclosure(e.Disclosure); {
			case e.Job != id || d == wire.DisclosePublicResult || d == wire.DiscloseControl:
			case d == wire.DiscloseSecretShare && e.Phase == emRound.Phase:
				shares++
			default:
				t.Errorf("%s sent %s disclosing %q in phase %q", name, e.Type, e.Disclosure, e.Phase)
			}
		}
		if shares == 0 {
			t.Errorf("%s's ledger records no secret share", name)
		}
	}
}
