package node

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestProbeShareOneFlightPerMember: watchers of one member that probe
// while a probe is in flight get its outcome and make no probe of their
// own, a success is reused by a watcher that comes right after, and a
// failure is not: the next watcher probes again.
func TestProbeShareOneFlightPerMember(t *testing.T) {
	s := newProbeShare()
	var calls atomic.Int32
	release := make(chan struct{})
	entered := make(chan struct{})
	slow := func(context.Context) error {
		calls.Add(1)
		close(entered)
		<-release
		return nil
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	wg.Add(1)
	go func() { defer wg.Done(); errs <- s.probe(ctx, "org02", slow) }()
	<-entered
	for range 9 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.probe(ctx, "org02", func(context.Context) error { calls.Add(1); return nil })
		}()
	}
	// The nine join the flight before it lands: wait until each is blocked
	// on it, which they show by not having probed (calls stays 1) — the
	// flight is released only after all nine have called probe.
	waitJoined(t, s, "org02")
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d probes for ten watchers of one flight, want 1", n)
	}
	if err := s.probe(ctx, "org02", func(context.Context) error { calls.Add(1); return nil }); err != nil || calls.Load() != 1 {
		t.Fatalf("a fresh success was not reused: err %v, %d probes", err, calls.Load())
	}
	down := errors.New("no route")
	if err := s.probe(ctx, "org03", func(context.Context) error { calls.Add(1); return down }); !errors.Is(err, down) {
		t.Fatalf("got %v, want the probe's error", err)
	}
	if err := s.probe(ctx, "org03", func(context.Context) error { calls.Add(1); return nil }); err != nil || calls.Load() != 3 {
		t.Fatalf("a failure was reused: err %v, %d probes", err, calls.Load())
	}
}

// TestProbeShareCallerGone: a flight that ended because its leader's
// context did says nothing of the member; a watcher still running probes
// again instead of taking the leader's context error.
func TestProbeShareCallerGone(t *testing.T) {
	s := newProbeShare()
	leaderCtx, cancel := context.WithCancel(context.Background())
	entered := make(chan struct{})
	leaderDone := make(chan error, 1)
	go func() {
		leaderDone <- s.probe(leaderCtx, "org02", func(ctx context.Context) error {
			close(entered)
			<-ctx.Done()
			return ctx.Err()
		})
	}()
	<-entered
	watcher := make(chan error, 1)
	var probed atomic.Bool
	go func() {
		watcher <- s.probe(context.Background(), "org02", func(context.Context) error { probed.Store(true); return nil })
	}()
	waitJoined(t, s, "org02")
	cancel()
	if err := <-leaderDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("leader: %v", err)
	}
	if err := <-watcher; err != nil || !probed.Load() {
		t.Fatalf("watcher: err %v, probed again %v", err, probed.Load())
	}
}

// waitJoined gives the goroutines that call probe a chance to reach the
// flight: it yields until the flight for member is in flight and the
// scheduler has run the others (they block on the flight's done channel).
// It cannot prove they joined, and need not: a watcher that arrives after
// the flight lands reuses its fresh success and still makes no probe.
func waitJoined(t *testing.T, s *probeShare, member string) {
	t.Helper()
	s.mu.Lock()
	f := s.flights[member]
	s.mu.Unlock()
	if f == nil {
		t.Fatal("no flight")
	}
	for range 100 {
		runtime.Gosched()
	}
}
