// Package simtest holds test helpers that need in-process clusters. It is
// apart from testkit because it imports sim, and packages below sim
// (keyring, node, console) use testkit from their internal tests. Only
// _test.go files may import it (testkit.TestOnlyTestsImport checks).
package simtest

import (
	"context"
	"testing"

	"github.com/cohortdm/cohort/sim"
)

// StartCluster starts nodes for names in a fresh temporary directory with
// opts, failing tb if any does not start, and closes them when tb ends.
// Close is idempotent, so a caller that must close earlier (before its
// own deferred calls run) may still defer c.Close().
func StartCluster(tb testing.TB, ctx context.Context, names []string, opts sim.ClusterOptions) *sim.Cluster {
	tb.Helper()
	c, err := sim.StartCluster(ctx, tb.TempDir(), names, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}
