package node

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/prometheus/client_golang/prometheus"
)

// mesh is the node's place in the consortium's network, in one place so
// that who is a member and how to reach them never disagree: the libp2p
// host, the gater that admits members only, the member set as the log has
// it, and the redial loop (redial.go) that keeps a connection to each.
type mesh struct {
	host  host.Host
	gater *memberGater
	log   *slog.Logger
	dials *prometheus.CounterVec // the redial loop's dials, per member and result

	cons atomic.Pointer[Consortium] // the members as the log has them; see members.go
	// consMu orders the writers of cons (membership changes, reloads).
	consMu    sync.Mutex
	redialNow chan struct{} // reload asks the redial loop to redial at once

	cancel context.CancelFunc // stops the redial loop; nil until start
	wg     sync.WaitGroup
}

// defaultListen is where a node listens when node.yaml names nothing.
var defaultListen = []string{"/ip4/127.0.0.1/tcp/0", "/ip4/127.0.0.1/udp/0/quic-v1"}

// newMesh starts the libp2p host, which admits no one until admit.
func newMesh(sk crypto.PrivKey, listen []string, preferTCP bool, lg *slog.Logger, m *metrics) (*mesh, error) {
	if len(listen) == 0 {
		listen = defaultListen
	}
	g := &memberGater{log: lg, members: map[peer.ID]string{}, onDeny: m.denied.Inc}
	h, err := newHost(sk, listen, g, preferTCP)
	if err != nil {
		return nil, err
	}
	return &mesh{host: h, gater: g, log: lg, dials: m.dials, redialNow: make(chan struct{}, 1)}, nil
}

// start runs the redial loop until ctx ends or Close.
func (x *mesh) start(ctx context.Context) {
	ctx, x.cancel = context.WithCancel(ctx)
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		x.keepConnected(ctx)
	}()
}

// Close stops the redial loop, waits for it and its dials, and closes the
// host.
func (x *mesh) Close() error {
	if x.cancel != nil {
		x.cancel()
	}
	x.wg.Wait()
	if err := x.host.Close(); err != nil {
		return fmt.Errorf("close libp2p host: %w", err)
	}
	return nil
}

// admit sets the members the node starts with.
func (x *mesh) admit(c *Consortium) {
	x.cons.Store(c)
	x.gater.setMembers(c)
	addMemberAddrs(x.host, c)
}

// members is the member set (nil before admit); callers must not modify it.
func (x *mesh) members() *Consortium { return x.cons.Load() }

// memberID is a member's peer id.
func (x *mesh) memberID(name string) (peer.ID, bool) {
	cons := x.cons.Load()
	if cons == nil {
		return "", false
	}
	m, ok := cons.Member(name)
	if !ok {
		return "", false
	}
	id, err := peer.Decode(m.PeerID)
	return id, err == nil
}

// setMembers makes the node admit and find exactly c's members, closing
// the connections of members that left. A member that stays keeps the
// addresses this node knows it by (its file, or a reload), which may be
// newer than those in the log.
func (x *mesh) setMembers(c *Consortium) {
	x.consMu.Lock()
	defer x.consMu.Unlock()
	old := x.cons.Load()
	if old != nil {
		for i, m := range c.Members {
			if om, ok := old.Member(m.Name); ok && om.PeerID == m.PeerID {
				c.Members[i].Addrs = om.Addrs
			}
		}
	} else {
		old = &Consortium{}
	}
	x.cons.Store(c)
	x.gater.setMembers(c)
	addMemberAddrs(x.host, c)
	for _, m := range old.Members {
		if _, still := c.Member(m.Name); still {
			continue
		}
		if id, err := peer.Decode(m.PeerID); err == nil && id != x.host.ID() {
			_ = x.host.Network().ClosePeer(id)
		}
	}
}

// reload replaces each member's addresses with file's (read from path)
// and redials every member at once. A file whose member names or peer ids
// differ from the member set is refused.
func (x *mesh) reload(file *Consortium, path string) (*Consortium, error) {
	x.consMu.Lock()
	defer x.consMu.Unlock()
	cur := x.cons.Load()
	if !slices.Equal(file.Names(), cur.Names()) {
		return nil, fmt.Errorf("%w: %s lists %v but the consortium is %v: change members with 'cohort consortium add' and 'remove', not in the file",
			ErrMembership, path, file.Names(), cur.Names())
	}
	next := &Consortium{VotersWanted: cur.VotersWanted}
	for _, m := range cur.Members {
		fm, _ := file.Member(m.Name)
		if fm.PeerID != m.PeerID {
			return nil, fmt.Errorf("%w: %s gives %s peer id %s, the consortium has %s", ErrMembership, path, m.Name, fm.PeerID, m.PeerID)
		}
		next.Members = append(next.Members, fm)
		id, err := peer.Decode(m.PeerID)
		if err != nil || id == x.host.ID() {
			continue
		}
		x.host.Peerstore().ClearAddrs(id)
		for _, a := range fm.Addrs {
			if addr, err := ma.NewMultiaddr(a); err == nil {
				x.host.Peerstore().AddAddr(id, addr, peerstore.PermanentAddrTTL)
			}
		}
		if !slices.Equal(fm.Addrs, m.Addrs) {
			// Connections to the old address go; the redial finds the new one.
			_ = x.host.Network().ClosePeer(id)
			x.log.Info("member moved", "member", m.Name, "addrs", fm.Addrs)
		}
	}
	x.cons.Store(next)
	select {
	case x.redialNow <- struct{}{}:
	default:
	}
	return next, nil
}
