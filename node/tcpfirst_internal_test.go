package node

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	"github.com/libp2p/go-libp2p/p2p/security/noise"
	libp2ptls "github.com/libp2p/go-libp2p/p2p/security/tls"
	tcptransport "github.com/libp2p/go-libp2p/p2p/transport/tcp"
	ma "github.com/multiformats/go-multiaddr"
)

// twoHosts starts two hosts as newHost makes them (dialling TCP first when
// preferTCP), listening on listenA and listenB, each admitting the other
// as a member.
func twoHosts(t *testing.T, preferTCP bool, listenA, listenB []string) (a, b host.Host) {
	t.Helper()
	g := &memberGater{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	start := func(listen []string) host.Host {
		sk, _, err := crypto.GenerateEd25519Key(nil)
		if err != nil {
			t.Fatal(err)
		}
		h, err := newHost(sk, listen, g, preferTCP)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Close() })
		return h
	}
	a, b = start(listenA), start(listenB)
	g.setMembers(&Consortium{Members: []Member{{Name: "a", PeerID: a.ID().String()}, {Name: "b", PeerID: b.ID().String()}}})
	return a, b
}

// connTransport connects a to b at addrs and returns the transport of the
// connection a ends up with ("tcp", "quic-v1").
func connTransport(t *testing.T, a, b host.Host, addrs []ma.Multiaddr) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a.Peerstore().AddAddrs(b.ID(), addrs, peerstore.PermanentAddrTTL)
	if err := a.Connect(ctx, peer.AddrInfo{ID: b.ID()}); err != nil {
		t.Fatal(err)
	}
	conns := a.Network().ConnsToPeer(b.ID())
	if len(conns) != 1 {
		t.Fatalf("%d connections to the peer, want 1", len(conns))
	}
	return conns[0].ConnState().Transport
}

// Between nodes that listen on TCP and QUIC (the default), the connection
// is TCP with prefer_tcp (QUIC costs a node about three times the CPU per
// byte), and QUIC without it (QUIC's streams do not queue behind each
// other on a slow link).
func TestHostPrefersTCP(t *testing.T) {
	t.Parallel()
	both := []string{"/ip4/127.0.0.1/tcp/0", "/ip4/127.0.0.1/udp/0/quic-v1"}
	for preferTCP, want := range map[bool]string{true: "tcp", false: "quic-v1"} {
		a, b := twoHosts(t, preferTCP, both, both)
		if tr := connTransport(t, a, b, b.Addrs()); tr != want {
			t.Errorf("prefer_tcp %v: connected over %q, want %s", preferTCP, tr, want)
		}
	}
}

// A member whose TCP address does not answer is reached over QUIC.
func TestHostFallsBackToQUIC(t *testing.T) {
	t.Parallel()
	a, b := twoHosts(t, true, []string{"/ip4/127.0.0.1/tcp/0", "/ip4/127.0.0.1/udp/0/quic-v1"}, []string{"/ip4/127.0.0.1/udp/0/quic-v1"})
	// b's TCP address as a stale member list could have it: port 1, where
	// nothing listens on loopback, so the dial is refused.
	dead := ma.StringCast("/ip4/127.0.0.1/tcp/1")
	start := time.Now()
	if tr := connTransport(t, a, b, append([]ma.Multiaddr{dead}, b.Addrs()...)); tr != "quic-v1" {
		t.Fatalf("connected over %q, want quic-v1", tr)
	}
	t.Logf("connected over QUIC %v after the dial began", time.Since(start))
}

// tcpFirst dials TCP addresses at once and the others only after
// quicAfterTCP; with one kind of address only, it ranks as go-libp2p does.
func TestTCPFirstRanking(t *testing.T) {
	t.Parallel()
	tcpA, quicA := ma.StringCast("/ip4/10.0.0.1/tcp/7400"), ma.StringCast("/ip4/10.0.0.1/udp/7400/quic-v1")
	ranked := tcpFirst([]ma.Multiaddr{quicA, tcpA})
	if len(ranked) != 2 {
		t.Fatalf("%d addresses ranked, want 2", len(ranked))
	}
	delays := map[string]time.Duration{}
	for _, d := range ranked {
		delays[d.Addr.String()] = d.Delay
	}
	if delays[tcpA.String()] != 0 || delays[quicA.String()] < quicAfterTCP {
		t.Fatalf("delays %v: want TCP at once, QUIC after %v", delays, quicAfterTCP)
	}
	if got := tcpFirst([]ma.Multiaddr{quicA}); len(got) != 1 || got[0].Delay != 0 {
		t.Fatalf("QUIC alone ranked %v, want it dialled at once", got)
	}
}

var _ network.DialRanker = tcpFirst

// Over TCP two nodes secure their connection with TLS 1.3 (AES-GCM where
// the CPU has it: about a fifth less CPU per byte than Noise's
// ChaCha20-Poly1305, BenchmarkTransportBytes), and a peer that offers
// Noise only, a node of an earlier version, is still admitted over Noise.
func TestHostSecurity(t *testing.T) {
	t.Parallel()
	tcp := []string{"/ip4/127.0.0.1/tcp/0"}
	a, b := twoHosts(t, true, tcp, tcp)
	connTransport(t, a, b, b.Addrs())
	if sec := a.Network().ConnsToPeer(b.ID())[0].ConnState().Security; sec != libp2ptls.ID {
		t.Errorf("two nodes secured TCP with %q, want %s", sec, libp2ptls.ID)
	}

	g := &memberGater{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	node, err := newHost(testKey(t), tcp, g, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Close() })
	old, err := noiseHost(testKey(t), tcp, g, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = old.Close() })
	g.setMembers(&Consortium{Members: []Member{{Name: "node", PeerID: node.ID().String()}, {Name: "old", PeerID: old.ID().String()}}})
	for _, c := range []struct{ from, to host.Host }{{node, old}, {old, node}} {
		connTransport(t, c.from, c.to, c.to.Addrs())
		if sec := c.from.Network().ConnsToPeer(c.to.ID())[0].ConnState().Security; sec != noise.ID {
			t.Errorf("a Noise-only peer connected with %q, want %s", sec, noise.ID)
		}
		_ = c.from.Network().ClosePeer(c.to.ID())
	}
}

// noiseHost is a host as a node before TLS made it: TCP, Noise and yamux
// (newHost's signature, preferTCP unused: it has no QUIC).
func noiseHost(sk crypto.PrivKey, listen []string, g *memberGater, _ bool) (host.Host, error) {
	return libp2p.New(libp2p.Identity(sk), libp2p.ListenAddrStrings(listen...),
		libp2p.Transport(tcptransport.NewTCPTransport), libp2p.Security(noise.ID, noise.New),
		libp2p.Muxer(yamux.ID, yamux.DefaultTransport), libp2p.ConnectionGater(g), libp2p.DisableRelay())
}

// testKey is a fresh Ed25519 identity.
func testKey(t *testing.T) crypto.PrivKey {
	t.Helper()
	sk, _, err := crypto.GenerateEd25519Key(nil)
	if err != nil {
		t.Fatal(err)
	}
	return sk
}
