// Package prefill keeps a bounded supply of one-use values that cost time
// to make and do not depend on what they will be used for (Paillier
// randomisers, lattice encryptions of zero), made ahead of time by one
// goroutine while the owner idles. The cryptographic packages own what
// the values are and why one may be made early; this package owns the
// filler's lifecycle: bounded, paused while the owner works, each value
// handed out once and then forgotten, and stopped by its owner.
package prefill

import (
	"context"
	"sync"
	"sync/atomic"
)

// Supply is a bounded supply of values of T. It is safe for concurrent
// use.
type Supply[T any] struct {
	ready chan T
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once

	mu     sync.Mutex
	paused chan struct{} // non-nil while paused; closed by Resume

	made, taken, computed atomic.Int64
}

// Counts is what a supply holds and has handed out.
type Counts struct {
	Size  int   // the bound: at most this many values wait
	Ready int   // values waiting now
	Made  int64 // values the filler made
	Taken int64 // values handed out from the supply
	// Computed counts values a caller made itself because none was ready.
	Computed int64
	Paused   bool
}

// New returns a supply of up to size (≥ 1) values. Its owner starts the
// filler by running Fill in a goroutine of its own, once, so that a
// goroutine dump names the owner (paillier's or lattice's pool) beside
// this package's loop.
func New[T any](size int) *Supply[T] {
	return &Supply[T]{ready: make(chan T, size), stop: make(chan struct{}), done: make(chan struct{})}
}

// Fill makes values one at a time with next until Close is called or ctx
// ends. An error from next stops it: a caller then makes its values
// itself and meets the error there.
func (s *Supply[T]) Fill(ctx context.Context, next func() (T, error)) {
	defer close(s.done)
	for {
		select {
		case <-s.stop:
			return
		case <-ctx.Done():
			return
		default:
		}
		if wait := s.pausedCh(); wait != nil {
			select {
			case <-wait:
				continue
			case <-s.stop:
				return
			case <-ctx.Done():
				return
			}
		}
		v, err := next()
		if err != nil {
			return
		}
		s.made.Add(1)
		select {
		case s.ready <- v:
		case <-s.stop:
			return
		case <-ctx.Done():
			return
		}
	}
}

// Done is closed once the filler has returned (stopped, its context
// ended, or next failed).
func (s *Supply[T]) Done() <-chan struct{} { return s.done }

// Take returns a ready value and true, or false when none is ready; the
// caller then makes its value itself, which Counts reports as Computed.
func (s *Supply[T]) Take() (T, bool) {
	if v, ok := s.TakeReady(); ok {
		return v, true
	}
	s.computed.Add(1)
	var zero T
	return zero, false
}

// TakeReady is Take for a caller that takes what is ready in a batch and
// makes the rest itself (reported with Computed).
func (s *Supply[T]) TakeReady() (T, bool) {
	select {
	case v := <-s.ready:
		s.taken.Add(1)
		return v, true
	default:
		var zero T
		return zero, false
	}
}

// Computed records n values a caller made itself after TakeReady.
func (s *Supply[T]) Computed(n int) { s.computed.Add(int64(n)) }

// Counts reports the supply's bound, what waits and what it handed out.
func (s *Supply[T]) Counts() Counts {
	return Counts{Size: cap(s.ready), Ready: len(s.ready), Made: s.made.Load(), Taken: s.taken.Load(),
		Computed: s.computed.Load(), Paused: s.pausedCh() != nil}
}

// Pause stops the filler once the value it is making is done, until
// Resume: the owner keeps the cores for its own work (Go has no goroutine
// priorities). Callers still take what is ready. Pausing a paused supply
// does nothing.
func (s *Supply[T]) Pause() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.paused == nil {
		s.paused = make(chan struct{})
	}
}

// Resume lets a paused filler go on; on a running supply it does nothing.
func (s *Supply[T]) Resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.paused != nil {
		close(s.paused)
		s.paused = nil
	}
}

func (s *Supply[T]) pausedCh() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paused
}

// Close stops the filler, waits for it to return and drops the values
// not handed out (never used). It is safe to call more than once.
func (s *Supply[T]) Close() {
	s.once.Do(func() { close(s.stop) })
	<-s.done
	for {
		select {
		case <-s.ready:
		default:
			return
		}
	}
}
