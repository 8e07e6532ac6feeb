package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// # A party's failure, told to its peers
//
// A party whose step fails reports its error to the coordinator, but the
// other parties of the attempt may be waiting for its messages (the class
// holder's encrypted gradients, a PSI's next round): they would wait for
// the step timeout, two minutes by default, before the coordinator could
// end an attempt that was lost from the start. So a failing party also
// sends every other party of the attempt a failure notice, an empty
// control message; a peer's receive from it then ends at once with
// ErrPeerFailed, and a peer whose step fails with it (kinds wrap a
// receive's error with %w) reports that its step was cut short. A
// cut-short party is in neither the attempt's Results nor its Failed (as
// are the parties still working when the coordinator finds one
// unreachable): the attempt failed because of the party that failed, and
// the kind decides on that party's error alone.
//
// The notice tells a peer only that the party failed this attempt, which
// every member reads in the attempt's record anyway; the cause goes to
// the coordinator alone. A party that sends notices without failing can
// only end attempts it could end by going silent, and the coordinator
// counts a cut-short report as a failure when no party failed.

// FailedType is the failure notice a party sends the other parties of an
// attempt whose step it failed.
const FailedType = "job/failed"

// ErrPeerFailed ends a receive from a party that failed the attempt.
var ErrPeerFailed = errors.New("failed the step")

// peerFailures watches one attempt for the other parties' failure
// notices: of[p] ends, with a cause wrapping ErrPeerFailed, when p's
// notice arrives.
type peerFailures struct {
	id stepID
	of map[string]context.Context
}

// watchPeers starts receiving the failure notices of step's other parties
// until ctx ends, and makes the attempt's receives heed them (Receive).
// stop ends the watch and waits for its receivers.
func (w *Worker) watchPeers(ctx context.Context, step job.Step) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	pf := &peerFailures{id: idOf(step), of: map[string]context.Context{}}
	var wg sync.WaitGroup
	for _, p := range step.Parties {
		if p == w.Self {
			continue
		}
		pctx, fail := context.WithCancelCause(ctx)
		pf.of[p] = pctx
		wg.Go(func() {
			if _, err := w.Net.Receive(pctx, p, step.Key(FailedType)); err == nil {
				fail(fmt.Errorf("party %s %w %s/%d", p, ErrPeerFailed, step.Phase, step.Round))
			}
		})
	}
	w.mu.Lock()
	w.watching = pf
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		if w.watching == pf {
			w.watching = nil
		}
		w.mu.Unlock()
		cancel()
		wg.Wait()
	}
}

// peerContext is the context that ends when party from fails the attempt
// k belongs to, or nil when that attempt is not being watched.
func (w *Worker) peerContext(from string, k wire.Key) context.Context {
	w.mu.Lock()
	pf := w.watching
	w.mu.Unlock()
	if pf == nil || k.Job != w.Job.ID || (stepID{k.Phase, k.Round, k.Attempt}) != pf.id {
		return nil
	}
	return pf.of[from]
}

// receive is Net.Receive, ended at once with an error wrapping
// ErrPeerFailed when from fails the attempt meanwhile.
func (w *Worker) receive(ctx context.Context, from string, k wire.Key) (*wire.Message, error) {
	peer := w.peerContext(from, k)
	if peer == nil {
		return w.Net.Receive(ctx, from, k)
	}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(peer, func() {
		if cause := context.Cause(peer); errors.Is(cause, ErrPeerFailed) {
			cancel(cause)
		}
	})
	defer stop()
	m, err := w.Net.Receive(rctx, from, k)
	if cause := context.Cause(rctx); err != nil && ctx.Err() == nil && errors.Is(cause, ErrPeerFailed) {
		return nil, cause
	}
	return m, err
}

// tellPeers sends the failure notice of step to its other parties, each
// within the grace period, and waits for the sends.
func (w *Worker) tellPeers(ctx context.Context, step job.Step) {
	ctx, cancel := context.WithTimeout(ctx, w.Grace)
	defer cancel()
	var wg sync.WaitGroup
	for _, p := range step.Parties {
		if p == w.Self {
			continue
		}
		m := step.Message(w.Self, FailedType, nil)
		if err := w.check(p, m, wire.DiscloseControl); err != nil {
			continue
		}
		wg.Go(func() {
			if err := w.Net.Send(ctx, p, m, wire.DiscloseControl); err != nil {
				w.logger().Debug("could not tell a peer the step failed", "job", step.Job, "phase", step.Phase, "peer", p, "err", err)
			}
		})
	}
	wg.Wait()
}
