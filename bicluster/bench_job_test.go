package bicluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/cohortdm/cohort/bicluster"
	"github.com/cohortdm/cohort/internal/cputime"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sim"
)

// BenchmarkJobRealNodes is the whole Phoenix job end to end over four
// real in-process nodes (libp2p on loopback, Raft coordinator) with
// 2048-bit keys, on 1,000 to 50,000 elements (runtimeData: elements/50
// rows × 50 columns, dealt over the parties): s/job is from submission to
// the result, iter the iterations, B/party the mean bytes each party sent
// and maxB/party the most (the root's); cpu-s/job is the CPU time of the
// whole process (all nodes) during the job, which other engineers' load on
// the shared cores does not inflate much: cpu-s/job ÷ cores bounds the
// time on an idle machine from below. The key is dealt once (safe
// primes take a while) and one warm-up job builds the keys' tables.
// Every size runs with params.backend auto (Paillier for these vectors of
// 100 values) and lattice, in one run. COHORT_BENCH_PARTIES (default 4),
// COHORT_BENCH_ELEMENTS (one size) and COHORT_BENCH_BACKEND (one backend)
// change the grid.
//
//	go test ./bicluster/ -run '^$' -bench JobRealNodes -count 3 -timeout 30m
func BenchmarkJobRealNodes(b *testing.B) {
	parties, sizes := 4, []int{1_000, 5_000, 10_000, 50_000}
	if v, err := strconv.Atoi(os.Getenv("COHORT_BENCH_PARTIES")); err == nil {
		parties = v
	}
	if v, err := strconv.Atoi(os.Getenv("COHORT_BENCH_ELEMENTS")); err == nil {
		sizes = []int{v}
	}
	backends := []string{"auto", "lattice"}
	if v := os.Getenv("COHORT_BENCH_BACKEND"); v != "" {
		backends = []string{v}
	}
	names := make([]string, parties)
	for i := range names {
		names[i] = fmt.Sprintf("org%02d", i+1)
	}
	dir := b.TempDir()
	specs := map[string]string{}
	for _, n := range sizes {
		m := runtimeData(b, n)
		for _, be := range backends {
			specs[fmt.Sprint(n, be)], _, _ = consortiumIn(b, dir, fmt.Sprintf("e%d-%s-", n, be), m, len(names), []byte("bench"), "backend: "+be)
		}
	}
	ctx := context.Background()
	c := simtest.StartCluster(b, ctx, names, sim.ClusterOptions{
		Kinds: job.Registry{"bicluster": bicluster.Kind{}}, TablesDir: dir, Setup: sim.ThresholdKeys(2048),
		Timing: node.Timing{StepMS: 600_000},
	})
	defer c.Close()
	run := func(b *testing.B, spec string) (secs, cpu float64, iters int, bytes, most float64, found int) {
		raw, err := os.ReadFile(spec)
		if err != nil {
			b.Fatal(err)
		}
		leader, err := c.WaitLeader(ctx)
		if err != nil {
			b.Fatal(err)
		}
		start, cpu0 := time.Now(), cputime.Used(b)
		id, err := leader.Submit(ctx, raw)
		if err != nil {
			b.Fatal(err)
		}
		rec, err := leader.Wait(ctx, id)
		if err != nil || rec.Status != node.StatusDone {
			b.Fatalf("job: %v %s", err, rec.Error)
		}
		secs = time.Since(start).Seconds()
		cpu = (cputime.Used(b) - cpu0).Seconds()
		var res struct {
			Iterations int                `json:"iterations"`
			Biclusters []json.RawMessage  `json:"biclusters"`
			Timing     map[string]float64 `json:"timing"`
		}
		if err := json.Unmarshal(rec.Result, &res); err != nil {
			b.Fatal(err)
		}
		b.Logf("phases (s): %v", res.Timing)
		if bytes, most, err = c.SentPerParty(id, names); err != nil {
			b.Fatal(err)
		}
		return secs, cpu, res.Iterations, bytes, most, len(res.Biclusters)
	}
	for _, be := range backends {
		run(b, specs[fmt.Sprint(sizes[0], be)]) // warm-up
	}
	for _, n := range sizes {
		for _, be := range backends {
			b.Run(fmt.Sprintf("elements=%d/backend=%s", n, be), func(b *testing.B) {
				var secs, cpu, bytes, most float64
				var iters, found int
				for i := 0; i < b.N; i++ {
					s, c, it, by, m, f := run(b, specs[fmt.Sprint(n, be)])
					secs, cpu, iters, found = secs+s, cpu+c, it, f
					bytes += by
					most = max(most, m)
				}
				b.ReportMetric(secs/float64(b.N), "s/job")
				b.ReportMetric(cpu/float64(b.N), "cpu-s/job")
				b.ReportMetric(float64(iters), "iter")
				b.ReportMetric(float64(found), "biclusters")
				b.ReportMetric(bytes/float64(b.N), "B/party")
				b.ReportMetric(most, "maxB/party")
			})
		}
	}
}
