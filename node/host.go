package node

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
	"github.com/libp2p/go-libp2p/p2p/security/noise"
	libp2ptls "github.com/libp2p/go-libp2p/p2p/security/tls"
	quic "github.com/libp2p/go-libp2p/p2p/transport/quic"
	"github.com/libp2p/go-libp2p/p2p/transport/quicreuse"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
	ma "github.com/multiformats/go-multiaddr"
	quicgo "github.com/quic-go/quic-go"
	"go.uber.org/fx"
)

// memberGater admits connections from consortium members only. Outsiders are
// refused once their peer id is authenticated (InterceptSecured), and logged.
type memberGater struct {
	log     *slog.Logger
	mu      sync.RWMutex
	members map[peer.ID]string
	onDeny  func()
}

func (g *memberGater) setMembers(c *Consortium) {
	m := make(map[peer.ID]string, len(c.Members))
	for _, mem := range c.Members {
		id, err := peer.Decode(mem.PeerID)
		if err == nil {
			m[id] = mem.Name
		}
	}
	g.mu.Lock()
	g.members = m
	g.mu.Unlock()
}

func (g *memberGater) name(id peer.ID) (string, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	n, ok := g.members[id]
	return n, ok
}

func (g *memberGater) allowed(id peer.ID, dir string, addr ma.Multiaddr) bool {
	if _, ok := g.name(id); ok {
		return true
	}
	g.log.Warn("refused connection from a peer outside the consortium", "peer", id.String(), "direction", dir, "addr", fmt.Sprint(addr))
	if g.onDeny != nil {
		g.onDeny()
	}
	return false
}

func (g *memberGater) InterceptPeerDial(p peer.ID) bool { return g.allowed(p, "dial", nil) }
func (g *memberGater) InterceptAddrDial(p peer.ID, a ma.Multiaddr) bool {
	return g.allowed(p, "dial", a)
}
func (g *memberGater) InterceptAccept(network.ConnMultiaddrs) bool { return true }
func (g *memberGater) InterceptSecured(d network.Direction, p peer.ID, c network.ConnMultiaddrs) bool {
	return g.allowed(p, d.String(), c.RemoteMultiaddr())
}
func (g *memberGater) InterceptUpgraded(network.Conn) (bool, control.DisconnectReason) {
	return true, 0
}

// QUIC connection liveness. go-libp2p's QUIC default is a 30 s idle
// timeout (quic-go's), with keep-alives every 15 s: a peer killed without
// closing its connection stayed connected for 30 s or more. The idle
// timeout is negotiated down to the smaller of the two ends', and every
// connection between nodes has a node as its dialler, so these apply to
// both ends; quic-go sends keep-alives every min(quicKeepAlive, idle/2).
const (
	quicIdleTimeout = 5 * time.Second
	quicKeepAlive   = time.Second
)

// newQUICConnManager is go-libp2p's QUIC connection manager with the
// timeouts above on the connections this node dials.
func newQUICConnManager(key quicgo.StatelessResetKey, tokens quicgo.TokenGeneratorKey, rcmgr network.ResourceManager, lc fx.Lifecycle) (*quicreuse.ConnManager, error) {
	cm, err := quicreuse.NewConnManager(key, tokens, quicreuse.VerifySourceAddress(rcmgr.VerifySourceAddress))
	if err != nil {
		return nil, fmt.Errorf("quic connection manager: %w", err)
	}
	// ClientConfig is the template every dial clones.
	conf := cm.ClientConfig()
	conf.MaxIdleTimeout = quicIdleTimeout
	conf.KeepAlivePeriod = quicKeepAlive
	lc.Append(fx.StopHook(cm.Close))
	return cm, nil
}

// newHost starts a libp2p host with TCP and QUIC, TLS or Noise and yamux,
// that dials members over TCP first (tcpFirst) when preferTCP is set, and
// as go-libp2p ranks their addresses (QUIC first) otherwise.
//
// Over TCP a connection's security is the first of TLS 1.3 and Noise that
// both ends offer: TLS between nodes of this version, Noise with a node of
// an earlier one, which offers Noise only. Both authenticate the peer by
// its libp2p key, which the member gater checks. TLS comes first for its
// cipher: AES-128-GCM on a CPU with AES instructions, which costs about a
// third of the CPU per byte of Noise's ChaCha20-Poly1305 and the whole
// transport about a fifth less (BenchmarkTransportBytes; a9a's boosting
// over two nodes: 6 % less time, docs/boost.md). QUIC always runs TLS 1.3.
func newHost(sk crypto.PrivKey, listen []string, g *memberGater, preferTCP bool) (host.Host, error) {
	ranker := swarm.DefaultDialRanker
	if preferTCP {
		ranker = tcpFirst
	}
	h, err := libp2p.New(
		libp2p.Identity(sk),
		libp2p.ListenAddrStrings(listen...),
		libp2p.Transport(tcp.NewTCPTransport),
		libp2p.QUICReuse(newQUICConnManager),
		libp2p.Transport(quic.NewTransport),
		libp2p.Security(libp2ptls.ID, libp2ptls.New),
		libp2p.Security(noise.ID, noise.New),
		libp2p.Muxer(yamux.ID, yamux.DefaultTransport),
		libp2p.ConnectionGater(g),
		libp2p.SwarmOpts(swarm.WithDialRanker(ranker)),
		libp2p.DisableRelay(),
		libp2p.UserAgent("cohort/1"),
	)
	if err != nil {
		return nil, fmt.Errorf("start libp2p host: %w", err)
	}
	return h, nil
}

// quicAfterTCP is how long a dial waits for a member's TCP addresses
// before it tries its other ones (QUIC): the delay go-libp2p's own ranking
// puts between QUIC and TCP on public addresses, the other way round. A
// TCP dial that fails at once (nothing listens) moves on at once.
const quicAfterTCP = swarm.PublicTCPDelay

// tcpFirst ranks a member's addresses for dialling: TCP first, then, if no
// TCP connection is up within quicAfterTCP, the rest as go-libp2p ranks
// them. Over TCP (TLS, yamux) a node spends about 1.1 ns of CPU per byte
// sent and received on loopback, over QUIC 2.9 ns (BenchmarkTransportBytes
// on 30 Nov 2026; the first figures, Noise's, are in docs/secureagg.md,
// "The transport's CPU per byte"): QUIC encrypts and acknowledges every 1,452-byte packet in user
// space, TCP hands the kernel 64 KiB at a time. A lattice round of a
// million values moves some 310 MB between five nodes, and where the
// parties' cores are busy that CPU is the round's time. A member that
// listens on QUIC only is dialled over QUIC as before, and so is one whose
// TCP address does not answer.
//
// What changes with TCP: a process killed with its connection open is
// noticed at once (its kernel resets the connection; over QUIC only the
// idle timeout, quicIdleTimeout, tells), but a peer that vanishes from the
// network without a reset is noticed by yamux's keep-alive (30 s) rather
// than QUIC's idle timeout; the node's liveness probe (probe.go) does not
// rely on either. Streams share one TCP connection, so on a slow link a
// bulk body queued in the kernel can delay a small message behind it,
// which QUIC's per-stream scheduling avoids: a 16 MiB yamux window of a
// lattice body is 13 s of a 10 Mbit/s link ahead of a Raft heartbeat. So
// it is node.yaml's prefer_tcp, off by default, and on for the in-process
// clusters of cohort sim and the tests (sim.StartCluster), whose loopback
// has no slow link and whose cores every node shares.
func tcpFirst(addrs []ma.Multiaddr) []network.AddrDelay {
	var tcpAddrs, rest []ma.Multiaddr
	for _, a := range addrs {
		if _, err := a.ValueForProtocol(ma.P_TCP); err == nil {
			tcpAddrs = append(tcpAddrs, a)
		} else {
			rest = append(rest, a)
		}
	}
	if len(tcpAddrs) == 0 || len(rest) == 0 {
		return swarm.DefaultDialRanker(addrs)
	}
	ranked := swarm.DefaultDialRanker(tcpAddrs)
	for _, d := range swarm.DefaultDialRanker(rest) {
		d.Delay += quicAfterTCP
		ranked = append(ranked, d)
	}
	return ranked
}

// addMemberAddrs puts every member's addresses in the peerstore so that
// streams (Raft's included) can be opened by peer id alone.
func addMemberAddrs(h host.Host, c *Consortium) {
	for _, m := range c.Members {
		id, err := peer.Decode(m.PeerID)
		if err != nil || id == h.ID() {
			continue
		}
		for _, a := range m.Addrs {
			if addr, err := ma.NewMultiaddr(a); err == nil {
				h.Peerstore().AddAddr(id, addr, peerstore.PermanentAddrTTL)
			}
		}
	}
}
