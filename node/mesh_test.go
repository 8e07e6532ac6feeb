package node

import (
	"context"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/event"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// newTestMesh starts a mesh on loopback and returns it with its metrics
// and the member it is; the test closes it.
func newTestMesh(t *testing.T, name string) (*mesh, *metrics, Member) {
	t.Helper()
	sk, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	m := newMetrics()
	x, err := newMesh(sk, nil, false, discard(), m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	me := Member{Name: name, PeerID: x.host.ID().String()}
	for _, a := range x.host.Addrs() {
		me.Addrs = append(me.Addrs, a.String())
	}
	return x, m, me
}

// awaitConnectedness waits until x's connectedness to id is want, as its
// event bus reports it.
func awaitConnectedness(ctx context.Context, t *testing.T, x *mesh, id peer.ID, want network.Connectedness) {
	t.Helper()
	sub, err := x.host.EventBus().Subscribe(new(event.EvtPeerConnectednessChanged))
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for x.host.Network().Connectedness(id) != want {
		select {
		case <-sub.Out():
		case <-ctx.Done():
			t.Fatalf("connectedness to %s never became %v", id, want)
		}
	}
}

// The redial loop connects to a member nobody asked for yet; a member the
// set drops is disconnected and refused; Close stops the loop and the host.
func TestMeshRedialsAndDropsMembers(t *testing.T) {
	t.Parallel()
	a, am, ma := newTestMesh(t, "a")
	b, _, mb := newTestMesh(t, "b")
	both := &Consortium{Members: []Member{ma, mb}}
	a.admit(both)
	b.admit(both)
	a.start(t.Context()) // only a dials
	awaitConnectedness(t.Context(), t, a, b.host.ID(), network.Connected)
	if id, ok := a.memberID("b"); !ok || id != b.host.ID() {
		t.Fatalf("memberID(b) = %s, %v", id, ok)
	}

	a.setMembers(&Consortium{Members: []Member{ma}})
	awaitConnectedness(t.Context(), t, a, b.host.ID(), network.NotConnected)
	if _, ok := a.memberID("b"); ok {
		t.Fatal("a still knows b as a member")
	}
	// b still counts a as a member: once it has seen the connection go,
	// its new dial fails, or the connection is closed once a has
	// authenticated (and refused) it.
	awaitConnectedness(t.Context(), t, b, a.host.ID(), network.NotConnected)
	_ = b.host.Connect(t.Context(), peer.AddrInfo{ID: a.host.ID(), Addrs: a.host.Addrs()})
	awaitConnectedness(t.Context(), t, b, a.host.ID(), network.NotConnected)
	if got := metricSum(am, "cohort_connections_denied_total"); got == 0 {
		t.Fatal("the refusal was not counted")
	}

	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.host.Connect(context.Background(), peer.AddrInfo{ID: b.host.ID(), Addrs: b.host.Addrs()}); err == nil {
		t.Fatal("a closed mesh still dials")
	}
}

// A reload takes new addresses for the same members and refuses a file
// that names other members or other peer ids.
func TestMeshReloadKeepsMembership(t *testing.T) {
	t.Parallel()
	a, _, ma := newTestMesh(t, "a")
	_, _, mb := newTestMesh(t, "b")
	_, _, mc := newTestMesh(t, "c")
	a.admit(&Consortium{Members: []Member{ma, mb}, VotersWanted: 3})

	for _, file := range []*Consortium{
		{Members: []Member{ma, mb, mc}},
		{Members: []Member{ma, {Name: "b", PeerID: mc.PeerID, Addrs: mb.Addrs}}},
	} {
		if _, err := a.reload(file, "consortium.yaml"); !errors.Is(err, ErrMembership) {
			t.Fatalf("reload of %v: %v, want ErrMembership", file.Names(), err)
		}
	}
	moved := mb
	moved.Addrs = []string{"/ip4/127.0.0.1/tcp/1"}
	next, err := a.reload(&Consortium{Members: []Member{ma, moved}}, "consortium.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := a.members().Member("b"); next.VotersWanted != 3 || len(got.Addrs) != 1 || got.Addrs[0] != moved.Addrs[0] {
		t.Fatalf("after reload b is %+v (voters %d)", got, next.VotersWanted)
	}
	select {
	case <-a.redialNow:
	default:
		t.Fatal("a reload did not ask for a redial")
	}
}

// A mesh that never started closes.
func TestMeshClosesUnstarted(t *testing.T) {
	t.Parallel()
	a, _, _ := newTestMesh(t, "a")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}
