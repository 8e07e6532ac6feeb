package quantile

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/keytest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/secureagg"
)

// dealt deals a threshold Paillier key of keyBits to names (once per test
// binary: keytest) and returns each party's Secrets (its data dir: the key share, and its job scratch).
func dealt(t *testing.T, names []string) map[string]job.Secrets {
	t.Helper()
	return dealtIn(t, t.TempDir(), names)
}

// dealtIn is dealt with each party's data dir at base/NAME.
func dealtIn(t *testing.T, base string, names []string) map[string]job.Secrets {
	t.Helper()
	_, keys := keytest.Paillier(t, keyBits, names)
	secrets := map[string]job.Secrets{}
	for _, name := range names {
		dir := filepath.Join(base, name)
		if err := keyring.SavePaillier(dir, keys[name]); err != nil {
			t.Fatal(err)
		}
		secrets[name] = jobtest.DirSecrets(dir)
	}
	return secrets
}

// The bisection in memory (jobtest.Run, real secure aggregation over keyBits
// keys): the leader changes at every step boundary, and in turn every party
// restarts, and the answer is the one of a run without faults; no log entry
// holds any party's step output.
func TestFaultAtEveryStepBoundary(t *testing.T) {
	t.Parallel()
	columns := mixed()
	path, names := consortium(t, columns, ", quantiles: [0.5, 0.9], precision: 0.5")
	spec, err := job.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	secrets := dealt(t, names)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run := func(onStep func(jobtest.Event) jobtest.Fault) *jobtest.Report {
		t.Helper()
		rep, err := jobtest.Run(ctx, Kind{}, spec, jobtest.Options{Secrets: secrets, Seed: make([]byte, job.SeedSize), OnStep: onStep, Policy: lax()})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	plain := run(nil)
	commits := 0
	faulty := run(func(ev jobtest.Event) jobtest.Fault {
		if ev.Kind != jobtest.Committed {
			return jobtest.Fault{}
		}
		commits++
		next := names[commits%len(names)]
		return jobtest.Fault{Leader: next, Restart: []string{names[(commits+1)%len(names)]}}
	})
	t.Logf("%d steps committed, %d leaders", commits, len(faulty.Leaders))
	if commits < 3 {
		t.Fatalf("only %d steps committed", commits)
	}
	a, _ := json.Marshal(plain.Result["quantiles"])
	b, _ := json.Marshal(faulty.Result["quantiles"])
	if string(a) != string(b) || plain.Result["rounds"] != faulty.Result["rounds"] {
		t.Fatalf("with faults %s in %v rounds, without %s in %v", b, faulty.Result["rounds"], a, plain.Result["rounds"])
	}
	if len(faulty.Leaders) < commits {
		t.Errorf("leaders %v: the leader did not change at every boundary", faulty.Leaders)
	}
	for _, o := range faulty.Outputs {
		if len(o.Output) > 0 && len(faulty.LogHolding(o.Output)) > 0 {
			t.Errorf("the log holds %s's output of round %d", o.Party, o.Step.Round)
		}
	}
	raw, err := json.Marshal(faulty.Result)
	if err != nil {
		t.Fatal(err)
	}
	check(t, decodeResult(t, raw), columns, []string{"0.5", "0.9"}, 0.5)
}

// evilCoordinator asks chosen thresholds: the derived round 0, then a
// round at every point it likes (the pooled distribution anywhere in one
// round). The parties run the honest sessions.
type evilCoordinator struct{ Kind }

func (evilCoordinator) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	p, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	s := newSearch(p.Quantiles, p.Precision, p.Range)
	a := args{Total: true, Thresholds: s.thresholds()}
	decideAll := func(o *job.Outcome[output]) (decision, error) { return decide(o, a.slots(), p) }
	if _, err := count.Run(ctx, c, job.Call[args]{Round: 0, Args: a}, decideAll); err != nil {
		return nil, err
	}
	a = args{}
	for x := -50.0; x <= 50; x++ {
		a.Thresholds = append(a.Thresholds, x)
	}
	if _, err := count.Run(ctx, c, job.Call[args]{Round: 1, Args: a}, decideAll); err != nil {
		return nil, err
	}
	return job.Result{}, nil
}

// A coordinator that asks counts at thresholds the log does not determine
// is refused by every party, which names it; nothing of that round is
// decrypted.
func TestCoordinatorCannotChooseThresholds(t *testing.T) {
	t.Parallel()
	path, names := consortium(t, mixed(), ", quantiles: [0.5]")
	spec, err := job.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	secrets := dealt(t, names)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := jobtest.Run(ctx, evilCoordinator{}, spec, jobtest.Options{Secrets: secrets, Policy: lax()})
	recs := rep.Records()
	if err == nil || len(recs) != 2 || recs[1].Error == "" {
		t.Fatalf("err %v, %d records", err, len(recs))
	}
	for _, p := range names {
		if why := recs[1].Failed[p]; !strings.Contains(why, "refuses round 1") || !strings.Contains(why, "coordinator "+rep.Leaders[0]) {
			t.Errorf("%s: %q, want a refusal naming the coordinator", p, why)
		}
	}
	for _, o := range rep.Outputs {
		if o.Step.Round == 1 {
			t.Errorf("%s counted in round 1", o.Party)
		}
	}
}

// params.backend: lattice counts over the lattice key alone and finds the
// same quantiles in the same rounds as the Paillier backend.
func TestLatticeBackendSameAnswer(t *testing.T) {
	t.Parallel()
	columns := mixed()
	run := func(backend string) *jobtest.Report {
		t.Helper()
		path, names := consortium(t, columns, ", quantiles: [0.5, 0.9], precision: 0.5, backend: "+backend)
		spec, err := job.LoadSpec(path)
		if err != nil {
			t.Fatal(err)
		}
		secrets := map[string]job.Secrets{}
		var paillierKeys map[string]*secureagg.Keys
		var latticeKeys map[string]*lattice.Keys
		if backend == "paillier" {
			_, paillierKeys = keytest.Paillier(t, keyBits, names)
		} else {
			latticeKeys = keytest.Lattice(t, names)
		}
		for _, name := range names {
			dir := filepath.Join(t.TempDir(), name)
			if backend == "paillier" {
				err = keyring.SavePaillier(dir, paillierKeys[name])
			} else {
				err = keyring.SaveLattice(dir, latticeKeys[name])
			}
			if err != nil {
				t.Fatal(err)
			}
			secrets[name] = jobtest.DirSecrets(dir)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		rep, err := jobtest.Run(ctx, Kind{}, spec, jobtest.Options{Secrets: secrets, Seed: make([]byte, job.SeedSize), Policy: lax()})
		if err != nil {
			t.Fatalf("backend %s: %v", backend, err)
		}
		return rep
	}
	p, l := run("paillier"), run("lattice")
	a, _ := json.Marshal(p.Result["quantiles"])
	b, _ := json.Marshal(l.Result["quantiles"])
	if string(a) != string(b) || p.Result["rounds"] != l.Result["rounds"] {
		t.Fatalf("lattice %s in %v rounds, Paillier %s in %v", b, l.Result["rounds"], a, p.Result["rounds"])
	}
}

// shrinking runs round 0 over every party, then round 1, at the thresholds
// the log determines, over all but the first: the difference of the two
// rounds' counts would be that party's own.
type shrinking struct{ Kind }

func (shrinking) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	p, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	parties := c.Spec().PartyNames()
	s := newSearch(p.Quantiles, p.Precision, p.Range)
	for round, ps := range [][]string{parties, parties[1:]} {
		a := args{Total: !s.counted, Thresholds: s.thresholds()}
		done, err := count.Run(ctx, c, job.Call[args]{Round: round, Parties: ps, Args: a},
			func(o *job.Outcome[output]) (decision, error) { return decide(o, a.slots(), p) })
		if err != nil {
			return nil, err
		}
		if err := applyDecision(s, a, done.Decision.Counts); err != nil {
			return nil, err
		}
	}
	return job.Result{}, nil
}

// A coordinator cannot steer by the log either: every party refuses, naming
// the coordinator, a step over fewer parties than the spec's, counts of
// the round that finishes the search forged (found at the release step,
// with the round named), and values to release that the log does not
// determine. Nothing is published.
func TestCoordinatorCannotSteer(t *testing.T) {
	t.Parallel()
	path, names := consortium(t, dense(), denseParams("0.5"))
	spec, err := job.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	secrets := dealt(t, names)
	cases := []struct {
		name string
		kind job.Kind
		// want is each party's refusal, given the party, the coordinator
		// and the job's records.
		want func(p, coordinator string, recs []*job.Record) string
		// refusing are the parties that refuse (all when nil).
		refusing []string
	}{
		{"fewer parties", shrinking{}, func(p, c string, _ []*job.Record) string {
			return fmt.Sprintf("party %s refuses count round 1: coordinator %s runs it over other parties than the spec's", p, c)
		}, names[1:]},
		{"forged last round", liar{round: lastRound}, func(p, c string, recs []*job.Record) string {
			return fmt.Sprintf("party %s refuses release round 0: coordinator %s committed counts for round %d that differ from those the root sent it",
				p, c, recs[len(recs)-2].Step.Round)
		}, nil},
		{"other values", liar{round: noRound, shift: 0.25}, func(p, c string, _ []*job.Record) string {
			return fmt.Sprintf("party %s refuses release round 0: coordinator %s asks to release values the log does not determine", p, c)
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			rep, err := jobtest.Run(ctx, tc.kind, spec, jobtest.Options{JobID: "job-" + strings.ReplaceAll(tc.name, " ", "-"), Secrets: secrets, Policy: lax()})
			recs := rep.Records()
			if err == nil || rep.Result != nil || len(recs) == 0 {
				t.Fatalf("err %v, result %v: want the job refused", err, rep.Result)
			}
			last := recs[len(recs)-1]
			refusing := tc.refusing
			if refusing == nil {
				refusing = names
			}
			for _, p := range refusing {
				if want := tc.want(p, rep.Leaders[0], recs); !strings.Contains(last.Failed[p], want) {
					t.Errorf("%s: %q, want %q", p, last.Failed[p], want)
				}
				checkNoData(t, last.Failed[p])
			}
			checkNoData(t, err.Error())
		})
	}
}
