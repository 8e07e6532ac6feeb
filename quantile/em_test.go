package quantile

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/mpc/mpcjob"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/wire"
)

// emSpec is specWith over three parties, as the mechanism needs.
func emSpec(t *testing.T, params string) *job.Spec {
	t.Helper()
	return specOver(t, "[{name: a}, {name: b}, {name: c}]", params)
}

// Every bad param of the exponential mechanism is refused naming its field.
func TestValidateExponential(t *testing.T) {
	t.Parallel()
	ok := "column: v, range: [0, 100], precision: 1, noise: {mechanism: exponential, epsilon: 1}"
	if err := (Kind{}).Validate(emSpec(t, "{"+ok+"}")); err != nil {
		t.Fatalf("%s: %v", ok, err)
	}
	refusedNaming(t, emSpec, map[string]string{
		"column: v, precision: 1, noise: {mechanism: exponential, epsilon: 1}":                                  "params.range",
		"column: v, range: [0, 100], precision: 0, noise: {mechanism: exponential, epsilon: 1}":                 "params.precision",
		"column: v, range: [0, 100], precision: 0.01, noise: {mechanism: exponential, epsilon: 1}":              "params.precision",
		"column: v, range: [0, 100], precision: 1, noise: {mechanism: exponential, epsilon: 1, delta: 0.1}":     "params.noise.delta",
		"column: v, range: [0, 100], precision: 1, noise: {mechanism: exponential, epsilon: 1, sensitivity: 1}": "params.noise.sensitivity",
		"column: v, range: [0, 100], precision: 1, noise: {mechanism: exponential, epsilon: 0}":                 "params.noise.epsilon",
		"column: v, range: [0, 100], precision: 1, noise: {mechanism: exponential, epsilon: 1e-9}":              "params.noise.epsilon",
		"column: v, range: [0, 100], precision: 1, noise: {mechanism: exponential, epsilon: 1, colluders: 3}":   "params.noise.colluders",
	})
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
		t.Logf("%s spent %v", name, show.Spent[name+".csv.v"].Epsilon)
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

// emLiar coordinates the exponential mechanism but asks for the step
// over parties (nil: every party) with a grid of rounds (0: the spec's).
type emLiar struct {
	Kind
	drop   int // how many parties to leave out, from the first
	rounds int
}

func (l emLiar) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	p, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	a := emArgs{Rounds: p.rounds}
	if l.rounds != 0 {
		a.Rounds = l.rounds
	}
	call := job.Call[emArgs]{Parties: c.Spec().PartyNames()[l.drop:], Args: a}
	done, err := emRound.Run(ctx, c, call, func(o *job.Outcome[emOutput]) (emDecision, error) {
		return decideEM(o, len(p.Quantiles), 1<<p.rounds+1)
	})
	if err != nil {
		return nil, err
	}
	return job.Result{"indices": done.Decision.Indices}, nil
}

// A coordinator cannot run the mechanism without a party (the draw over
// the others, beside an earlier one over all, would tell the left-out
// party's counts apart) nor on a grid the spec does not fix: every asked
// party refuses, naming the coordinator, before it counts or shares.
func TestEMCoordinatorCannotSteer(t *testing.T) {
	t.Parallel()
	columns := append(dense(), dense()[0])
	path, names := consortium(t, columns, ", precision: 0.5, range: [100, 131], noise: {mechanism: exponential, epsilon: 1}")
	spec, err := job.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		kind emLiar
		want string
	}{
		{"fewer parties", emLiar{drop: 1}, "runs it over other parties than the spec's"},
		{"another grid", emLiar{rounds: 3}, "asks for a grid the spec does not determine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			rep, err := jobtest.Run(ctx, tc.kind, spec, jobtest.Options{JobID: "job-em-" + strings.ReplaceAll(tc.name, " ", "-"), Policy: lax()})
			recs := rep.Records()
			if err == nil || rep.Result != nil || len(recs) == 0 {
				t.Fatalf("err %v, result %v: want the job refused", err, rep.Result)
			}
			last := recs[len(recs)-1]
			for _, p := range names[tc.kind.drop:] {
				want := fmt.Sprintf("party %s refuses em round 0: coordinator %s %s", p, rep.Leaders[0], tc.want)
				if !strings.Contains(last.Failed[p], want) {
					t.Errorf("%s: %q, want %q", p, last.Failed[p], want)
				}
			}
		})
	}
}

// A party whose node restarts in the middle of the computation loses its
// shares and tells the coordinator at once (the runtime's mark of a begun
// attempt); the others cannot finish without it, and the runtime runs the
// step again as a new attempt, a new draw (spending again) with every
// party: the job ends with a draw near the median (ε = 40), and nothing
// but shares, the result and control messages left any party.
func TestEMPartyRestartsMidComputation(t *testing.T) {
	t.Parallel()
	columns := dense()
	pooled := pooledOf(columns)
	path, names := consortium(t, columns, ", precision: 0.5, range: [100, 131], noise: {mechanism: exponential, epsilon: 40}")
	spec, err := job.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var once sync.Once
	// Secrets keep the runtime's mark of a begun attempt, by which the
	// restarted party tells the coordinator at once.
	rep, err := jobtest.Run(ctx, Kind{}, spec, jobtest.Options{Policy: lax(), StepTimeout: time.Minute, Secrets: dealt(t, names),
		OnSend: func(s jobtest.Sent) (f jobtest.Fault) {
			if s.Message.Type == mpcjob.TypeShares && s.Message.Round == 0 && s.Message.Channel == "20" {
				once.Do(func() { f = jobtest.Fault{Restart: []string{"org03"}} })
			}
			return f
		}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(rep.Result)
	if err != nil {
		t.Fatal(err)
	}
	got := decodeResult(t, raw)
	ystar := pooled[rank(0.5, int64(len(pooled)))-1]
	recs := rep.Records()
	if len(got.Quantiles) != 1 || math.Abs(got.Quantiles[0].Value-ystar) > 1 || len(recs) == 0 || recs[len(recs)-1].Step.Attempt < 2 {
		t.Fatalf("result %+v after a restart (records %d), want a second attempt's draw near %v", got, len(recs), ystar)
	}
	for _, m := range rep.SentOutside(wire.DiscloseSecretShare, wire.DisclosePublicResult, wire.DiscloseControl) {
		t.Errorf("%s sent %s to %s as %s", m.From, m.Message.Type, m.To, m.Disclosure)
	}
}

// A party that cannot read its column fails the step at once, naming
// itself, and the runtime tells the others, who would otherwise wait for
// its shares until the step's end: the job fails well within its
// five-minute step.
func TestEMPartyWithoutColumnFailsAtOnce(t *testing.T) {
	t.Parallel()
	path, _ := consortium(t, dense(), ", precision: 0.5, range: [100, 131], noise: {mechanism: exponential, epsilon: 1}")
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "org03.csv"), []byte("id,w\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec, err := job.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err = jobtest.Run(ctx, Kind{}, spec, jobtest.Options{Policy: lax(), StepTimeout: 5 * time.Minute})
	if err == nil || !strings.Contains(err.Error(), "party org03: table t:") || !strings.Contains(err.Error(), `column "v"`) {
		t.Fatalf("err %v, want the job failed naming org03's table and its missing column", err)
	}
}
