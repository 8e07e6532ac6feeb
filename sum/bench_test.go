package sum_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// vector is a benchmark job: every party aggregates a vector of
// params.length values over secure aggregation, once.
type vector struct{}

func (vector) Validate(*job.Spec) error { return nil }

func (vector) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	_, err := vectorRound.Run(ctx, c, job.Call[struct{}]{}, func(outs *job.Outcome[secureagg.Outcome]) (struct{}, error) {
		if err := outs.Err(); err != nil {
			return struct{}{}, err
		}
		outcomes := map[string]*secureagg.Outcome{}
		for p, o := range outs.Results {
			outcomes[p] = &o
		}
		_, err := secureagg.Fold(outs.Step, outcomes, outs.Failed, outs.Silent)
		return struct{}{}, err
	})
	if err != nil {
		return nil, err
	}
	return job.Result{}, nil
}

func (vector) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	return vectorSession{p}, nil
}

// vectorRound is the benchmark's one round: each party's aggregation outcome.
var vectorRound = job.Round[struct{}, secureagg.Outcome, struct{}]{Phase: "aggregate"}

type vectorSession struct{ p job.Participant }

func (vectorSession) Close() {}

func (s vectorSession) Step(ctx context.Context, step job.Step) ([]byte, error) {
	p := s.p
	n, _ := p.Spec().Params["length"].(int)
	name, _ := p.Spec().Params["backend"].(string)
	backend, err := secureagg.ParseBackend(name)
	if err != nil {
		return nil, err
	}
	cfg, _, err := secureagg.Configure(p.Secrets(), p.Self(), step, secureagg.Setup{Backend: backend, Length: n, FracBits: 8, ValueBits: 24})
	if err != nil {
		return nil, err
	}
	in := make([]float64, n)
	for i := range in {
		in[i] = float64(i%1000) / 8
	}
	res, err := secureagg.Aggregate(ctx, p, step, cfg, in)
	return secureagg.EncodeReport(p.Self(), step, res, err)
}

func (vector) OutputDisclosure(job.Step) wire.Disclosure { return wire.DisclosePublicResult }

// zerosReady is the mean number of lattice encryptions of zero ready in
// the nodes' pools (their cohort_lattice_zeros_ready gauge; 0 where a
// node keeps none), so that a run says whether its rounds found the pools
// full or computed their encryptions on the critical path.
func zerosReady(b *testing.B, c *sim.Cluster) float64 {
	var sum float64
	nodes := c.Running()
	for _, n := range nodes {
		rec := httptest.NewRecorder()
		n.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		for _, line := range strings.Split(rec.Body.String(), "\n") {
			if v, ok := strings.CutPrefix(line, "cohort_lattice_zeros_ready "); ok {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					b.Fatal(err)
				}
				sum += f
			}
		}
	}
	return sum / float64(max(len(nodes), 1))
}

// benchLogger shows the nodes' warnings when COHORT_BENCH_LOG is set, to
// see why a slow round was slow (a leader change, a dropped party).
func benchLogger() *slog.Logger {
	if os.Getenv("COHORT_BENCH_LOG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// BenchmarkAggregateRealNodes measures one secure aggregation round over
// real in-process nodes (libp2p on loopback, Raft coordinator) with 2048-bit
// keys: ms/round is the aggregate step's duration as committed in the log,
// ms/job the whole job's from submission to its record done (without
// COHORT_BENCH_GAP's idling, which sec/op counts), B/party the mean bytes
// each party sent, maxB/party the most any party
// sent (the root, which sends the total down and the result), for both
// backends of secureagg in one run (Paillier asking t+1 decryptors).
// COHORT_BENCH_N, COHORT_BENCH_LEN and COHORT_BENCH_BACKEND restrict the
// grid (e.g. COHORT_BENCH_N=5). COHORT_BENCH_GAP (a duration, e.g. 3s)
// idles the nodes that long before each timed round, as between a
// consortium's jobs, so that their pools refill (a node fills them only
// while it runs no job; back to back, a round finds them nearly empty);
// ms/round does not count the gap.
func BenchmarkAggregateRealNodes(b *testing.B) {
	gap, _ := time.ParseDuration(os.Getenv("COHORT_BENCH_GAP"))
	sizes := []int{3, 5, 9, 17}
	lengths := []int{50, 10000}
	if v, err := strconv.Atoi(os.Getenv("COHORT_BENCH_N")); err == nil {
		sizes = []int{v}
	}
	if v, err := strconv.Atoi(os.Getenv("COHORT_BENCH_LEN")); err == nil {
		lengths = []int{v}
	}
	backends := []string{"lattice", "paillier"}
	if v := os.Getenv("COHORT_BENCH_BACKEND"); v != "" {
		backends = []string{v}
	}
	for _, n := range sizes {
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("org%02d", i+1)
		}
		ctx := context.Background()
		c, err := sim.StartCluster(ctx, b.TempDir(), names, sim.ClusterOptions{
			Kinds: job.Registry{"vector": vector{}}, Setup: sim.ThresholdKeys(2048),
			Timing: node.Timing{StepMS: 600_000}, Logger: benchLogger(),
		})
		if err != nil {
			b.Fatal(err)
		}
		for _, length := range lengths {
			for _, backend := range backends {
				spec := "kind: vector\nparties:\n"
				for _, name := range names {
					spec += "  - name: " + name + "\n"
				}
				spec += fmt.Sprintf("params: {length: %d, backend: %s}\n", length, backend)
				runOnce := func(b *testing.B) (secs, whole, bytes, most float64) {
					leader, _ := c.WaitLeader(ctx)
					start := time.Now()
					id, err := leader.Submit(ctx, []byte(spec))
					if err != nil {
						b.Fatal(err)
					}
					rec, err := leader.Wait(ctx, id)
					if err != nil || rec.Status != node.StatusDone {
						b.Fatalf("job: %v %s", err, rec.Error)
					}
					whole = time.Since(start).Seconds()
					var res struct {
						Timing map[string]float64
					}
					if err := json.Unmarshal(rec.Result, &res); err != nil {
						b.Fatal(err)
					}
					if bytes, most, err = c.SentPerParty(id, names); err != nil {
						b.Fatal(err)
					}
					return res.Timing["aggregate"], whole, bytes, most
				}
				b.Run(fmt.Sprintf("N=%d/len=%d/backend=%s", n, length, backend), func(b *testing.B) {
					runOnce(b) // warm-up: builds each key's fixed-base tables once per process
					b.ResetTimer()
					var secs, jobs, bytes, most, zeros float64
					for i := 0; i < b.N; i++ {
						time.Sleep(gap)
						zeros += zerosReady(b, c)
						s, j, by, m := runOnce(b)
						secs += s
						jobs += j
						bytes += by
						most = max(most, m)
					}
					b.ReportMetric(1000*secs/float64(b.N), "ms/round")
					b.ReportMetric(1000*jobs/float64(b.N), "ms/job")
					b.ReportMetric(bytes/float64(b.N), "B/party")
					b.ReportMetric(most, "maxB/party")
					b.ReportMetric(zeros/float64(b.N), "zeros/node")
				})
			}
		}
		c.Close()
		time.Sleep(100 * time.Millisecond)
	}
}
