// Package simtest holds test helpers that need in-process clusters. It is
// apart from testkit because it imports sim, and packages below sim
// (keyring, node, console) use testkit from their internal tests. Only
// _test.go files may import it (testkit.TestOnlyTestsImport checks).
package simtest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/cohortdm/cohort/sim"
)

// StartCluster starts nodes for names in a fresh temporary directory with
// opts, failing tb if any does not start, and closes them when tb ends.
// Close is idempotent, so a caller that must close earlier (before its
// own deferred calls run) may still defer c.Close().
//
// Unless opts sizes them, the nodes keep no Paillier randomizer pool and no
// lattice zero pool, as a simulation's nodes (sim.Run, sim.RunBatch): every
// node of a test's cluster shares the test binary's cores, where filling
// pools no job takes from cost a third to a half of some packages' test
// CPU. The tests of the pools size them.
func StartCluster(tb testing.TB, ctx context.Context, names []string, opts sim.ClusterOptions) *sim.Cluster {
	tb.Helper()
	if opts.RandomizerPool == 0 {
		opts.RandomizerPool = -1
	}
	if opts.LatticePool == 0 {
		opts.LatticePool = -1
	}
	c, err := sim.StartCluster(ctx, tb.TempDir(), names, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// dealt holds the keys ThresholdKeys dealt, one entry per modulus size and
// member set, for the life of the test binary.
var dealt struct {
	sync.Mutex
	m map[string]*dealtKeys
}

type dealtKeys struct {
	once    sync.Once
	install func(name, dataDir string) error
	err     error
}

// ThresholdKeys is sim.ThresholdKeys(bits) with each consortium's keys
// dealt once per test binary: every cluster of the same members (by name)
// gets the same threshold Paillier and lattice key shares, written into its
// own fresh data dirs. Dealing (safe primes, the lattice key) otherwise
// dominates the time of a test that starts clusters; a test whose point is
// that two clusters hold different keys, or that times or inspects the
// dealing itself, uses sim.ThresholdKeys. The keys live in memory only.
func ThresholdKeys(bits int) func(names []string) (func(name, dataDir string) error, error) {
	return func(names []string) (func(name, dataDir string) error, error) {
		sorted := slices.Clone(names)
		slices.Sort(sorted)
		key := fmt.Sprintf("%d %q", bits, sorted)
		dealt.Lock()
		if dealt.m == nil {
			dealt.m = map[string]*dealtKeys{}
		}
		d, ok := dealt.m[key]
		if !ok {
			d = &dealtKeys{}
			dealt.m[key] = d
		}
		dealt.Unlock()
		d.once.Do(func() { d.install, d.err = sim.ThresholdKeys(bits)(sorted) })
		return d.install, d.err
	}
}
