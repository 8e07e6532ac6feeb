package node

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	ma "github.com/multiformats/go-multiaddr"
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

// keepConnected runs until the node closes.
func (n *Node) keepConnected() {
	defer n.wg.Done()
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
		case <-n.ctx.Done():
			return
		case r := <-results:
			delete(dialing, r.id)
			result := "ok"
			if r.err != nil {
				result = "failed"
			}
			n.metrics.dials.WithLabelValues(r.name, result).Inc()
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
			n.log.Debug("redial failed", "member", r.name, "retry_in", b.wait+jitter, "err", r.err)
			continue
		case <-n.redialNow:
			for _, b := range state {
				*b = backoff{}
			}
		case <-tick.C:
		}
		cons := n.cons.Load()
		live := map[peer.ID]bool{}
		for _, m := range cons.Members {
			id, err := peer.Decode(m.PeerID)
			if err != nil || id == n.host.ID() {
				continue
			}
			live[id] = true
			b := state[id]
			if b == nil {
				b = &backoff{}
				state[id] = b
			}
			if dialing[id] || n.host.Network().Connectedness(id) == network.Connected || time.Now().Before(b.next) {
				continue
			}
			dialing[id] = true
			dials.Add(1)
			go func(id peer.ID, name string) {
				defer dials.Done()
				ctx, cancel := context.WithTimeout(n.ctx, dialTimeout)
				defer cancel()
				err := n.host.Connect(ctx, peer.AddrInfo{ID: id})
				select {
				case results <- dialResult{id: id, name: name, err: err}:
				case <-n.ctx.Done():
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
	n.consMu.Lock()
	defer n.consMu.Unlock()
	cur := n.cons.Load()
	if !slices.Equal(file.Names(), cur.Names()) {
		return nil, fmt.Errorf("%w: %s lists %v but the consortium is %v: change members with 'cohort consortium add' and 'remove', not in the file",
			ErrMembership, n.cfg.Consortium, file.Names(), cur.Names())
	}
	next := &Consortium{VotersWanted: cur.VotersWanted}
	for _, m := range cur.Members {
		fm, _ := file.Member(m.Name)
		if fm.PeerID != m.PeerID {
			return nil, fmt.Errorf("%w: %s gives %s peer id %s, the consortium has %s", ErrMembership, n.cfg.Consortium, m.Name, fm.PeerID, m.PeerID)
		}
		next.Members = append(next.Members, fm)
		id, err := peer.Decode(m.PeerID)
		if err != nil || id == n.host.ID() {
			continue
		}
		n.host.Peerstore().ClearAddrs(id)
		for _, a := range fm.Addrs {
			if addr, err := ma.NewMultiaddr(a); err == nil {
				n.host.Peerstore().AddAddr(id, addr, peerstore.PermanentAddrTTL)
			}
		}
		if !slices.Equal(fm.Addrs, m.Addrs) {
			// Connections to the old address go; the redial finds the new one.
			_ = n.host.Network().ClosePeer(id)
			n.log.Info("member moved", "member", m.Name, "addrs", fm.Addrs)
		}
	}
	n.cons.Store(next)
	select {
	case n.redialNow <- struct{}{}:
	default:
	}
	return next, nil
}
