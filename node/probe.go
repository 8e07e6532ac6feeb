package node

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/p2p/protocol/ping"

	"github.com/cohortdm/cohort/job/runner"
)

// Reachability probing: while the coordinator waits for parties' reports,
// it probes each of them every probeInterval with a libp2p ping (dialling
// first if there is no connection), each probe bounded by probeTimeout. A
// party none of whose probes has succeeded for unreachableAfter is
// declared unreachable, so a step does not wait out its timeout for a node
// that is down.
//
// A probe is an actual round trip: a connection that libp2p still counts as
// open proves nothing (a process killed while its QUIC connection is open
// sends no CONNECTION_CLOSE, and the connection looked alive until the QUIC
// idle timeout).
const (
	probeInterval = 500 * time.Millisecond
	probeTimeout  = time.Second
	// unreachableAfter is the least time without a successful probe before
	// a party is declared unreachable; it grows with the Raft heartbeat
	// timeout (see unreachableWindow), which is raised on crowded machines.
	unreachableAfter = 2 * time.Second
	// lostLeaderAfter replaces the window for a party that led this node's
	// Raft and was replaced: the election is a quorum's evidence that it
	// went quiet, so one failed probe after a second without a heartbeat
	// is enough (lostLeaders).
	lostLeaderAfter = time.Second
)

// unreachableWindow is how long a party may go without answering a probe:
// unreachableAfter, or five Raft heartbeat timeouts if longer, so that a
// node starved of CPU on a crowded machine is not dropped while Raft still
// hears from it.
func unreachableWindow(heartbeat time.Duration) time.Duration {
	return max(unreachableAfter, 5*heartbeat)
}

// watchReachable probes the parties until ctx ends and calls down for the
// first one found unreachable (down may be called for more than one if
// they are found at the same moment; the caller keeps the first).
func (n *Node) watchReachable(ctx context.Context, parties []string, down func(p string, why error)) {
	window := unreachableWindow(time.Duration(n.timing.HeartbeatMS) * time.Millisecond)
	var wg sync.WaitGroup
	for _, p := range parties {
		if p == n.cfg.Name {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.watchParty(ctx, p, window, down)
		}()
	}
	wg.Wait()
}

// watchParty probes one party until ctx ends or it has not answered for
// window, or it reported that its Raft log cannot be written (it would
// never learn of the step: storefault.go). A party that led this node's Raft and was replaced is silent
// since its last heartbeat, not since the watch began, is probed at once,
// and needs only lostLeaderAfter of silence (lostLeaders).
func (n *Node) watchParty(ctx context.Context, p string, window time.Duration, down func(p string, why error)) {
	lastOK, wait := time.Now(), probeInterval
	if t, ok := n.lostLeaderSince(p); ok && t.Before(lastOK) {
		lastOK, wait, window = t, 0, min(window, lostLeaderAfter)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		timer.Reset(probeInterval)
		if why, ok := n.storageFault(p); ok {
			down(p, fmt.Errorf("%w: %s", runner.ErrCannotTakePart, why))
			return
		}
		err := n.probes.probe(ctx, p, func(ctx context.Context) error { return n.probe(ctx, p) })
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			lastOK = time.Now()
			if n.consensus != nil {
				n.consensus.lost.heard(p)
			}
			continue
		}
		if silent := time.Since(lastOK); silent >= window {
			down(p, fmt.Errorf("no answer for %v: %w", silent.Round(100*time.Millisecond), err))
			return
		}
	}
}

// lostLeaderSince is p's last heartbeat if it is a leader this node saw
// replaced.
func (n *Node) lostLeaderSince(p string) (time.Time, bool) {
	if n.consensus == nil {
		return time.Time{}, false
	}
	return n.consensus.lost.since(p)
}

// probe makes one round trip to a member's node: a libp2p ping, dialling
// first if needed, within probeTimeout.
func (n *Node) probe(ctx context.Context, name string) error {
	id, ok := n.mesh.memberID(name)
	if !ok {
		return fmt.Errorf("%q is not a member", name)
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel() // also ends ping's goroutine and resets its stream
	select {
	case res, ok := <-ping.Ping(ctx, n.mesh.host, id):
		if !ok {
			return fmt.Errorf("ping %s: %w", name, context.Cause(ctx))
		}
		if res.Error != nil {
			return fmt.Errorf("ping %s: %w", name, res.Error)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("ping %s: no answer within %v: %w", name, probeTimeout, ctx.Err())
	}
}
