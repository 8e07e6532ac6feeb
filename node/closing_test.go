package node_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// closer is a one-step test job in which org2 sends org3 a note that org3
// waits for. In attempt 1, org3's step holds its node's Close open (it
// ignores its context's end until release) and tells closing when Close
// has begun; org2 sends its note when told on send, and tells the send's
// error on sent. Later attempts just pass the note.
type closer struct {
	holding, closing chan struct{} // org3's attempt 1 began; its node's Close began
	send, release    chan struct{} // the test's go-ahead to org2; to org3
	sent             chan error
	held             atomic.Bool // org3 has held its Close once
}

func newCloser() *closer {
	return &closer{holding: make(chan struct{}, 1), closing: make(chan struct{}, 1),
		send: make(chan struct{}), release: make(chan struct{}), sent: make(chan error, 1)}
}

const (
	closerNote = "closer/note"
	// closerAttempts bounds the attempts Coordinate runs: a party
	// unreachable while its node restarts fails an attempt each time the
	// coordinator's watch gives up on it.
	closerAttempts = 20
)

// errNoteNotDelivered marks org2's failure to deliver its note: a failure
// the coordinator cures by running the step again.
var errNoteNotDelivered = errors.New("closer: note not delivered")

func (*closer) Validate(*job.Spec) error { return nil }

// Coordinate runs the step until an attempt succeeds, while every failure
// is curable (a silent party or an undelivered note), as kinds do.
func (*closer) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	for range closerAttempts {
		a, err := c.Start(ctx, job.Step{Phase: "close", TimeoutMS: relayStepMS})
		if err != nil {
			return nil, err
		}
		if a.Record() != nil {
			return job.Result{"attempt": a.Step().Attempt}, nil
		}
		outs, err := a.Wait(ctx)
		if err != nil {
			return nil, err
		}
		o := &job.Outcome[struct{}]{Failed: outs.Failed, Silent: outs.Silent}
		if len(outs.Failed) > 0 && !o.Curable(errNoteNotDelivered) {
			return nil, fmt.Errorf("attempt %d: %w", a.Step().Attempt, o.Err())
		}
		if len(outs.Failed) > 0 {
			continue
		}
		if _, err := a.Commit(ctx, outs, nil, ""); err != nil {
			return nil, err
		}
		return job.Result{"attempt": a.Step().Attempt}, nil
	}
	return nil, fmt.Errorf("no attempt of %d succeeded", closerAttempts)
}

func (k *closer) Open(_ context.Context, p job.Participant) (job.Session, error) {
	return closerSession{k: k, p: p}, nil
}

func (*closer) OutputDisclosure(job.Step) wire.Disclosure { return wire.DiscloseControl }

type closerSession struct {
	k *closer
	p job.Participant
}

func (closerSession) Close() {}

func (s closerSession) Step(ctx context.Context, step job.Step) ([]byte, error) {
	const from, to = "org2", "org3"
	first := step.Attempt == 1
	switch {
	case s.p.Self() == from:
		if first {
			select {
			case <-s.k.send:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		err := s.p.Send(ctx, to, step.Message(from, closerNote, []byte("note")), wire.DiscloseControl)
		if first {
			select {
			case s.k.sent <- err:
			default:
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errNoteNotDelivered, err)
		}
	case s.p.Self() == to && first && s.k.held.CompareAndSwap(false, true):
		// Hold the node's Close (it waits for its workers) from its
		// start until the test has seen org2's send.
		s.k.holding <- struct{}{}
		<-ctx.Done()
		s.k.closing <- struct{}{}
		<-s.k.release
		return nil, ctx.Err()
	case s.p.Self() == to:
		if _, err := s.p.Receive(ctx, from, step.Key(closerNote)); err != nil {
			return nil, fmt.Errorf("waiting for %s's note: %w", from, err)
		}
	}
	return []byte{}, nil
}

// A node refuses job messages once its Close has begun, so that the
// sender learns at once that its message will not be received (it would
// die with the node's mailbox), and the job, its step failed at the
// sender and re-run, still ends once the node is back. org3's Close is
// held open by its own worker while org2 sends it a note.
func TestClosingNodeRefusesMessages(t *testing.T) {
	t.Parallel()
	kind := newCloser()
	c := startCluster(t, 3, job.Registry{"closer": kind})
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(kind.release) }) }
	// closing is org3's Close, which the release ends; the cleanup runs
	// before the cluster's Close, registered earlier.
	var closing sync.WaitGroup
	t.Cleanup(func() { release(); closing.Wait() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.MakeLeader(ctx, "org1"); err != nil {
		t.Fatal(err)
	}
	id, err := c.Node("org1").Submit(ctx, []byte("kind: closer\nparties: [{name: org1}, {name: org2}, {name: org3}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	wait := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("%s never happened", what)
		}
	}
	wait(kind.holding, "org3's attempt 1")
	killed := make(chan error, 1)
	closing.Go(func() { killed <- c.Kill("org3") })
	wait(kind.closing, "org3's Close")
	close(kind.send)
	select {
	case err = <-kind.sent:
	case <-ctx.Done():
		t.Fatal("org2 never sent its note")
	}
	if err == nil {
		t.Fatal("org3 acknowledged org2's note while it was closing: the note dies with it")
	}
	if !strings.Contains(err.Error(), "closing") {
		t.Errorf("org2's send failed, but not with org3's refusal: %v", err)
	}
	t.Logf("org2 was told: %v", err)
	release()
	if err := <-killed; err != nil {
		t.Fatalf("close org3: %v", err)
	}
	rec := restartThenDone(t, ctx, c, "org3", id)
	for _, s := range rec.Steps {
		t.Logf("step %s/%d ended in attempt %d", s.Phase, s.Round, s.Attempt)
	}
}
