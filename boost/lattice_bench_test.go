package boost_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/joinprop"
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
// process's CPU, all goroutines) are per tree.
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
