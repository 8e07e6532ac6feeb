package node

import (
	"context"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Reachability probing: a party whose node cannot be dialled on
// unreachableProbes consecutive probes, probeInterval apart, is declared
// unreachable, so a step does not wait out its timeout for a node that is down.
const (
	probeInterval     = 500 * time.Millisecond
	probeTimeout      = time.Second
	unreachableProbes = 3
)

// watchReachable probes the parties until ctx ends and calls down for the
// first one found unreachable.
func (c *coordinator) watchReachable(ctx context.Context, parties []string, down func(p string, why error)) {
	misses := map[string]int{}
	tick := time.NewTicker(probeInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, p := range parties {
			if p == c.n.cfg.Name {
				continue
			}
			err := c.n.probe(ctx, p)
			if err == nil || ctx.Err() != nil {
				misses[p] = 0
				continue
			}
			if misses[p]++; misses[p] >= unreachableProbes {
				down(p, err)
				return
			}
		}
	}
}

// probe checks that a member's node can be reached: connected already, or
// dialled now.
func (n *Node) probe(ctx context.Context, name string) error {
	id, ok := n.memberID(name)
	if !ok {
		return fmt.Errorf("%q is not a member", name)
	}
	if n.host.Network().Connectedness(id) == network.Connected {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	return n.host.Connect(ctx, peer.AddrInfo{ID: id})
}
