package quantile

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/internal/shareddata"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// adultAges reads the age column of UCI Adult's training file (30,162 rows
// without a missing value, as the anonymisation figures use; 32,561 ages
// in all), or skips.
func adultAges(b *testing.B) []float64 {
	dir, err := shareddata.Dir(".", "adult", "COHORT_ADULT_DIR")
	if err != nil {
		b.Skip(err)
	}
	f, err := os.Open(filepath.Join(dir, "adult.data"))
	if err != nil {
		b.Skip(err)
	}
	defer f.Close()
	var ages []float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ", ")
		if len(fields) < 15 || slices.Contains(fields, "?") {
			continue
		}
		a, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			b.Fatal(err)
		}
		ages = append(ages, a)
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return ages
}

// BenchmarkNoisedMedianAdult runs the noised median of Adult's ages, the
// rows dealt round-robin to three parties, over real in-process nodes with
// a 2048-bit threshold key, at several ε, by noisy bisection (Laplace,
// params.range [0, 100], precision 0.5: 8 rounds) and by the exponential
// mechanism (the same grid's 257 points, one draw). err_years is the
// median over the runs of |answer − exact median|, rank_err_pct the median
// of the answer's rank error as a share of the rows (rankError), s/job the
// counting or drawing phase's time. COHORT_BENCH_EPS narrows the grid to
// one ε, COHORT_BENCH_MECH to one mechanism.
func BenchmarkNoisedMedianAdult(b *testing.B) {
	ages := adultAges(b)
	names := []string{"org01", "org02", "org03"}
	cols := make([][]float64, len(names))
	for i, a := range ages {
		cols[i%len(names)] = append(cols[i%len(names)], a)
	}
	pooled := pooledOf(cols)
	exact := pooled[rank(0.5, int64(len(pooled)))-1]
	epsilons := []float64{0.001, 0.01, 0.1, 1, 10}
	if v, err := strconv.ParseFloat(os.Getenv("COHORT_BENCH_EPS"), 64); err == nil {
		epsilons = []float64{v}
	}
	spec, _ := consortium(b, cols, ", quantiles: [0.5], precision: 0.5, range: [0, 100], noise: {mechanism: MECH, epsilon: EPS}")
	raw, err := os.ReadFile(spec)
	if err != nil {
		b.Fatal(err)
	}
	pol := policy.Default()
	pol.Budget.Epsilon = math.MaxFloat64 // the figure spends far beyond any real budget
	ctx := context.Background()
	c, err := sim.StartCluster(ctx, b.TempDir(), names, sim.ClusterOptions{
		Kinds: job.Registry{"quantile": Kind{}}, TablesDir: filepath.Dir(spec), Setup: sim.ThresholdKeys(2048),
		Timing: node.Timing{StepMS: 600_000}, Logger: benchLogger(), Policy: pol,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	mechs := []string{"laplace", Exponential}
	if m := os.Getenv("COHORT_BENCH_MECH"); m != "" {
		mechs = []string{m}
	}
	for _, mech := range mechs {
		for _, eps := range epsilons {
			spec := strings.Replace(string(raw), "EPS", strconv.FormatFloat(eps, 'g', -1, 64), 1)
			b.Run(fmt.Sprintf("mech=%s/eps=%v", mech, eps), func(b *testing.B) {
				benchNoisedMedian(b, ctx, c, []byte(strings.Replace(spec, "MECH", mech, 1)), pooled, exact)
			})
		}
	}
}

// benchNoisedMedian runs spec b.N times and reports its errors and time.
func benchNoisedMedian(b *testing.B, ctx context.Context, c *sim.Cluster, spec []byte, pooled []float64, exact float64) {
	var errs, rankErrs []float64
	secs, shared := 0.0, 0
	for range b.N {
		id, rec := runAtLeader(b, ctx, c, spec)
		shared += sharesSent(b, c, id)
		var res struct {
			Quantiles []Quantile
			Timing    map[string]float64
		}
		if err := json.Unmarshal(rec.Result, &res); err != nil {
			b.Fatal(err)
		}
		v := res.Quantiles[0].Value
		errs = append(errs, math.Abs(v-exact))
		rankErrs = append(rankErrs, 100*rankError(pooled, v, 0.5))
		secs += res.Timing[count.Phase] + res.Timing[emRound.Phase]
	}
	b.ReportMetric(median(errs), "err_years")
	b.ReportMetric(median(rankErrs), "rank_err_pct")
	b.ReportMetric(secs/float64(b.N), "s/job")
	b.ReportMetric(float64(shared)/float64(b.N*len(c.Names))/1e6, "share_MB/party")
}

// rankError is how far, as a share of the rows, q·N lies outside the
// ranks v takes in sorted (from count(< v) to count(≤ v): ages tie).
func rankError(sorted []float64, v, q float64) float64 {
	lt, _ := slices.BinarySearch(sorted, v)
	le, _ := slices.BinarySearch(sorted, math.Nextafter(v, math.Inf(1)))
	target := q * float64(len(sorted))
	return max(0, float64(lt)-target, target-float64(le)) / float64(len(sorted))
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	return s[len(s)/2]
}

// sharesSent is the bytes of secret shares every party's ledger records
// for job id.
func sharesSent(b *testing.B, c *sim.Cluster, id string) int {
	total := 0
	for _, name := range c.Names {
		entries, err := audit.ReadFile(c.LedgerPath(name))
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range entries {
			if e.Job == id && wire.Disclosure(e.Disclosure) == wire.DiscloseSecretShare {
				total += e.Bytes
			}
		}
	}
	return total
}
