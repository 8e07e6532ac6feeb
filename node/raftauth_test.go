package node_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/raft"
	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/wire"
)

// A member that sends Raft RPCs with its own key but claims to be another
// member is refused: here org3's key sends org2 an AppendEntries from
// "org1" with term 10^6. Before the check, org2 took the term, rejected the
// real leader's next heartbeat, and the leader stepped down.
func TestRaftRPCForgedSenderRefused(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.MakeLeader(ctx, "org1"); err != nil {
		t.Fatal(err)
	}
	if err := c.Kill("org3"); err != nil {
		t.Fatal(err)
	}
	leader, follower := c.Node("org1"), c.Node("org2")

	keyBytes, err := os.ReadFile(filepath.Join(c.Dir, "org3", "identity.key"))
	if err != nil {
		t.Fatal(err)
	}
	sk, err := crypto.UnmarshalPrivateKey(keyBytes)
	if err != nil {
		t.Fatal(err)
	}
	rogue, err := libp2p.New(libp2p.Identity(sk), libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"))
	if err != nil {
		t.Fatal(err)
	}
	defer rogue.Close()
	var addrs []ma.Multiaddr
	for _, a := range follower.Addrs() {
		addrs = append(addrs, ma.StringCast(a))
	}
	if err := rogue.Connect(ctx, peer.AddrInfo{ID: follower.PeerID(), Addrs: addrs}); err != nil {
		t.Fatal(err)
	}
	s, err := rogue.NewStream(ctx, follower.PeerID(), wire.RaftProtocol)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Reset()
	_ = s.SetDeadline(time.Now().Add(5 * time.Second))
	org1 := leader.PeerID().String()
	req := raft.AppendEntriesRequest{
		RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("org1"), Addr: []byte(org1)},
		Term:      1_000_000,
		Leader:    []byte(org1),
	}
	w := bufio.NewWriter(s)
	w.WriteByte(0) // AppendEntries
	if err := codec.NewEncoder(w, &codec.MsgpackHandle{}).Encode(&req); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	dec := codec.NewDecoder(bufio.NewReader(s), &codec.MsgpackHandle{})
	var rpcErr string
	var resp raft.AppendEntriesResponse
	if err := dec.Decode(&rpcErr); err == nil {
		_ = dec.Decode(&resp)
		t.Errorf("forged AppendEntries answered: error %q, response %+v", rpcErr, resp)
	}

	time.Sleep(time.Second) // a few heartbeats
	term, _ := strconv.ParseUint(follower.Raft().Stats()["term"], 10, 64)
	if term >= 1_000_000 {
		t.Errorf("follower took the forged term: %d", term)
	}
	if !leader.IsLeader() || follower.Leader() != "org1" {
		t.Errorf("leadership changed: org1 leader %v, org2 sees %q", leader.IsLeader(), follower.Leader())
	}
	if got := node.MetricSum(follower, "cohort_raft_rpcs_refused_total"); got != 1 {
		t.Errorf("cohort_raft_rpcs_refused_total = %v, want 1", got)
	}
}
