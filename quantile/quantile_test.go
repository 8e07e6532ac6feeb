package quantile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// keyBits keeps the tests fast; the figures use 2048 bits. paillier
// refuses keys below 2048 bits unless the test binary opts in. 512, as
// secureagg's and boost's tests: at 1024 the Paillier arithmetic was 40 %
// of the package's CPU (28 Nov 2026), and no test here is about the size.
const keyBits = 512

func init() { testkit.SmallKeys() }

// lax is the policy of the tests of other things than the policy:
// policy.Permissive, with room for every exact release (Permissive allows
// none).
func lax() *policy.Policy {
	p := policy.Permissive()
	p.ExactReleases = 1 << 30
	return p
}

// fastTiming keeps failure tests short; the step timeout stays generous so
// that a loaded machine does not drop live parties.
var fastTiming = node.Timing{SendMS: 3000, StepMS: 60000}

// TestMain runs six tests at once: most of the package's time is its
// clusters waiting on each other (a killed coordinator's election, a
// dropped party's send deadline), not computing: 24 s with two at a time,
// 15 s with six, the same CPU (30 Nov 2026).
func TestMain(m *testing.M) {
	testkit.WaitingParallel(6)
	os.Exit(m.Run())
}

// consortium writes one table per column (party org01, org02, …; a nil
// column is a table with a header and no rows) and a spec with the given
// params, and returns the spec path and party names.
func consortium(t testing.TB, columns [][]float64, params string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	var spec strings.Builder
	spec.WriteString("kind: quantile\nparties:\n")
	var names []string
	for i, col := range columns {
		name := fmt.Sprintf("org%02d", i+1)
		names = append(names, name)
		var csv strings.Builder
		csv.WriteString("id,v\n")
		for r, v := range col {
			fmt.Fprintf(&csv, "%d,%s\n", r, strconv.FormatFloat(v, 'g', -1, 64))
		}
		if err := os.WriteFile(filepath.Join(dir, name+".csv"), []byte(csv.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&spec, "  - name: %s\n    tables: [{name: t, path: %s.csv}]\n", name, name)
	}
	fmt.Fprintf(&spec, "schema:\n  t: {id: id, v: numeric}\nparams: {column: v%s}\n", params)
	path := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(path, []byte(spec.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, names
}

// result is result.json's quantile fields.
type result struct {
	Quantiles     []Quantile `json:"quantiles"`
	Rows          int64      `json:"rows"`
	Rounds        int        `json:"rounds"`
	RetriedRounds int        `json:"retried_rounds"`
}

func decodeResult(t testing.TB, raw []byte) result {
	t.Helper()
	var r result
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// check compares a job's result with the search run in the clear (the
// same bisection, so the same values to the bit) and with sorting the
// pooled column (each value within precision of the exact lower quantile).
func check(t *testing.T, got result, columns [][]float64, qs []string, precision float64) {
	t.Helper()
	checkHint(t, got, columns, qs, precision, nil)
}

// checkHint is check for a job with params.range.
func checkHint(t *testing.T, got result, columns [][]float64, qs []string, precision float64, hint []float64) {
	t.Helper()
	want, rounds := bisectHint(t, columns, parseQs(t, qs), precision, hint)
	var pooled []float64
	for _, c := range columns {
		pooled = append(pooled, c...)
	}
	if got.Rows != int64(len(pooled)) {
		t.Errorf("rows %d, want %d", got.Rows, len(pooled))
	}
	if got.Rounds != rounds {
		t.Errorf("%d rounds, the search in the clear takes %d", got.Rounds, rounds)
	}
	if len(got.Quantiles) != len(qs) {
		t.Fatalf("quantiles %v, want %d", got.Quantiles, len(qs))
	}
	for i, q := range qs {
		if got.Quantiles[i] != want[i] {
			t.Errorf("q = %s: %v, the search in the clear gives %v", q, got.Quantiles[i], want[i])
		}
		if ystar := lowerQuantile(pooled, q); !within(got.Quantiles[i].Value, ystar, precision) {
			t.Errorf("q = %s: %v, exact lower quantile %v, precision %v", q, got.Quantiles[i].Value, ystar, precision)
		}
	}
}

// mixed is three parties' columns with negative values, duplicates and
// different sizes.
func mixed() [][]float64 {
	return [][]float64{
		gen(40, 31, func(r *rand.Rand) float64 { return math.Round(r.NormFloat64()*2000) / 100 }),
		gen(25, 32, func(r *rand.Rand) float64 { return float64(r.IntN(10) - 3) }),
		gen(30, 33, func(r *rand.Rand) float64 { return math.Round(r.ExpFloat64()*1000) / 100 }),
	}
}

func TestOverRealNodes(t *testing.T) {
	t.Parallel()
	columns := append(mixed(), nil) // and a party with an empty table
	qs := []string{"0.001", "0.5", "0.9", "0.999"}
	// With a range that holds the median and the 90th percentile but not
	// the first and last values (the other tests run without one). The
	// policy lets those two out (TestExactReleasesBounded runs the
	// default policy, which does not).
	spec, names := consortium(t, columns, ", quantiles: [0.001, 0.5, 0.9, 0.999], range: [-10, 30]")
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if _, err := sim.Run(ctx, spec, sim.RunOptions{Kinds: job.Registry{"quantile": Kind{}}, Out: out, Setup: simtest.ThresholdKeys(keyBits), Timing: fastTiming, Policy: lax()}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := decodeResult(t, raw)
	checkHint(t, got, columns, qs, 0.01, []float64{-10, 30})
	t.Logf("%d rounds: %v", got.Rounds, got.Quantiles)
	// The ledgers show only ciphertexts, decryption shares and the public
	// result leaving each party.
	for _, name := range names {
		entries, err := audit.ReadFile(filepath.Join(out, "audit", name+".jsonl"))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, e := range entries {
			switch wire.Disclosure(e.Disclosure) {
			// control carries no data of the party: an aggregation's
			// digests and requests, the runtime's admission answer, the
			// node's own policy decisions (which nothing sends).
			case wire.DiscloseCiphertext, wire.DiscloseDecryptionShare, wire.DiscloseSecretShare, wire.DisclosePublicResult, wire.DiscloseControl:
			default:
				t.Errorf("%s sent %s disclosing %q", name, e.Type, e.Disclosure)
			}
		}
	}
}

// startCluster starts nodes for names (the spec's parties and any extra
// members) with the spec's tables.
func startCluster(t *testing.T, ctx context.Context, spec string, names []string, kindsFor func(string) job.Registry) *sim.Cluster {
	t.Helper()
	if kindsFor == nil {
		kindsFor = func(string) job.Registry { return job.Registry{"quantile": Kind{}} }
	}
	c := simtest.StartCluster(t, ctx, names, sim.ClusterOptions{
		KindsFor: kindsFor, TablesDir: filepath.Dir(spec), Setup: simtest.ThresholdKeys(keyBits), Timing: fastTiming, Policy: lax(),
	})
	return c
}

func submit(t *testing.T, ctx context.Context, n *node.Node, spec string) string {
	t.Helper()
	raw, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	id, err := n.Submit(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// roundsDone waits until at least n rounds of the job are committed and
// returns how many are, failing if the job ended first.
func roundsDone(t *testing.T, ctx context.Context, n *node.Node, id string, want int) int {
	t.Helper()
	done, err := sim.WaitSteps(ctx, n, id, want)
	if err != nil {
		t.Fatal(err)
	}
	return done
}

func waitJob(t *testing.T, ctx context.Context, n *node.Node, id string) (*node.JobRecord, result) {
	t.Helper()
	rec, err := n.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != node.StatusDone {
		t.Fatalf("job %s: %s", rec.Status, rec.Error)
	}
	return rec, decodeResult(t, rec.Result)
}

// Killing the coordinator mid-bisection: the new leader replays the
// committed rounds, re-runs the unfinished one as a new attempt and the
// answer is the same to the bit. The coordinator is a member that holds no
// data (as in sum's test), so the job needs no retry without it.
func TestCoordinatorKilled(t *testing.T) {
	t.Parallel()
	columns := mixed()
	qs := []string{"0.25", "0.5", "0.9"}
	spec, parties := consortium(t, columns, ", quantiles: [0.25, 0.5, 0.9]")
	names := append(slices.Clone(parties), "org04", "org05")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	c := startCluster(t, ctx, spec, names, nil)
	if err := c.MakeLeader(ctx, "org05"); err != nil {
		t.Fatal(err)
	}
	id := submit(t, ctx, c.Node("org01"), spec)
	before := roundsDone(t, ctx, c.Node("org01"), id, 4)
	if err := c.Kill("org05"); err != nil {
		t.Fatal(err)
	}
	rec, got := waitJob(t, ctx, c.Node("org01"), id)
	check(t, got, columns, qs, 0.01)
	if len(rec.Steps) <= before {
		t.Fatalf("%d steps, %d of them done before the kill: nothing was left to resume", len(rec.Steps), before)
	}
	t.Logf("killed the coordinator after %d of %d rounds", before, got.Rounds)
}

// A party's node restarted mid-job reopens its session from its own
// tables and the answer is the same. Down briefly, it rejoins the round in
// progress; down until the coordinator's reachability probes (three failed
// dials, 500 ms apart, each up to 1 s) have failed a round (waited for
// as the committed round naming it, not slept out), the round is re-run,
// with the same thresholds, once it is back.
func TestPartyRestarted(t *testing.T) {
	t.Parallel()
	for _, untilFailed := range []bool{false, true} {
		name := "200ms"
		if untilFailed {
			name = "until-a-round-fails"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each its own cluster
			columns := mixed()
			qs := []string{"0.5", "0.75"}
			spec, names := consortium(t, columns, ", quantiles: [0.5, 0.75]")
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			c := startCluster(t, ctx, spec, names, nil)
			if err := c.MakeLeader(ctx, "org01"); err != nil {
				t.Fatal(err)
			}
			id := submit(t, ctx, c.Node("org01"), spec)
			before := roundsDone(t, ctx, c.Node("org01"), id, 3)
			if err := c.Kill("org03"); err != nil {
				t.Fatal(err)
			}
			if untilFailed {
				roundFailedFor(t, ctx, c.Node("org01"), id, "org03")
			} else {
				time.Sleep(200 * time.Millisecond)
			}
			if _, err := c.Restart("org03"); err != nil {
				t.Fatal(err)
			}
			_, got := waitJob(t, ctx, c.Node("org01"), id)
			check(t, got, columns, qs, 0.01)
			if got.Rounds <= before {
				t.Fatalf("the job had %d rounds, %d done before the restart: the restarted node took part in none", got.Rounds, before)
			}
			if untilFailed && got.RetriedRounds == 0 {
				t.Errorf("a round failed for org03 while it was down and no round was re-run")
			}
			t.Logf("restarted org03 after %d of %d rounds; %d rounds re-run", before, got.Rounds, got.RetriedRounds)
		})
	}
}

// roundFailedFor waits until a step of job id is committed with party
// among its failed parties, failing t if the job ends first.
func roundFailedFor(t *testing.T, ctx context.Context, n *node.Node, id, party string) {
	t.Helper()
	for {
		js, ok := n.Job(id)
		if ok && js.Status != node.StatusRunning && js.Status != node.StatusQueued {
			t.Fatalf("job %s ended (%s: %s) before a round failed for %s", id, js.Status, js.Error, party)
		}
		if ok {
			for _, s := range js.Steps {
				if s.Done && slices.Contains(s.Failed, party) {
					return
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for a round to fail for %s: %v", party, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// A party that stays down fails the job, naming it, after the retries;
// the job is not re-run without it (the package doc says why).
func TestDroppedPartyFailsJob(t *testing.T) {
	t.Parallel()
	spec, names := consortium(t, mixed(), ", retries: 1")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := startCluster(t, ctx, spec, names, nil)
	if err := c.MakeLeader(ctx, "org01"); err != nil {
		t.Fatal(err)
	}
	if err := c.Kill("org02"); err != nil {
		t.Fatal(err)
	}
	id := submit(t, ctx, c.Node("org01"), spec)
	rec, err := c.Node("org01").Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != node.StatusFailed || !strings.Contains(rec.Error, "org02") || !strings.Contains(rec.Error, "2 times in a row") {
		t.Fatalf("job %s: %q, want a failure naming org02 after 2 rounds", rec.Status, rec.Error)
	}
}

// A party whose tables lack the column withdraws at once and the job fails
// naming it, without waiting for timeouts or retrying.
func TestUnusableColumn(t *testing.T) {
	spec, _ := consortium(t, mixed(), "")
	dir := filepath.Dir(spec)
	if err := os.WriteFile(filepath.Join(dir, "org02.csv"), []byte("id,w\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(spec)
	raw = bytes.Replace(raw, []byte("schema:\n  t: {id: id, v: numeric}\n"), nil, 1)
	if err := os.WriteFile(spec, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	start := time.Now()
	_, err := sim.Run(ctx, spec, sim.RunOptions{Kinds: job.Registry{"quantile": Kind{}}, Out: t.TempDir(), Setup: simtest.ThresholdKeys(keyBits), Timing: fastTiming, Policy: lax()})
	if err == nil || !strings.Contains(err.Error(), `org02 has no table with column "v"`) {
		t.Fatalf("err %v, want org02's missing column named", err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("took %v to fail", took)
	}
}
