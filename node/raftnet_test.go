package node

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"io"
	"log/slog"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/raft"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"
)

// rpcBytes encodes requests as hashicorp/raft's NetworkTransport sends
// them: a type byte, then the msgpack request (and, for InstallSnapshot,
// the snapshot's bytes).
func rpcBytes(t *testing.T, reqs ...any) []byte {
	t.Helper()
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	enc := codec.NewEncoder(w, &codec.MsgpackHandle{})
	for _, r := range reqs {
		switch r := r.(type) {
		case []byte:
			w.Write(r)
			continue
		case *raft.AppendEntriesRequest:
			w.WriteByte(rpcAppendEntries)
		case *raft.RequestVoteRequest:
			w.WriteByte(rpcRequestVote)
		case *raft.InstallSnapshotRequest:
			w.WriteByte(rpcInstallSnapshot)
		case *raft.TimeoutNowRequest:
			w.WriteByte(rpcTimeoutNow)
		case *raft.RequestPreVoteRequest:
			w.WriteByte(rpcRequestPreVote)
		}
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	return b.Bytes()
}

func newTestPeer(t *testing.T) peer.ID {
	t.Helper()
	_, pk, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPublicKey(pk)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// testChecker reads in as a Raft stream from member org2, peer id.
func testChecker(in []byte, id peer.ID) (*rpcChecker, *raftStreams) {
	s := &raftStreams{log: slog.New(slog.DiscardHandler), refusals: newRaftRefusals(prometheus.NewRegistry()),
		limit: &logLimiter{last: map[string]limitState{}, every: raftLogEvery}}
	return newRPCChecker(bytes.NewReader(in), func() error { return nil }, id, "org2", s), s
}

// Requests whose sender is the stream's peer reach Raft byte for byte,
// snapshot data included; the stream then ends with io.EOF.
func TestRPCCheckerPassesHonestRequests(t *testing.T) {
	t.Parallel()
	id := newTestPeer(t)
	hdr := raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("org2"), Addr: []byte(id.String())}
	snapshot := bytes.Repeat([]byte("snapshot"), 50_000)
	in := rpcBytes(t,
		&raft.AppendEntriesRequest{RPCHeader: hdr, Term: 3, Leader: []byte(id.String()), Entries: []*raft.Log{{Index: 1, Term: 3, Data: []byte("x")}}},
		&raft.InstallSnapshotRequest{RPCHeader: hdr, Term: 3, Leader: []byte(id.String()), Size: int64(len(snapshot))},
		snapshot,
		&raft.RequestVoteRequest{RPCHeader: hdr, Term: 4, Candidate: []byte(id.String())},
		&raft.RequestPreVoteRequest{RPCHeader: hdr, Term: 4},
		&raft.TimeoutNowRequest{RPCHeader: hdr},
	)
	c, s := testChecker(in, id)
	out, err := io.ReadAll(smallReads{c})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, in) {
		t.Fatalf("passed %d bytes, want the %d sent", len(out), len(in))
	}
	if n := testutilSum(s.refusals); n != 0 {
		t.Fatalf("%v refusals", n)
	}
}

// A request naming another sender, in any of its sender fields, or one
// that does not decode, ends the stream before Raft sees it.
func TestRPCCheckerRefusesForgedRequests(t *testing.T) {
	t.Parallel()
	id, other := newTestPeer(t), newTestPeer(t)
	good := raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("org2"), Addr: []byte(id.String())}
	for name, req := range map[string]any{
		"id":        &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ID: []byte("org1"), Addr: []byte(id.String())}, Term: 1e6},
		"addr":      &raft.RequestVoteRequest{RPCHeader: raft.RPCHeader{ID: []byte("org2"), Addr: []byte(other.String())}, Term: 1e6},
		"leader":    &raft.AppendEntriesRequest{RPCHeader: good, Term: 1e6, Leader: []byte(other.String())},
		"candidate": &raft.RequestVoteRequest{RPCHeader: good, Term: 1e6, Candidate: []byte(other.String())},
		"empty":     &raft.TimeoutNowRequest{},
		"snapshot":  &raft.InstallSnapshotRequest{RPCHeader: good, Size: -1},
		"garbage":   []byte{rpcAppendEntries, 0xc1, 0xc1, 0xc1},
		"type":      []byte{9, 1, 2, 3},
	} {
		t.Run(name, func(t *testing.T) {
			first := rpcBytes(t, &raft.TimeoutNowRequest{RPCHeader: good})
			c, s := testChecker(append(first, rpcBytes(t, req)...), id)
			out, err := io.ReadAll(c)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, first) {
				t.Fatalf("passed %d bytes, want only the %d of the honest request before it", len(out), len(first))
			}
			if n := testutilSum(s.refusals); n != 1 {
				t.Fatalf("%v refusals, want 1", n)
			}
		})
	}
}

// smallReads reads at most 7 bytes at a time, as Raft's reader might, so
// that requests leave the checker in pieces.
type smallReads struct{ r io.Reader }

func (r smallReads) Read(p []byte) (int, error) {
	if len(p) > 7 {
		p = p[:7]
	}
	return r.r.Read(p)
}

func testutilSum(c *prometheus.CounterVec) float64 {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	mfs, _ := reg.Gather()
	total := 0.0
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			total += m.GetCounter().GetValue()
		}
	}
	return total
}
