package sum_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sum"
)

// BenchmarkConcurrentJobs runs 50 sum jobs (3 nodes, 2048-bit keys, the
// bundled example's tables) one after another, then 50 submitted at once,
// and reports the ratio of the two wall times and the leader changes (Raft
// term increments) during each. The target is a ratio ≤ 1.5 with no leader
// change: jobs queue (max_jobs) instead of starving Raft's heartbeats.
// COHORT_BENCH_JOBS changes the count.
//
//	go test ./sum -run '^$' -bench ConcurrentJobs -benchtime 1x -count 3
func BenchmarkConcurrentJobs(b *testing.B) {
	jobs := 50
	if v, err := strconv.Atoi(os.Getenv("COHORT_BENCH_JOBS")); err == nil {
		jobs = v
	}
	specPath := filepath.Join("..", "examples", "sum", "spec.yaml")
	raw, err := os.ReadFile(specPath)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		c, err := sim.StartCluster(ctx, b.TempDir(), []string{"north", "south", "west"}, sim.ClusterOptions{
			Kinds: job.Registry{"sum": sum.Kind{}}, TablesDir: filepath.Dir(specPath),
			Setup: sim.ThresholdKeys(2048), Logger: benchLogger(),
		})
		if err != nil {
			b.Fatal(err)
		}
		run := func(concurrent bool) (time.Duration, uint64) {
			leader, err := c.WaitLeader(ctx)
			if err != nil {
				b.Fatal(err)
			}
			term := func() uint64 {
				t, _ := strconv.ParseUint(leader.Raft().Stats()["term"], 10, 64)
				return t
			}
			before := term()
			start := time.Now()
			ids := make([]string, jobs)
			var wg sync.WaitGroup
			submit := func(k int) {
				id, err := leader.Submit(ctx, raw)
				if err != nil {
					b.Error(err)
					return
				}
				ids[k] = id
				if !concurrent {
					wait(b, ctx, leader, id)
				}
			}
			for k := range ids {
				if concurrent {
					wg.Go(func() { submit(k) })
				} else {
					submit(k)
				}
			}
			wg.Wait()
			for _, id := range ids {
				if id != "" {
					wait(b, ctx, leader, id)
				}
			}
			return time.Since(start), term() - before
		}
		if leader, err := c.WaitLeader(ctx); err == nil { // warm-up: the key's tables
			id, err := leader.Submit(ctx, raw)
			if err != nil {
				b.Fatal(err)
			}
			wait(b, ctx, leader, id)
		}
		seq, seqChanges := run(false)
		conc, concChanges := run(true)
		c.Close()
		cancel()
		b.ReportMetric(seq.Seconds(), "s-sequential")
		b.ReportMetric(conc.Seconds(), "s-concurrent")
		b.ReportMetric(conc.Seconds()/seq.Seconds(), "ratio")
		b.ReportMetric(float64(seqChanges+concChanges), "leader-changes")
	}
}

func wait(b *testing.B, ctx context.Context, n *node.Node, id string) {
	rec, err := n.Wait(ctx, id)
	if err != nil || rec.Status != node.StatusDone {
		b.Errorf("job %s: %v %s", id, err, rec.Error)
	}
}
