package quantile

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/sim"
)

func TestNoisyRounds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b, precision float64
		want            int
	}{
		{0, 100, 0.01, 14}, // 100/2^14 ≈ 0.0061; 100/2^13 ≈ 0.0122
		{100, 131, 0.5, 6}, // 31/64 < 0.5 < 31/32
		{0, 1, 0.5, 1},
		{0, 1, 2, 1}, // one round at least: the row count and a split
		{-1, 1, 1.0 / 1024, 11},
	} {
		got, err := noisyRounds(c.a, c.b, c.precision)
		if err != nil || got != c.want {
			t.Errorf("[%v, %v] at %v: %d rounds, %v; want %d", c.a, c.b, c.precision, got, err, c.want)
		}
	}
	if _, err := noisyRounds(0, 1e9, 1e-9); err == nil {
		t.Error("2^60 cells: want an error")
	}
	if _, err := noisyRounds(-math.MaxFloat64, math.MaxFloat64, 1); err == nil {
		t.Error("an overflowing range: want an error")
	}
}

// Without noise (exact counts), the noised search's answer is the lower
// quantile of the column clamped to [a, b], within precision, after
// exactly noisyRounds rounds; the rounds do not depend on the data.
func TestNoisySearchExactCounts(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 200 {
		n := 1 + r.IntN(300)
		pooled := make([]float64, n)
		for i := range pooled {
			pooled[i] = math.Round(r.NormFloat64()*3000) / 100 // mostly within [-60, 60]
		}
		slices.Sort(pooled)
		qs := []float64{0.05, 0.5, 0.77}
		a, b, precision := -40.0, 50.0, 0.1+r.Float64()
		rounds, err := noisyRounds(a, b, precision)
		if err != nil {
			t.Fatal(err)
		}
		s := newNoisySearch(qs, a, b, rounds)
		for i := 0; !s.finished(); i++ {
			if i >= rounds {
				t.Fatalf("trial %d: not finished after %d rounds", trial, rounds)
			}
			ar := args{Total: s.needsTotal(), Thresholds: s.thresholds()}
			c := counts(pooled, &ar)
			cs := toInts(c)
			var total *int64
			if ar.Total {
				total = &cs[0]
				cs = cs[1:]
			}
			if err := s.apply(total, ar.Thresholds, cs); err != nil {
				t.Fatal(err)
			}
		}
		for i, got := range s.results() {
			k := rank(qs[i], int64(n))
			ystar := min(max(pooled[k-1], a), b)
			if math.Abs(got.Value-ystar) > precision {
				t.Fatalf("trial %d: q %v gives %v, the clamped quantile is %v, precision %v", trial, qs[i], got.Value, ystar, precision)
			}
		}
	}
}

func TestRoundNoise(t *testing.T) {
	t.Parallel()
	n := &secureagg.Noise{Mechanism: secureagg.Laplace, Epsilon: 3, Sensitivity: 99, Colluders: 1}
	got := roundNoise(n, 6, 4)
	if got.Epsilon != 0.5 || got.Sensitivity != 4 || got.Colluders != 1 || n.Epsilon != 3 {
		t.Errorf("laplace: %+v (from %+v), want ε 0.5 and L1 sensitivity 4, the original untouched", got, n)
	}
	g := roundNoise(&secureagg.Noise{Mechanism: secureagg.Gaussian, Epsilon: 3, Delta: 6e-6}, 6, 4)
	if g.Epsilon != 0.5 || g.Delta != 1e-6 || g.Sensitivity != 2 {
		t.Errorf("gaussian: %+v, want ε 0.5, δ 1e-6 and L2 sensitivity 2", g)
	}
}

func TestValidateNoise(t *testing.T) {
	t.Parallel()
	ok := "column: v, range: [0, 100], noise: {mechanism: laplace, epsilon: 1}"
	if err := (Kind{}).Validate(specWith(t, "{"+ok+"}")); err != nil {
		t.Fatalf("%s: %v", ok, err)
	}
	refusedNaming(t, specWith, map[string]string{
		"column: v, noise: {mechanism: laplace, epsilon: 1}":                                               "params.range",
		"column: v, range: [0, 100], precision: 0, noise: {mechanism: laplace, epsilon: 1}":                "params.precision",
		"column: v, range: [0, 1e9], precision: 1e-9, noise: {mechanism: laplace, epsilon: 1}":             "params.precision",
		"column: v, range: [0, 100], noise: {mechanism: laplace, epsilon: 1, sensitivity: 5}":              "params.noise.sensitivity",
		"column: v, range: [0, 100], noise: {mechanism: laplace, epsilon: 0}":                              "params.noise.epsilon",
		"column: v, range: [0, 100], noise: {mechanism: laplace, epsilon: 1, delta: 0.1}":                  "params.noise.delta",
		"column: v, range: [0, 100], noise: {mechanism: gaussian, epsilon: 1}":                             "params.noise.delta",
		"column: v, range: [0, 100], precision: 50, noise: {mechanism: gaussian, epsilon: 2, delta: 1e-6}": "params.noise.epsilon",
		"column: v, range: [0, 100], noise: {mechanism: cauchy, epsilon: 1}":                               "params.noise.mechanism",
		"column: v, range: [0, 100], noise: {mechanism: laplace, epsilon: 1, colluders: 9}":                "params.noise.colluders",
	})
}

// A noised quantile over real nodes under the default policy (with a
// larger budget, 100): it runs, answers near the exact quantile, spends ε on
// every party's dataset column and no exact release, and a second job that
// the budget cannot hold is refused at admission, spending nothing. The
// ledgers hold what the profile states and the refusal no datum.
func TestNoisedOverRealNodes(t *testing.T) {
	t.Parallel()
	columns := dense()
	pooled := pooledOf(columns)
	spec, parties := consortium(t, columns, ", quantiles: [0.5], precision: 0.5, range: [100, 131], "+
		"noise: {mechanism: laplace, epsilon: 40}")
	pol := policy.Default()
	pol.Budget.Epsilon = 100
	pol.ExactReleases = 0 // a noised quantile is no exact release
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	c := policyCluster(t, ctx, spec, parties, nil, pol)
	if err := c.MakeLeader(ctx, "org01"); err != nil {
		t.Fatal(err)
	}
	n := c.Node("org01")
	id := submit(t, ctx, n, spec)
	_, got := waitJob(t, ctx, n, id)
	if got.Rounds != 6 || len(got.Quantiles) != 1 {
		t.Fatalf("result %+v, want one quantile after 6 rounds", got)
	}
	// ε/6 per round, at most two slots: Laplace noise of scale 0.3 rows or
	// less, so the search goes astray by a few rows at most (beyond 10 rows
	// has probability e^-33), and six rows hold each value.
	ystar := pooled[rank(0.5, int64(len(pooled)))-1]
	if math.Abs(got.Quantiles[0].Value-ystar) > 0.5+2 {
		t.Errorf("median %v, the exact one is %v", got.Quantiles[0].Value, ystar)
	}
	checkLedgers(t, c, parties, id, -1)
	// Every draw spends ε/6: six rounds, and any attempt re-run on a busy
	// machine draws again.
	spent := map[string]float64{}
	for _, name := range parties {
		show, err := c.Node(name).Policy().Show()
		if err != nil {
			t.Fatal(err)
		}
		spent[name] = show.Spent[name+".csv.v"].Epsilon
		if draws := spent[name] / (40.0 / 6); draws < 6-1e-9 || math.Abs(draws-math.Round(draws)) > 1e-9 {
			t.Errorf("%s spent ε %v on its column, want 6 draws of 40/6 or more", name, spent[name])
		}
	}

	again := withParams(t, spec, "again", ", quantiles: [0.5], precision: 0.5, range: [100, 131], "+
		"noise: {mechanism: laplace, epsilon: 61}")
	id = submit(t, ctx, n, again)
	rec := failedJob(t, ctx, n, id, "the budget cannot hold a second draw")
	if !strings.Contains(rec.Error, "budget") {
		t.Errorf("the failure %q does not name the rule budget", rec.Error)
	}
	checkNoData(t, rec.Error)
	show, err := c.Node("org02").Policy().Show()
	if err != nil || show.Spent["org02.csv.v"].Epsilon != spent["org02"] {
		t.Errorf("after the refusal org02 spent %+v, %v; want %v still", show.Spent, err, spent["org02"])
	}
}

// The bundled noised examples run under the default policy (each one's ε
// is the column's whole default budget) and answer within the range.
func TestNoisedExampleUnderDefaultPolicy(t *testing.T) {
	t.Parallel()
	for _, example := range []string{"noised.yaml", "exponential.yaml"} {
		t.Run(example, func(t *testing.T) {
			t.Parallel()
			runNoisedExample(t, example)
		})
	}
}

func runNoisedExample(t *testing.T, example string) {
	spec := filepath.Join("..", "examples", "quantile", example)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	out := t.TempDir()
	if _, err := sim.Run(ctx, spec, sim.RunOptions{Kinds: job.Registry{"quantile": Kind{}}, Out: out,
		Setup: simtest.ThresholdKeys(keyBits), Timing: fastTiming, Policy: policy.Default()}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := decodeResult(t, raw)
	if len(got.Quantiles) != 2 || (example == "noised.yaml") != (got.Rounds == 6) {
		t.Fatalf("result %s: want two quantiles, after 6 rounds of bisection for %s only", raw, example)
	}
	for _, q := range got.Quantiles {
		if q.Value < 0 || q.Value > 60 {
			t.Errorf("q %v: %v outside the range", q.Q, q.Value)
		}
	}
}
