package boost_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/table"
)

// BenchmarkLatticeCredit times one tree of the lattice path in one process
// (TrainLattice: both parties, the class holder's encryptions, the other
// party's products and masks, every member's decryption shares) on FATE's
// default_credit split, depth 3, 32 bins, one op a training of 3 trees
// (BOOST_TREES to change; the party's kept Ws are re-used from the second
// tree on): a quarter of the training ids, all 24,000 with
// BOOST_CREDIT=full (docs/boost.md, "Time per tree"). The key is dealt and
// the tables read before the clock starts; s/tree and cpu-s/tree (the
// process's CPU, all goroutines) are per tree. BOOST_ZEROS=N gives the
// class holder a full pool of N encryptions of zero (LatticeCrypto.Zeros).
func BenchmarkLatticeCredit(b *testing.B) {
	every := 4
	if os.Getenv("BOOST_CREDIT") == "full" {
		every = 1
	}
	g, train, _ := creditData(b, every)
	p := boost.DefaultParams()
	p.Trees, p.MaxDepth = 3, 3
	benchLattice(b, g, train, p)
}

// BenchmarkLatticeA9A is BenchmarkLatticeCredit on a9a (docs/boost.md,
// "a9a"): trees of depth 6 (one, or BOOST_TREES), 32 bins, every
// training row.
func BenchmarkLatticeA9A(b *testing.B) {
	g, train, _ := a9aData(b, "")
	p := boost.DefaultParams()
	p.Trees, p.MaxDepth, p.Bins = 1, 6, 32
	benchLattice(b, g, train, p)
}

func benchLattice(b *testing.B, g *joinprop.Graph, train map[string]*table.Table, p boost.Params) {
	if v, err := strconv.Atoi(os.Getenv("BOOST_TREES")); err == nil {
		p.Trees = v
	}
	c := latticeCrypto(b, g)
	if n, err := strconv.Atoi(os.Getenv("BOOST_ZEROS")); err == nil && n > 0 {
		// The class holder's pool of n encryptions of zero, full before
		// the clock starts, as a node's after idle time; its filler's CPU
		// between levels counts in the process's.
		pool, err := lattice.NewZeroPool(context.Background(), c.PK, n)
		if err != nil {
			b.Fatal(err)
		}
		defer pool.Close()
		for pool.Stats().Ready < n {
			time.Sleep(time.Millisecond)
		}
		c.Zeros = pool
	}
	b.ResetTimer()
	cpu0 := cpuTime(b)
	for b.Loop() {
		if _, err := boost.TrainLattice(g, train, p, c); err != nil {
			b.Fatal(err)
		}
	}
	trees := float64(b.N * p.Trees)
	b.ReportMetric((cpuTime(b)-cpu0).Seconds()/trees, "cpu-s/tree")
	b.ReportMetric(b.Elapsed().Seconds()/trees, "s/tree")
}
