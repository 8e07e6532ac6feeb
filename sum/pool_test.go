package sum_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sum"
)

// TestSumDrawsFromTheNodesPool runs real sums over real in-process nodes,
// each keeping a pool of randomisers bounded at 8: the pools fill to
// their bound and no further, the sum's encryptions take their
// randomisers from them and the total is exact; a new key installed
// replaces each node's pool (the old one's filler stops), and closing the
// nodes stops every filler.
func TestSumDrawsFromTheNodesPool(t *testing.T) {
	spec, names, total := consortium(t, 3, "", func(p, r int) float64 { return float64(10*p + r) })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const size = 8
	dir := t.TempDir()
	c, err := sim.StartCluster(ctx, dir, names, sim.ClusterOptions{
		Kinds: job.Registry{"sum": sum.Kind{}}, TablesDir: filepath.Dir(spec),
		Setup: sim.ThresholdKeys(keyBits), Timing: fastTiming, RandomizerPool: size,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	nodes := c.Running()
	waitPoolsFull(t, ctx, nodes, size)
	if res := runJob(t, ctx, c, spec); res["sum"].(float64) != total {
		t.Fatalf("sum %v, want %v", res["sum"], total)
	}
	for _, n := range nodes {
		st := n.Status().Randomizers
		if st.Taken < 1 || st.Computed != 0 {
			t.Fatalf("%s: pool %+v: want its randomisers taken, none computed", n.Name(), st)
		}
	}
	waitPoolsFull(t, ctx, nodes, size)
	if got := fillers(); got != len(nodes) {
		t.Fatalf("%d pool fillers running, want one per node (%d)", got, len(nodes))
	}
	drawn := map[string]int64{}
	for _, n := range nodes {
		st := n.Status().Randomizers
		drawn[n.Name()] = st.Taken + st.Computed
	}

	// A new consortium key: each node's first sum under it replaces its pool.
	_, keys, err := keyring.Deal(rand.Reader, keyBits, names, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if err := keyring.SavePaillier(filepath.Join(dir, name), keys[name]); err != nil {
			t.Fatal(err)
		}
	}
	if res := runJob(t, ctx, c, spec); res["sum"].(float64) != total {
		t.Fatalf("sum under the new key %v, want %v", res["sum"], total)
	}
	waitPoolsFull(t, ctx, nodes, size)
	if got := fillers(); got != len(nodes) {
		t.Fatalf("%d pool fillers running after the key changed, want %d", got, len(nodes))
	}
	for _, n := range nodes {
		// The new key's pool, started in the sum's step, gave its encryption.
		if st := n.Status().Randomizers; st.Taken+st.Computed <= drawn[n.Name()] {
			t.Fatalf("%s: pool %+v: the sum under the new key drew nothing from it", n.Name(), st)
		}
	}
	c.Close()
	if got := fillers(); got != 0 {
		t.Fatalf("%d pool fillers still running after the nodes closed", got)
	}
}

// TestSumWithoutPool checks that randomizer_pool -1 keeps no pool and the
// sum is still exact.
func TestSumWithoutPool(t *testing.T) {
	spec, names, total := consortium(t, 3, "", func(p, r int) float64 { return float64(p - r) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := sim.StartCluster(ctx, t.TempDir(), names, sim.ClusterOptions{
		Kinds: job.Registry{"sum": sum.Kind{}}, TablesDir: filepath.Dir(spec),
		Setup: sim.ThresholdKeys(keyBits), Timing: fastTiming, RandomizerPool: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if res := runJob(t, ctx, c, spec); res["sum"].(float64) != total {
		t.Fatalf("sum %v, want %v", res["sum"], total)
	}
	for _, n := range c.Running() {
		if st := n.Status().Randomizers; st != nil {
			t.Fatalf("%s keeps a pool: %+v", n.Name(), st)
		}
	}
}

// waitPoolsFull waits until every node's pool holds size randomisers, and
// checks that none holds more.
func waitPoolsFull(t *testing.T, ctx context.Context, nodes []*node.Node, size int) {
	t.Helper()
	for _, n := range nodes {
		for {
			st := n.Status().Randomizers
			if st != nil && (st.Ready > size || st.Size != size || st.Bytes > size*keyBits/4) {
				t.Fatalf("%s: pool %+v beyond its bound %d", n.Name(), st, size)
			}
			if st != nil && st.Ready == size {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("%s: pool %+v not full", n.Name(), st)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}

// fillers counts the goroutines filling a randomiser pool.
func fillers() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Count(buf[:n], []byte("paillier.(*RandomizerPool).fill("))
		}
		buf = make([]byte, 2*len(buf))
	}
}
