package quantile

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// dense is three parties' columns in which every value is held by six
// pooled rows: 101 … 130 (plus a fraction, so that no plain copy of one
// can be mistaken for random bytes), three times at org01, twice at
// org02, once at org03 (180 rows). A quantile of it at precision 0.5 ends
// in a bracket of six rows, so the default policy's floor on the bracket
// (min_k 5) holds and only the rank decides.
func dense() [][]float64 {
	cols := make([][]float64, 3)
	for v := 101; v <= 130; v++ {
		for i := range cols {
			for range 3 - i {
				cols[i] = append(cols[i], float64(v)+0.123456789)
			}
		}
	}
	return cols
}

// pooledOf is the sorted union of columns.
func pooledOf(columns [][]float64) []float64 {
	var out []float64
	for _, c := range columns {
		out = append(out, c...)
	}
	slices.Sort(out)
	return out
}

// denseParams asks quantiles of dense at a precision whose brackets hold
// one value, with its range.
func denseParams(qs string) string {
	return ", quantiles: [" + qs + "], precision: 0.5, range: [100, 131]"
}

// withParams writes a spec beside spec (same parties and tables) with other
// params, and returns its path.
func withParams(t *testing.T, spec, name, params string) string {
	t.Helper()
	raw, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(raw), "params: {column: v")
	if i < 0 {
		t.Fatal("spec without params")
	}
	path := filepath.Join(filepath.Dir(spec), name+".yaml")
	body := string(raw[:i]) + "params: {column: v" + params + "}\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// policyCluster is startCluster with every node under pol.
func policyCluster(t *testing.T, ctx context.Context, spec string, names []string, kindsFor func(string) job.Registry, pol *policy.Policy) *sim.Cluster {
	t.Helper()
	if kindsFor == nil {
		kindsFor = func(string) job.Registry { return job.Registry{"quantile": Kind{}} }
	}
	c := simtest.StartCluster(t, ctx, names, sim.ClusterOptions{
		KindsFor: kindsFor, TablesDir: filepath.Dir(spec), Setup: simtest.ThresholdKeys(keyBits), Timing: fastTiming, Policy: pol,
	})
	return c
}

// failedJob waits for a job that must fail and returns its record.
func failedJob(t *testing.T, ctx context.Context, n *node.Node, id, want string) *node.JobRecord {
	t.Helper()
	rec, err := n.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != node.StatusFailed {
		t.Fatalf("job %s (result %s), want it refused: %s", rec.Status, rec.Result, want)
	}
	if len(rec.Result) > 0 && strings.Contains(string(rec.Result), "quantiles") {
		t.Errorf("a failed job published %s", rec.Result)
	}
	return rec
}

// number is an integer in a text, not part of a name (org01).
var number = regexp.MustCompile(`\b[0-9]+\b`)

// checkNoData checks that a failure text names no datum of dense: no value
// (101 … 130), no row count or count above the job's round numbers (every
// number in it is a round or attempt, below 71).
func checkNoData(t *testing.T, text string) {
	t.Helper()
	for _, m := range number.FindAllString(text, -1) {
		if n, _ := strconv.Atoi(m); n > maxRounds {
			t.Errorf("the failure %q holds %s, which is no round: a value or a count", text, m)
		}
	}
}

// checkLedgers checks every party's audit ledger for a job against the
// leakage profile: only ciphertexts, decryption shares, secret shares (the
// brackets' check), the public result
// and control messages leave a party; no count round after upTo sends a
// ciphertext or a share (upTo < 0: no limit); no other step sends either.
func checkLedgers(t *testing.T, c *sim.Cluster, parties []string, id string, upTo int) {
	t.Helper()
	for _, name := range parties {
		entries, err := audit.ReadFile(c.LedgerPath(name))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Job != id {
				continue
			}
			d := wire.Disclosure(e.Disclosure)
			switch d {
			case wire.DiscloseCiphertext, wire.DiscloseDecryptionShare, wire.DiscloseSecretShare, wire.DisclosePublicResult, wire.DiscloseControl:
			default:
				t.Errorf("%s sent %s disclosing %q", name, e.Type, e.Disclosure)
			}
			data := d == wire.DiscloseCiphertext || d == wire.DiscloseDecryptionShare || d == wire.DiscloseSecretShare
			if e.Phase == count.Phase && data && upTo >= 0 && e.Round > upTo {
				t.Errorf("%s sent %s (%s) in count round %d, after the forged round %d", name, e.Type, d, e.Round, upTo)
			}
			if e.Phase != count.Phase && e.Phase != "" && data {
				t.Errorf("%s sent %s (%s) in phase %s", name, e.Type, d, e.Phase)
			}
		}
	}
}

// liar coordinates the bisection of one quantile but commits a forged
// pooled count for one round, on the wrong side of the quantile's rank,
// and then steers the search by it (issue 30, finding 7): the job would
// publish a wrong value. round is the round it forges (lastRound: the
// round that finishes the search; noRound: none); shift is added to every
// value it asks the parties to release; skipRelease skips the release
// step. The parties run the honest sessions.
type liar struct {
	Kind
	round int
	shift float64
	// skipRelease publishes the values the search gives without the
	// release step.
	skipRelease bool
}

const (
	lastRound = -1
	noRound   = -2
)

func (l liar) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	p, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	parties := c.Spec().PartyNames()
	s := newSearch(p.Quantiles, p.Precision, p.Range)
	for round := 0; !s.finished(); round++ {
		a := args{Total: !s.counted, Thresholds: s.thresholds()}
		call := job.Call[args]{Round: round, Parties: parties, Args: a, TimeoutMS: p.TimeoutMS}
		done, err := count.Run(ctx, c, call, func(o *job.Outcome[output]) (decision, error) {
			d, err := decide(o, a.slots(), p)
			if err == nil && d.Counts != nil && (round == l.round || l.round == lastRound && finishes(s, a, d.Counts)) {
				forge(s, a, d.Counts)
			}
			return d, err
		})
		if err != nil {
			return nil, err
		}
		if d := done.Decision; d.Counts != nil {
			if err := applyDecision(s, a, d.Counts); err != nil {
				return nil, err
			}
		}
	}
	if l.skipRelease {
		return job.Result{"quantiles": s.results(), "rows": s.n}, nil
	}
	a := releaseArgs{Values: values(s.results())}
	for i := range a.Values {
		a.Values[i] += l.shift
	}
	call := job.Call[releaseArgs]{Parties: parties, Args: a, TimeoutMS: p.TimeoutMS}
	if _, err := releaseRound.Run(ctx, c, call, decideRelease); err != nil {
		return nil, err
	}
	return job.Result{"quantiles": s.results(), "rows": s.n}, nil
}

// applyDecision applies a round's committed counts to s.
func applyDecision(s *search, a args, counts []int64) error {
	var total *int64
	if a.Total {
		total, counts = &counts[0], counts[1:]
	}
	return s.apply(total, a.Thresholds, counts)
}

// finishes reports whether the round's counts finish the search.
func finishes(s *search, a args, counts []int64) bool {
	c := *s
	c.ks, c.brackets = slices.Clone(s.ks), slices.Clone(s.brackets)
	return applyDecision(&c, a, slices.Clone(counts)) == nil && c.finished()
}

// forge puts each threshold's count on the other side of the (one)
// quantile's rank: N for a count below it, one below it for the others.
func forge(s *search, a args, counts []int64) {
	for i := a.slots() - len(a.Thresholds); i < len(counts); i++ {
		if counts[i] < s.ks[0] {
			counts[i] = s.n
		} else {
			counts[i] = s.ks[0] - 1
		}
	}
}

// A coordinator that commits forged counts for a round, to steer the next
// thresholds and publish a wrong median, is refused at the next round by
// every party that received the round's true counts from the root, each
// naming the coordinator and the round; nothing of the steered round is
// aggregated, no party sent more than the leakage profile allows, and no
// failure text holds a count.
func TestLyingCoordinatorRefused(t *testing.T) {
	t.Parallel()
	const forged = 2
	columns := dense()
	spec, parties := consortium(t, columns, denseParams("0.5"))
	names := append(slices.Clone(parties), "org04")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	var capt capture
	c := policyCluster(t, ctx, spec, names, capt.registry("org02", liar{round: forged}.Coordinate), policy.Default())
	if err := c.MakeLeader(ctx, "org04"); err != nil {
		t.Fatal(err)
	}
	id := submit(t, ctx, c.Node("org01"), spec)
	rec := failedJob(t, ctx, c.Node("org01"), id, "the parties refuse the forged counts")
	// Every node runs the liar, so whichever member leads when round 2
	// commits forges it (org04 unless the leadership moved).
	named := map[string]bool{}
	for _, p := range parties {
		m := regexp.MustCompile(`party ` + p + ` refuses count round 3: coordinator (\w+) committed counts for round 2 that differ`).FindStringSubmatch(rec.Error)
		if m == nil {
			t.Errorf("the failure %q does not show %s refusing round 3 and naming the coordinator and the forged round", rec.Error, p)
			continue
		}
		named[m[1]] = true
	}
	if len(named) > 1 {
		t.Errorf("the parties name different coordinators: %v", named)
	}
	checkNoData(t, rec.Error)
	checkLedgers(t, c, parties, id, forged)
	capt.checkSent(t, columns[1], pooledOf(columns))
	t.Logf("refused: %s", rec.Error)
}

// Exact releases are bounded by the default policy, over real nodes: a
// quantile whose rank lies within min_k rows of an end is refused at the
// release, and the job publishes nothing; twelve quantiles are released
// and count against each dataset's allowance (20), so a second job of
// twelve more over the same datasets is refused at admission. After each
// job, no party sent and no log record holds more than the leakage
// profile allows, and no failure text holds a value or a count.
func TestExactReleasesBounded(t *testing.T) {
	t.Parallel()
	columns := dense()
	pooled := pooledOf(columns)
	spec, parties := consortium(t, columns, denseParams("0.02"))
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	var capt capture
	c := policyCluster(t, ctx, spec, parties, capt.registry("org02", nil), policy.Default())
	leaked := func(id string) {
		t.Helper()
		checkLedgers(t, c, parties, id, -1)
		capt.checkSent(t, columns[1], pooled)
		capt.checkDecisions(t, pooled, parties)
		capt.reset()
	}
	if err := c.MakeLeader(ctx, "org01"); err != nil {
		t.Fatal(err)
	}
	n := c.Node("org01")

	id := submit(t, ctx, n, spec) // the 4th of 180 rows
	rec := failedJob(t, ctx, n, id, "the rank is within min_k of the lower end")
	if !strings.Contains(rec.Error, "floors.min_k") {
		t.Errorf("the failure %q does not name the rule floors.min_k", rec.Error)
	}
	// Refused as soon as the pooled count is known (count round 1), not
	// after a search whose committed counts would pin the rows down.
	if !strings.HasPrefix(rec.Error, "count round 1:") {
		t.Errorf("the failure %q: want the search stopped at count round 1", rec.Error)
	}
	t.Logf("refused: %s", rec.Error)
	checkNoData(t, rec.Error)
	leaked(id)

	twelve := []string{"0.1", "0.15", "0.2", "0.25", "0.3", "0.35", "0.4", "0.45", "0.5", "0.55", "0.6", "0.65"}
	many := withParams(t, spec, "many", denseParams(strings.Join(twelve, ", ")))
	id = submit(t, ctx, n, many)
	_, got := waitJob(t, ctx, n, id)
	checkHint(t, got, columns, twelve, 0.5, []float64{100, 131})
	leaked(id)

	more := withParams(t, spec, "more", denseParams("0.7, 0.71, 0.72, 0.73, 0.74, 0.75, 0.76, 0.77, 0.78, 0.79, 0.8, 0.81"))
	id = submit(t, ctx, n, more)
	rec = failedJob(t, ctx, n, id, "the datasets' allowance of exact releases is spent")
	if !strings.Contains(rec.Error, "exact_releases") {
		t.Errorf("the failure %q does not name the rule exact_releases", rec.Error)
	}
	t.Logf("refused: %s", rec.Error)
	checkNoData(t, rec.Error)
	leaked(id)
}
