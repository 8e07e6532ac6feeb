package prefill

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

// The filler fills up to the bound, each value is handed out once, and
// Close drops the rest and stops the filler.
func TestSupplyFillsTakesOnceAndCloses(t *testing.T) {
	var n atomic.Int64
	made := make(chan struct{}, 100)
	s := start(context.Background(), 3, func() (int64, error) {
		v := n.Add(1)
		made <- struct{}{}
		return v, nil
	})
	for range 4 { // three wait, the fourth blocks on the full supply
		<-made
	}
	seen := map[int64]bool{}
	for range 3 {
		v, ok := s.TakeReady()
		if !ok || seen[v] {
			t.Fatalf("take: %d %v (seen %v)", v, ok, seen)
		}
		seen[v] = true
	}
	s.Close()
	s.Close()
	if c := s.Counts(); c.Size != 3 || c.Ready != 0 || c.Taken != 3 {
		t.Fatalf("%+v", c)
	}
	if _, ok := s.Take(); ok {
		t.Fatal("a closed supply handed out a value")
	}
	if s.Counts().Computed != 1 {
		t.Fatalf("computed %d, want 1", s.Counts().Computed)
	}
}

// A paused filler makes nothing until Resume.
func TestSupplyPause(t *testing.T) {
	gate := make(chan struct{})
	calls := make(chan struct{}, 10)
	s := start(context.Background(), 4, func() (int, error) {
		calls <- struct{}{}
		<-gate
		return 1, nil
	})
	defer s.Close()
	<-calls // the filler is making its first value
	s.Pause()
	gate <- struct{}{} // that value completes; the filler then waits
	if !s.Counts().Paused {
		t.Fatal("not paused")
	}
	select {
	case <-calls:
		t.Fatal("a paused filler started another value")
	default:
	}
	s.Resume()
	<-calls // it goes on
	close(gate)
}

// An error from next, or the context's end, stops the filler.
func TestSupplyStopsOnErrorAndContext(t *testing.T) {
	s := start(context.Background(), 2, func() (int, error) { return 0, errors.New("broken source") })
	<-s.Done()
	if c := s.Counts(); c.Made != 0 || c.Ready != 0 {
		t.Fatalf("%+v", c)
	}
	s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	s2 := start(ctx, 1, func() (int, error) { return 1, nil })
	cancel()
	<-s2.Done()
	s2.Close()
}

// start is New with Fill running, as an owner starts it.
func start[T any](ctx context.Context, size int, next func() (T, error)) *Supply[T] {
	s := New[T](size)
	go s.Fill(ctx, next)
	return s
}
