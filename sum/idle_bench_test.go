package sum_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/paillier/paillertest"
	"github.com/cohortdm/cohort/sim"
)

// BenchmarkSumAfterIdle measures a secure sum of vectors of 50 and 10,000
// values (Paillier, 2048-bit key, the vector job of
// BenchmarkAggregateRealNodes) over five real in-process nodes, each job
// submitted after the nodes idled: a second after the last job ended, and
// until every node's randomiser pool is full where the nodes keep one (a
// node fills it between jobs). ms/round is the aggregate step as committed,
// the critical path that the pools shorten; ns/op is submission to result,
// the idle time excluded. The key's encryption tables are built before the
// nodes start, and one untimed job of 50 values warms the nodes up. It
// reads the pools through the node's status as JSON, so that the same file
// builds on a tree without them (an A/B run).
func BenchmarkSumAfterIdle(b *testing.B) {
	names := []string{"org01", "org02", "org03", "org04", "org05"}
	ctx := context.Background()
	c, err := sim.StartCluster(ctx, b.TempDir(), names, sim.ClusterOptions{
		Kinds: job.Registry{"vector": vector{}}, Setup: cachedKeys,
		// Slow heartbeats: a party is found unreachable after five of them
		// without an answer, and a loaded machine must not drop one.
		Timing: node.Timing{StepMS: 600_000, HeartbeatMS: 3000, ElectionMS: 3000}, Logger: benchLogger(),
	})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for _, length := range []int{50, 10000} {
		spec := "kind: vector\nparties:\n"
		for _, name := range names {
			spec += "  - name: " + name + "\n"
		}
		spec += fmt.Sprintf("params: {length: %d, backend: paillier}\n", length)
		run := func(b *testing.B) float64 {
			var rec *node.JobRecord
			for try := 1; rec == nil || rec.Status != node.StatusDone; try++ {
				leader, err := c.WaitLeader(ctx)
				if err != nil {
					b.Fatal(err)
				}
				id, err := leader.Submit(ctx, []byte(spec))
				if err != nil {
					b.Fatal(err)
				}
				if rec, err = leader.Wait(ctx, id); err != nil {
					b.Fatal(err)
				}
				if rec.Status != node.StatusDone && try == 3 {
					b.Fatalf("job failed three times: %s", rec.Error)
				}
				if rec.Status != node.StatusDone {
					b.Logf("job failed, submitted again: %s", rec.Error) // only a done job's round counts
				}
			}
			var res struct{ Timing map[string]float64 }
			if err := json.Unmarshal(rec.Result, &res); err != nil {
				b.Fatal(err)
			}
			return res.Timing["aggregate"]
		}
		b.Run(fmt.Sprintf("N=5/len=%d", length), func(b *testing.B) {
			if length == 50 {
				idle(b, c)
				run(b) // warm-up: the nodes' first job (connections, caches)
			}
			var secs float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				idle(b, c)
				b.StartTimer()
				secs += run(b)
			}
			b.ReportMetric(1000*secs/float64(b.N), "ms/round")
		})
	}
}

// cachedKeys deals a 2048-bit threshold key from the safe primes cached in
// the temporary directory (paillertest.SafePrimes): a run measures rounds,
// not prime generation.
func cachedKeys(names []string) (func(name, dataDir string) error, error) {
	p, q, err := paillertest.SafePrimes(1024)
	if err != nil {
		return nil, err
	}
	pk, shares, err := paillier.DealThresholdFromPrimes(rand.Reader, p, q, 1, len(names), (len(names)-1)/2)
	if err != nil {
		return nil, err
	}
	// The wide fixed-base table, which a node builds once per key and
	// process, is shared by the nodes' copies of the key.
	pk.PrecomputeFor(10000)
	keys, err := keyring.AssignShares(names, shares)
	if err != nil {
		return nil, err
	}
	return func(name, dataDir string) error { return keyring.SavePaillier(dataDir, keys[name]) }, nil
}

// idle waits a second, then until every node's randomiser pool, if it
// keeps one, is full.
func idle(b *testing.B, c *sim.Cluster) {
	time.Sleep(time.Second)
	deadline := time.Now().Add(10 * time.Minute)
	for _, n := range c.Running() {
		for !poolFull(b, n) {
			if time.Now().After(deadline) {
				b.Fatalf("%s: randomiser pool not full after 10 minutes", n.Name())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func poolFull(b *testing.B, n *node.Node) bool {
	raw, err := json.Marshal(n.Status())
	if err != nil {
		b.Fatal(err)
	}
	var st struct {
		Randomizers *struct{ Size, Ready int } `json:"randomizers"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		b.Fatal(err)
	}
	return st.Randomizers == nil || st.Randomizers.Ready >= st.Randomizers.Size
}
