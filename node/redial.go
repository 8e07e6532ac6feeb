package node

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Redialling. libp2p dials a peer when a stream is wanted and not before,
// so a member whose connection dropped (a restart, a network blip, a moved
// address) is only found again when Raft or a job next needs it, and each of
// those waits out a failed dial. Every node therefore keeps a connection to
// every other member: it dials the members it is not connected to, backing
// off per member from redialMin to redialMax (with jitter) while a member
// stays unreachable, and starting over once it connects. ReloadConsortium
// takes new addresses from the consortium file and redials at once.

const (
	redialMin   = 500 * time.Millisecond
	redialMax   = 30 * time.Second
	redialEvery = 250 * time.Millisecond
	dialTimeout = 5 * time.Second
)

// backoff is one member's redial state.
type backoff struct {
	wait time.Duration // the current backoff (0: connected or never tried)
	next time.Time     // no dial before this
}

// keepConnected runs until ctx ends.
func (x *mesh) keepConnected(ctx context.Context) {
	var dials sync.WaitGroup // the dials in flight, owned by this loop
	defer dials.Wait()
	state := map[peer.ID]*backoff{}
	results := make(chan dialResult, 64)
	dialing := map[peer.ID]bool{}
	tick := time.NewTicker(redialEvery)
	defer tick.Stop()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for {
		select {
		case <-ctx.Done():
			return
		case r := <-results:
			delete(dialing, r.id)
			result := "ok"
			if r.err != nil {
				result = "failed"
			}
			x.dials.WithLabelValues(r.name, result).Inc()
			b := state[r.id]
			if b == nil {
				continue // no longer a member
			}
			if r.err == nil {
				*b = backoff{}
				continue
			}
			b.wait = min(max(2*b.wait, redialMin), redialMax)
			jitter := time.Duration(rng.Int64N(int64(b.wait / 4)))
			b.next = time.Now().Add(b.wait + jitter)
			x.log.Debug("redial failed", "member", r.name, "retry_in", b.wait+jitter, "err", r.err)
			continue
		case <-x.redialNow:
			for _, b := range state {
				*b = backoff{}
			}
		case <-tick.C:
		}
		cons := x.cons.Load()
		live := map[peer.ID]bool{}
		for _, m := range cons.Members {
			id, err := peer.Decode(m.PeerID)
			if err != nil || id == x.host.ID() {
				continue
			}
			live[id] = true
			b := state[id]
			if b == nil {
				b = &backoff{}
				state[id] = b
			}
			if dialing[id] || x.host.Network().Connectedness(id) == network.Connected || time.Now().Before(b.next) {
				continue
			}
			dialing[id] = true
			dials.Add(1)
			go func(id peer.ID, name string) {
				defer dials.Done()
				dctx, cancel := context.WithTimeout(ctx, dialTimeout)
				defer cancel()
				err := x.host.Connect(dctx, peer.AddrInfo{ID: id})
				select {
				case results <- dialResult{id: id, name: name, err: err}:
				case <-ctx.Done():
				}
			}(id, m.Name)
		}
		for id := range state {
			if !live[id] {
				delete(state, id)
			}
		}
	}
}

type dialResult struct {
	id   peer.ID
	name string
	err  error
}

// ReloadConsortium re-reads the node's consortium file for new member
// addresses: each member's addresses are replaced by the file's and every
// member is redialled at once, so a member that moved is found again without
// a restart. Membership itself comes from the Raft log: a file whose member
// names or peer ids differ from the log's is refused (use cohort consortium
// add and remove).
func (n *Node) ReloadConsortium() (*Consortium, error) {
	if n.cfg.Consortium == "" {
		return nil, fmt.Errorf("%w: this node has no consortium file", ErrConfig)
	}
	file, err := LoadConsortium(n.cfg.Consortium)
	if err != nil {
		return nil, err
	}
	return n.mesh.reload(file, n.cfg.Consortium)
}
