package sum

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/internal/testkit/keytest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/keyring"
)

func init() { testkit.SmallKeys() }

// evilCoordinator runs round 0 to its decryption, then commits that a
// victim was missing and asks for round 1 without it: S0 − S1 would be the
// victim's input. The parties run the honest sessions.
type evilCoordinator struct {
	Kind
	victim string
}

func (k evilCoordinator) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	all := c.Spec().PartyNames()
	if _, err := aggregate.Run(ctx, c, job.Call[struct{}]{Round: 0, Parties: all}, func(o *job.Outcome[output]) (decision, error) {
		return decision{Missing: []string{k.victim}}, nil
	}); err != nil {
		return nil, err
	}
	others := slices.DeleteFunc(slices.Clone(all), func(p string) bool { return p == k.victim })
	done, err := aggregate.Run(ctx, c, job.Call[struct{}]{Round: 1, Parties: others}, func(o *job.Outcome[output]) (decision, error) {
		return decide(o, others)
	})
	if err != nil {
		return nil, err
	}
	return job.Result{"sum": done.Decision.Result.Sum[0]}, nil
}

// A coordinator that commits Missing=[victim] after round 0's total was
// decrypted, to difference it with a round without the victim, is refused
// by every party, which names the coordinator; round 1 decrypts nothing.
func TestCoordinatorCannotDifferenceAfterDecryption(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	names := []string{"org01", "org02", "org03", "org04"}
	var spec strings.Builder
	spec.WriteString("kind: sum\nparties:\n")
	for _, n := range names {
		writeFile(t, filepath.Join(dir, n+".csv"), "id,v\n1,10\n2,20\n")
		spec.WriteString("  - name: " + n + "\n    tables: [{name: t, path: " + n + ".csv}]\n")
	}
	spec.WriteString("params: {column: v}\n")
	writeFile(t, filepath.Join(dir, "spec.yaml"), spec.String())
	s, err := job.LoadSpec(filepath.Join(dir, "spec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, keys := keytest.Paillier(t, 512, names)
	opts := jobtest.Options{Secrets: map[string]job.Secrets{}}
	for _, n := range names {
		d := filepath.Join(t.TempDir(), n)
		if err := keyring.SavePaillier(d, keys[n]); err != nil {
			t.Fatal(err)
		}
		opts.Secrets[n] = jobtest.DirSecrets(d)
	}
	// org02 restarts between the rounds: what it saw is in its scratch.
	opts.OnStep = func(ev jobtest.Event) jobtest.Fault {
		if ev.Kind == jobtest.Committed && ev.Step.Round == 0 {
			return jobtest.Fault{Restart: []string{"org02"}}
		}
		return jobtest.Fault{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := jobtest.Run(ctx, evilCoordinator{victim: "org03"}, s, opts)
	if err == nil {
		t.Fatalf("the differencing round ran: %v", rep.Result)
	}
	recs := rep.Records()
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	for _, p := range []string{"org01", "org02", "org04"} {
		why := recs[1].Failed[p]
		if !strings.Contains(why, "refuses round 1") || !strings.Contains(why, "coordinator org01") {
			t.Errorf("%s: %q, want a refusal naming the coordinator", p, why)
		}
	}
	for _, o := range rep.Outputs {
		if o.Step.Round == 1 {
			t.Errorf("%s reported an outcome of round 1", o.Party)
		}
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
