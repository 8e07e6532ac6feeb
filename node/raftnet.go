package node

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/raft"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cohortdm/cohort/wire"
)

// Raft's transport is hashicorp/raft's NetworkTransport over libp2p streams
// (one stream per Raft connection); server addresses are peer ids and
// server ids are member names.
//
// Raft believes what an RPC says about its sender (RPCHeader.ID and Addr,
// and the older Leader and Candidate fields), while libp2p has
// authenticated who actually sent it. Every RPC on an accepted stream is
// therefore decoded here first, and passed on to Raft only if every claim
// of its sender names the member the stream came from; otherwise the
// stream is reset and the refusal counted in
// cohort_raft_rpcs_refused_total.

// Raft's RPC type bytes, as hashicorp/raft's NetworkTransport writes them
// before each request (net_transport.go, unexported there).
const (
	rpcAppendEntries byte = iota
	rpcRequestVote
	rpcInstallSnapshot
	rpcTimeoutNow
	rpcRequestPreVote
)

// raftTransportTimeout is the NetworkTransport's I/O deadline for one RPC
// and its dial timeout; Close does not wait for it (see raftStreams.abort).
const raftTransportTimeout = 10 * time.Second

// raftRefusals counts Raft RPCs refused per peer and reason.
func newRaftRefusals(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cohort_raft_rpcs_refused_total",
		Help: "Raft RPCs refused because their claimed sender is not the peer they came from, or malformed, per peer and reason."},
		[]string{"peer", "reason"})
	reg.MustRegister(c)
	return c
}

// raftStreams is Raft's stream layer over libp2p. It tracks every stream it
// hands out so that abort can end Raft's in-flight RPCs at once.
type raftStreams struct {
	h        host.Host
	log      *slog.Logger
	members  func(peer.ID) (string, bool)
	refusals *prometheus.CounterVec
	limit    *logLimiter
	incoming chan network.Stream

	ctx    context.Context // ends with abort: cancels dials and Accept
	cancel context.CancelFunc

	mu    sync.Mutex
	conns map[*raftConn]struct{}
}

func newRaftStreams(h host.Host, lg *slog.Logger, members func(peer.ID) (string, bool), refusals *prometheus.CounterVec) *raftStreams {
	ctx, cancel := context.WithCancel(context.Background())
	s := &raftStreams{
		h: h, log: lg, members: members, refusals: refusals,
		limit:    &logLimiter{last: map[string]limitState{}, every: raftLogEvery},
		incoming: make(chan network.Stream), ctx: ctx, cancel: cancel,
		conns: map[*raftConn]struct{}{},
	}
	h.SetStreamHandler(wire.RaftProtocol, s.handle)
	return s
}

// handle passes an incoming stream to Accept; libp2p runs it on the
// stream's own goroutine, which ends when Accept takes the stream or the
// layer is aborted.
func (s *raftStreams) handle(st network.Stream) {
	select {
	case s.incoming <- st:
	case <-s.ctx.Done():
		st.Reset()
	}
}

// Accept returns the next incoming Raft stream, checked RPC by RPC.
func (s *raftStreams) Accept() (net.Conn, error) {
	for {
		select {
		case st := <-s.incoming:
			remote := st.Conn().RemotePeer()
			name, ok := s.members(remote)
			if !ok { // the gater admits members only; be sure anyway
				st.Reset()
				s.refuse(remote.String(), "not a member", nil)
				continue // an error would make Raft back off accepting
			}
			c := &raftConn{Stream: st, s: s}
			c.in = newRPCChecker(st, st.Reset, remote, name, s)
			if err := s.track(c); err != nil {
				return nil, err
			}
			return c, nil
		case <-s.ctx.Done():
			return nil, net.ErrClosed
		}
	}
}

// Dial opens a Raft stream to the peer whose id is the server address.
func (s *raftStreams) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	id, err := peer.Decode(string(addr))
	if err != nil {
		return nil, fmt.Errorf("raft dial %q: %w", addr, err)
	}
	ctx, cancel := context.WithTimeout(s.ctx, timeout)
	defer cancel()
	st, err := s.h.NewStream(ctx, id, wire.RaftProtocol)
	if err != nil {
		return nil, fmt.Errorf("raft dial %s: %w", addr, err)
	}
	c := &raftConn{Stream: st, s: s}
	if err := s.track(c); err != nil {
		return nil, err
	}
	return c, nil
}

func (s *raftStreams) track(c *raftConn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		c.Stream.Reset()
		return net.ErrClosed
	}
	s.conns[c] = struct{}{}
	return nil
}

func (s *raftStreams) untrack(c *raftConn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// abort ends every Raft stream and refuses new ones: an RPC in flight to a
// dead peer would otherwise hold Raft's shutdown for up to
// raftTransportTimeout.
func (s *raftStreams) abort() {
	s.mu.Lock()
	s.cancel()
	conns := s.conns
	s.conns = map[*raftConn]struct{}{}
	s.mu.Unlock()
	for c := range conns {
		c.Stream.Reset()
	}
}

// Close is the NetworkTransport's close: it stops accepting and aborts.
func (s *raftStreams) Close() error {
	s.h.RemoveStreamHandler(wire.RaftProtocol)
	s.abort()
	return nil
}

// Addr is this node's Raft address, its peer id.
func (s *raftStreams) Addr() net.Addr { return peerAddr(s.h.ID()) }

func (s *raftStreams) refuse(peerName, reason string, err error) {
	s.refusals.WithLabelValues(peerName, reason).Inc()
	if ok, dropped := s.limit.allow(peerName + "\x00" + reason); ok {
		s.log.Warn("raft rpc refused", "peer", peerName, "reason", reason, "err", err, "repeated", dropped)
	}
}

// peerAddr is a peer id as a net.Addr.
type peerAddr peer.ID

func (a peerAddr) Network() string { return "libp2p" }
func (a peerAddr) String() string  { return peer.ID(a).String() }

// raftConn is a libp2p stream as the net.Conn Raft wants. Streams Raft
// accepted are read through an rpcChecker.
type raftConn struct {
	network.Stream
	s  *raftStreams
	in *rpcChecker
}

func (c *raftConn) Read(p []byte) (int, error) {
	if c.in != nil {
		return c.in.Read(p)
	}
	return c.Stream.Read(p)
}

func (c *raftConn) Close() error {
	c.s.untrack(c)
	return c.Stream.Close()
}

func (c *raftConn) LocalAddr() net.Addr  { return peerAddr(c.Stream.Conn().LocalPeer()) }
func (c *raftConn) RemoteAddr() net.Addr { return peerAddr(c.Stream.Conn().RemotePeer()) }

// rpcChecker reads Raft requests off an accepted stream and hands Raft the
// bytes of each one only after checking who it claims to be from. It ends
// the stream with io.EOF (which Raft closes quietly) on anything else: the
// peer going away is logged at debug, a refused or malformed request is
// counted and logged as a warning by raftStreams.refuse.
type rpcChecker struct {
	reset func() error // ends the stream
	peer  peer.ID
	name  string
	s     *raftStreams

	r       *bufio.Reader
	rec     recorder
	dec     *codec.Decoder
	pending []byte // checked bytes Raft has not read yet
	raw     int64  // snapshot bytes following a checked InstallSnapshot
	done    bool
}

func newRPCChecker(r io.Reader, reset func() error, id peer.ID, name string, s *raftStreams) *rpcChecker {
	c := &rpcChecker{reset: reset, peer: id, name: name, s: s, r: bufio.NewReader(r)}
	c.rec.r = c.r
	c.dec = codec.NewDecoder(&c.rec, &codec.MsgpackHandle{})
	return c
}

func (c *rpcChecker) Read(p []byte) (int, error) {
	for {
		switch {
		case len(c.pending) > 0:
			n := copy(p, c.pending)
			c.pending = c.pending[n:]
			return n, nil
		case c.raw > 0:
			if int64(len(p)) > c.raw {
				p = p[:c.raw]
			}
			n, err := c.r.Read(p)
			c.raw -= int64(n)
			if n == 0 && err != nil {
				c.gone(err)
				return 0, io.EOF
			}
			return n, nil
		case c.done:
			return 0, io.EOF
		}
		if err := c.next(); err != nil {
			c.done = true
			return 0, io.EOF
		}
	}
}

// next reads, decodes and checks one request, leaving its bytes pending.
func (c *rpcChecker) next() error {
	c.rec.buf, c.rec.err = c.rec.buf[:0], nil
	t, err := c.r.ReadByte()
	if err != nil {
		c.gone(err)
		return err
	}
	c.rec.buf = append(c.rec.buf, t)
	var hdr raft.RPCHeader
	var legacy []byte // the deprecated sender fields, still sent and read
	var size int64
	switch t {
	case rpcAppendEntries:
		var req raft.AppendEntriesRequest
		err = c.dec.Decode(&req)
		hdr, legacy = req.RPCHeader, req.Leader
	case rpcRequestVote:
		var req raft.RequestVoteRequest
		err = c.dec.Decode(&req)
		hdr, legacy = req.RPCHeader, req.Candidate
	case rpcInstallSnapshot:
		var req raft.InstallSnapshotRequest
		err = c.dec.Decode(&req)
		hdr, legacy, size = req.RPCHeader, req.Leader, req.Size
	case rpcTimeoutNow:
		var req raft.TimeoutNowRequest
		err = c.dec.Decode(&req)
		hdr = req.RPCHeader
	case rpcRequestPreVote:
		var req raft.RequestPreVoteRequest
		err = c.dec.Decode(&req)
		hdr = req.RPCHeader
	default:
		return c.refuse("malformed", fmt.Errorf("unknown rpc type %d", t))
	}
	if err != nil {
		if c.rec.err != nil { // the stream ended mid-request
			c.gone(c.rec.err)
			return err
		}
		return c.refuse("malformed", fmt.Errorf("decode rpc type %d: %w", t, err))
	}
	if size < 0 {
		return c.refuse("malformed", fmt.Errorf("snapshot size %d", size))
	}
	self := c.peer.String()
	if string(hdr.ID) != c.name || string(hdr.Addr) != self || (len(legacy) > 0 && string(legacy) != self) {
		return c.refuse("forged sender", fmt.Errorf("rpc type %d claims to be from id %q addr %q (legacy %q); the stream is from %s (%s)",
			t, hdr.ID, hdr.Addr, legacy, c.name, self))
	}
	c.pending, c.raw = c.rec.buf, size
	return nil
}

func (c *rpcChecker) refuse(reason string, err error) error {
	_ = c.reset()
	c.s.refuse(c.name, reason, err)
	return err
}

// gone notes that the peer closed or reset the stream, or this node is
// stopping: routine, so debug.
func (c *rpcChecker) gone(err error) {
	if !errors.Is(err, io.EOF) {
		c.s.log.Debug("raft stream ended", "peer", c.name, "err", err)
	}
}

// recorder is the decoder's reader: it keeps the bytes a request was
// decoded from, so they can be passed on to Raft unchanged, and the read
// error, if the stream failed. It is an io.ByteScanner, so the decoder
// reads no further than the request.
type recorder struct {
	r   *bufio.Reader
	buf []byte
	err error
}

func (r *recorder) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.buf = append(r.buf, p[:n]...)
	if err != nil {
		r.err = err
	}
	return n, err
}

func (r *recorder) ReadByte() (byte, error) {
	b, err := r.r.ReadByte()
	if err != nil {
		r.err = err
		return 0, err
	}
	r.buf = append(r.buf, b)
	return b, nil
}

func (r *recorder) UnreadByte() error {
	if err := r.r.UnreadByte(); err != nil {
		return err
	}
	r.buf = r.buf[:len(r.buf)-1]
	return nil
}
