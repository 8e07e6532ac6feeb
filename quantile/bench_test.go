package quantile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sim"
)

// benchLogger shows the nodes' warnings when COHORT_BENCH_LOG is set.
func benchLogger() *slog.Logger {
	if os.Getenv("COHORT_BENCH_LOG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// benchTables writes one CSV of rows values per party (normal, mean 50,
// sd 10, in cents, a different seed per party) and a spec asking for the
// median and the 90th percentile at precision 0.01.
func benchTables(b *testing.B, names []string, rows int) string {
	dir := b.TempDir()
	var spec strings.Builder
	spec.WriteString("kind: quantile\nparties:\n")
	for i, name := range names {
		r := rand.New(rand.NewPCG(uint64(i), 99))
		var csv strings.Builder
		csv.WriteString("v\n")
		for range rows {
			csv.WriteString(strconv.FormatFloat(math.Round((50+10*r.NormFloat64())*100)/100, 'f', -1, 64))
			csv.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, name+".csv"), []byte(csv.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&spec, "  - name: %s\n    tables: [{name: t, path: %s.csv}]\n", name, name)
	}
	spec.WriteString("schema:\n  t: {v: numeric}\nparams: {column: v, quantiles: [0.5, 0.9], precision: 0.01}\n")
	path := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(path, []byte(spec.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkQuantileRealNodes runs the quantile job (median and 90th
// percentile, precision 0.01, 100,000 rows per party) over real in-process
// nodes (libp2p on loopback, Raft coordinator) with a 2048-bit threshold
// key. s/job is the job's count count.Phase as committed in the log, rounds the
// counting rounds it took, ms/round their mean, B/party the mean bytes a
// party sent for the job and maxB/party the most any party sent (the
// root's). Both backends run in one run (params.backend auto, which is
// Paillier for these short count vectors, and lattice). COHORT_BENCH_N,
// COHORT_BENCH_ROWS and COHORT_BENCH_BACKEND narrow the grid.
func BenchmarkQuantileRealNodes(b *testing.B) {
	sizes := []int{3, 5}
	rows := 100_000
	if v, err := strconv.Atoi(os.Getenv("COHORT_BENCH_N")); err == nil {
		sizes = []int{v}
	}
	if v, err := strconv.Atoi(os.Getenv("COHORT_BENCH_ROWS")); err == nil {
		rows = v
	}
	backends := []string{"auto", "lattice"}
	if v := os.Getenv("COHORT_BENCH_BACKEND"); v != "" {
		backends = []string{v}
	}
	for _, n := range sizes {
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("org%02d", i+1)
		}
		spec := benchTables(b, names, rows)
		raw, err := os.ReadFile(spec)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		c, err := sim.StartCluster(ctx, b.TempDir(), names, sim.ClusterOptions{
			Kinds: job.Registry{"quantile": Kind{}}, TablesDir: filepath.Dir(spec), Setup: sim.ThresholdKeys(2048),
			Timing: node.Timing{StepMS: 600_000}, Logger: benchLogger(), Policy: lax(),
		})
		if err != nil {
			b.Fatal(err)
		}
		runOnce := func(b *testing.B, raw []byte) (secs float64, rounds int, bytes, most float64) {
			id, rec := runAtLeader(b, ctx, c, raw)
			var res struct {
				Timing map[string]float64
				Rounds int
			}
			if err := json.Unmarshal(rec.Result, &res); err != nil {
				b.Fatal(err)
			}
			if bytes, most, err = c.SentPerParty(id, names); err != nil {
				b.Fatal(err)
			}
			return res.Timing[count.Phase], res.Rounds, bytes, most
		}
		for _, be := range backends {
			raw := bytes.Replace(raw, []byte("params: {"), []byte("params: {backend: "+be+", "), 1)
			b.Run(fmt.Sprintf("N=%d/rows=%d/backend=%s", n, rows, be), func(b *testing.B) {
				runOnce(b, raw) // warm-up: builds each key's fixed-base tables once per process
				b.ResetTimer()
				var secs, bytes, most float64
				rounds := 0
				for i := 0; i < b.N; i++ {
					s, r, by, m := runOnce(b, raw)
					secs += s
					rounds += r
					bytes += by
					most = max(most, m)
				}
				b.ReportMetric(secs/float64(b.N), "s/job")
				b.ReportMetric(float64(rounds)/float64(b.N), "rounds")
				b.ReportMetric(1000*secs/float64(rounds), "ms/round")
				b.ReportMetric(bytes/float64(b.N), "B/party")
				b.ReportMetric(most, "maxB/party")
			})
		}
		c.Close()
		time.Sleep(100 * time.Millisecond)
	}
}

// runAtLeader submits a spec at the cluster's leader and waits for the
// job, which must succeed.
func runAtLeader(b *testing.B, ctx context.Context, c *sim.Cluster, spec []byte) (string, *node.JobRecord) {
	b.Helper()
	leader, err := c.WaitLeader(ctx)
	if err != nil {
		b.Fatal(err)
	}
	id, err := leader.Submit(ctx, spec)
	if err != nil {
		b.Fatal(err)
	}
	rec, err := leader.Wait(ctx, id)
	if err != nil || rec.Status != node.StatusDone {
		b.Fatalf("job: %v %s", err, rec.Error)
	}
	return id, rec
}

// BenchmarkSearchRounds counts the rounds of the bisection alone (the
// counts summed in the clear, no network or keys) on the data of
// BenchmarkQuantileRealNodes, 3 parties: how the rounds grow with the
// precision and (hardly) with the number of quantiles, without and with
// params.range [0, 100].
func BenchmarkSearchRounds(b *testing.B) {
	var columns [][]float64
	for i := range 3 {
		r := rand.New(rand.NewPCG(uint64(i), 99))
		col := make([]float64, 100_000)
		for j := range col {
			col[j] = math.Round((50+10*r.NormFloat64())*100) / 100
		}
		columns = append(columns, col)
	}
	for _, hint := range [][]float64{nil, {0, 100}} {
		for _, p := range []float64{1, 0.1, 0.01, 0.0001, 0} {
			for _, qs := range [][]float64{{0.5}, {0.5, 0.9}, {0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99}} {
				name := fmt.Sprintf("precision=%v/quantiles=%d", p, len(qs))
				if hint != nil {
					name = fmt.Sprintf("range=%v/%s", hint, name)
				}
				b.Run(name, func(b *testing.B) {
					rounds := 0
					for range b.N {
						_, rounds = bisectHint(b, columns, qs, p, hint)
					}
					b.ReportMetric(float64(rounds), "rounds")
				})
			}
		}
	}
}
