package sim

import (
	"context"
	"fmt"
	"sync"
)

// turns makes a batch's jobs submit one after another in a chosen order:
// the leader coordinates a few at once (batchJobsAtOnce) and starts the
// queued ones in the order they were submitted, so the order decides
// which jobs run first.
type turns struct {
	wait []chan struct{} // job i may submit once wait[i] is closed
	pass []func()        // job i calls pass[i] once it has submitted or ended; it returns in i's turn
}

// newTurns orders the jobs: those that decrypt with the consortium key
// first when it is dealt already (they decrypt round after round:
// the batch's longest chains, which should not start last), else the
// others first (they run while it is dealt); each group in batch order.
func newTurns(usesKey []bool, keyFirst bool) *turns {
	order := make([]int, 0, len(usesKey))
	for _, first := range []bool{keyFirst, !keyFirst} {
		for i, uses := range usesKey {
			if uses == first {
				order = append(order, i)
			}
		}
	}
	t := &turns{wait: make([]chan struct{}, len(usesKey)), pass: make([]func(), len(usesKey))}
	next := make(chan struct{})
	close(next)
	for _, i := range order {
		prev, mine := next, make(chan struct{})
		t.wait[i] = prev
		// A job that ends before its turn (it failed) passes in its turn,
		// so that the jobs after it keep their order.
		t.pass[i] = sync.OnceFunc(func() { <-prev; close(mine) })
		next = mine
	}
	return t
}

// await waits for job i's turn to submit.
func (t *turns) await(ctx context.Context, i int) error {
	select {
	case <-t.wait[i]:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("sim: waiting to submit: %w", ctx.Err())
	}
}

// dealtNow reports whether the batch's key is dealt already (read from
// the cache): installing it is then a copy of a few files into the data
// dirs, done as soon as the nodes are up. It asked whether the key was
// installed, which raced with that copy once the cluster came up
// campaigning (no leadership transfer to wait for): the key users then
// went last, the quantile's chain of rounds after every other job.
func (k *batchKey) dealtNow() bool {
	select {
	case <-k.dealt:
		return true
	default:
		return false
	}
}
