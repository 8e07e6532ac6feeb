package node

import (
	"context"
	"sync"
	"time"
)

// probeShare lets every step this node coordinates share one probe of a
// member. Each running step watches its parties (watchParty), so with k
// steps at once a party would get k pings every probeInterval from the
// same peer; libp2p's resource manager admits only a few ping streams per
// peer at a time and resets the rest, and a party busy with k jobs then
// looked unreachable because of its own load. With probeShare, a probe of a
// member already in flight is awaited, not repeated, and one that succeeded
// within probeFresh counts for every watcher.
type probeShare struct {
	mu      sync.Mutex
	flights map[string]*probeFlight // by member name; the last probe of each
}

// probeFresh is how long a successful probe counts for the other watchers:
// half the probe interval, so that every watcher still sees a round trip at
// least once per interval.
const probeFresh = probeInterval / 2

// probeFlight is one probe of a member: done closes when the rest is set.
type probeFlight struct {
	done       chan struct{}
	err        error
	at         time.Time
	callerGone bool // the probe ended because its caller's context did
}

func newProbeShare() *probeShare { return &probeShare{flights: map[string]*probeFlight{}} }

// probe returns the outcome of a probe of member made by do: the one in
// flight, a success younger than probeFresh, or a new one made with ctx. A
// flight that ended because its own caller's context ended says nothing of
// the member, so a watcher whose context is still live probes again.
func (s *probeShare) probe(ctx context.Context, member string, do func(context.Context) error) error {
	for {
		f, lead := s.join(member)
		if lead {
			err := do(ctx)
			s.land(f, err, ctx.Err() != nil)
			return err
		}
		select {
		case <-f.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if f.callerGone && ctx.Err() == nil {
			continue
		}
		return f.err
	}
}

// join returns the flight to wait for, or a new one the caller must make
// (lead).
func (s *probeShare) join(member string) (f *probeFlight, lead bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.flights[member]; f != nil {
		select {
		case <-f.done:
			if f.err == nil && time.Since(f.at) < probeFresh {
				return f, false
			}
		default:
			return f, false // in flight
		}
	}
	f = &probeFlight{done: make(chan struct{})}
	s.flights[member] = f
	return f, true
}

func (s *probeShare) land(f *probeFlight, err error, callerGone bool) {
	s.mu.Lock()
	f.err, f.at, f.callerGone = err, time.Now(), callerGone
	s.mu.Unlock()
	close(f.done)
}
