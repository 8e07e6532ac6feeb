package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/cohortdm/cohort/node"
)

// WaitSteps waits until n's log holds at least want finished steps of job
// id and returns how many it holds; it fails if the job ends first (a
// fault test that kills a node mid-job must find the job still running).
func WaitSteps(ctx context.Context, n *node.Node, id string, want int) (int, error) {
	for {
		js, ok := n.Job(id)
		if ok && js.Status != node.StatusRunning && js.Status != node.StatusQueued {
			return 0, fmt.Errorf("job %s ended (%s) before %d steps were committed", id, js.Status, want)
		}
		done := 0
		if ok {
			for _, s := range js.Steps {
				if s.Done {
					done++
				}
			}
		}
		if done >= want {
			return done, nil
		}
		select {
		case <-ctx.Done():
			return done, fmt.Errorf("waiting for %d steps of job %s: %w", want, id, ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}
