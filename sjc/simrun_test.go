package sjc_test

import (
	"context"
	"testing"

	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/sim"
)

// simRun is sim.Run for the tests over real in-process nodes. A step
// whose output is lost under load is re-run after 20 s, not after the
// node's default step timeout of two minutes, which equalled the tests'
// bounds: twice a clean-clone CI run failed an sjc test this way (29 Nov
// 2026, TestSimRealNodesMemoryBudget and TestSimRealNodes/psi=ot), never
// here. On failure the committed steps are logged, to show which step
// waited.
func simRun(t *testing.T, ctx context.Context, path string, opts sim.RunOptions) map[string]any {
	t.Helper()
	if opts.Timing.StepMS == 0 {
		opts.Timing.StepMS = 20_000
	}
	var progress testkit.LockedBuffer
	opts.Progress = &progress
	res, err := sim.Run(ctx, path, opts)
	if err != nil {
		t.Logf("committed steps:\n%s", progress.String())
		t.Fatal(err)
	}
	return res
}

// testkit.LockedBuffer is a bytes.Buffer that the nodes' goroutines may write to
