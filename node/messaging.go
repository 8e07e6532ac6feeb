package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cohortdm/cohort/internal/mailbox"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/wire"
)

// maxQueuedBytes bounds what peers can make a node hold in undelivered
// messages; beyond it new messages are refused and the sender sees an error.
const maxQueuedBytes = 1 << 30

// ackOK is the receiver's answer to an accepted message; anything else is
// the text of the refusal.
const ackOK = "ok"

// messenger sends and receives job messages over libp2p.
type messenger struct {
	self    string
	host    host.Host
	gater   *memberGater
	members func(name string) (peer.ID, bool)
	box     *mailbox.Box
	ledger  *audit.Ledger
	metrics *metrics
	log     *slog.Logger
	sendTTL time.Duration
	// accept decides whether a message may be queued: a message for a step
	// attempt that is already superseded or for a finished job is refused.
	accept func(m *wire.Message) error

	// closeMu orders queueing a peer's message against close: a handler
	// holds it for reading while it checks closing and queues.
	closeMu sync.RWMutex
	closing bool
}

// send delivers m to the named party and records it in the audit ledger.
// It never writes to m: a kind may send one message to several peers at
// once.
func (ms *messenger) send(ctx context.Context, to string, m *wire.Message, d wire.Disclosure) error {
	b, err := ms.encode(ctx, to, m)
	if err != nil {
		return err
	}
	if to == ms.self {
		return ms.toSelf(b) // nothing leaves the node
	}
	id, ok := ms.members(to)
	if !ok {
		return fmt.Errorf("send %s: %q is not a member of the consortium", m.Type, to)
	}
	if err := ms.ledger.Writable(); err != nil {
		return fmt.Errorf("send %s to %s: %w: refusing to send unrecorded: %w", m.Type, to, errLedger, err)
	}
	return ms.deliver(ctx, to, id, m, b, d)
}

// sendFailure reports a local failure that keeps this node from recording
// what it sends (the ledger's disk is full): the message carries only the
// error, no data of the party, and is recorded if the ledger can still take it.
func (ms *messenger) sendFailure(ctx context.Context, to string, m *wire.Message) error {
	b, err := ms.encode(ctx, to, m)
	if err != nil {
		return err
	}
	if to == ms.self {
		return ms.toSelf(b)
	}
	id, ok := ms.members(to)
	if !ok {
		return fmt.Errorf("send %s: %q is not a member of the consortium", m.Type, to)
	}
	return ms.deliver(ctx, to, id, m, b, wire.DiscloseControl)
}

// encode checks and encodes a message this node sends, as a peer will
// decode it: from this node, on the wire's terms, under a live context.
// A message to the node itself passes the same checks, so what works
// here works to a peer (and in jobtest's network).
// The encoding's body is m's own (wire.EncodeParts): a body of megabytes
// sent to several peers is written from the sender's slice, never copied.
func (ms *messenger) encode(ctx context.Context, to string, m *wire.Message) (wire.Encoded, error) {
	if err := ctx.Err(); err != nil {
		return wire.Encoded{}, fmt.Errorf("send %s to %s: %w", m.Type, to, err)
	}
	if m.From != ms.self {
		return wire.Encoded{}, fmt.Errorf("send %s to %s: the message claims to be from %q, not %s", m.Type, to, m.From, ms.self)
	}
	e, err := wire.EncodeParts(m)
	if err != nil {
		return wire.Encoded{}, fmt.Errorf("send %s to %s: %w", m.Type, to, err)
	}
	return e, nil
}

// toSelf queues a message to this node in its own mailbox, decoded afresh
// as a peer's would be, so that it shares no memory with the sender's.
func (ms *messenger) toSelf(e wire.Encoded) error {
	c, err := wire.DecodeOwned(e.Bytes())
	if err != nil {
		return fmt.Errorf("send to self: %w", err)
	}
	return ms.box.Put(c)
}

// deliver writes one encoded message to a peer and waits for its ack.
func (ms *messenger) deliver(ctx context.Context, to string, id peer.ID, m *wire.Message, b wire.Encoded, d wire.Disclosure) error {
	ctx, cancel := context.WithTimeout(ctx, ms.sendTTL)
	defer cancel()
	s, err := ms.host.NewStream(ctx, id, wire.JobProtocol)
	if err != nil {
		return fmt.Errorf("send %s to %s: %w", m.Type, to, err)
	}
	defer s.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = s.SetDeadline(dl)
	}
	if err := wire.WriteEncoded(s, b); err != nil {
		s.Reset()
		return fmt.Errorf("send %s to %s: %w", m.Type, to, err)
	}
	// Half-close so the receiver sees the end of the message. Its error is
	// not a delivery failure: over QUIC a receiver that has already read the
	// whole frame and closed its side cancels our write direction, and
	// CloseWrite then fails although the message arrived. The ack decides.
	if err := s.CloseWrite(); err != nil {
		ms.log.Debug("close write", "peer", to, "msg", m.String(), "err", err)
	}
	// The message has left the node: record it whether or not the peer
	// acknowledges it.
	n := b.Len() + 4
	ms.metrics.sent(to, m.Type, n)
	ledgerErr := ms.ledger.Append(audit.Entry{Time: time.Now().UTC(), Job: m.Job, Phase: m.Phase, Round: m.Round,
		Peer: to, Type: m.Type, Bytes: n, Disclosure: string(d)})
	if ledgerErr != nil {
		ms.log.Error("audit ledger append failed", "err", ledgerErr)
	}
	ack, err := wire.ReadFrame(s, 4096)
	if err != nil {
		s.Reset()
		return fmt.Errorf("send %s to %s: no acknowledgement: %w", m.Type, to, err)
	}
	if string(ack) != ackOK {
		return fmt.Errorf("send %s to %s: refused: %s", m.Type, to, ack)
	}
	return nil
}

// handle serves one incoming job stream: one framed message, one ack.
// Any problem is logged with the peer named; the node keeps running.
func (ms *messenger) handle(s network.Stream) {
	defer s.Close()
	remote := s.Conn().RemotePeer()
	name, ok := ms.gater.name(remote)
	if !ok {
		ms.log.Warn("job stream from non-member refused", "peer", remote.String())
		s.Reset()
		return
	}
	_ = s.SetDeadline(time.Now().Add(ms.sendTTL))
	m, err := wire.ReadMessage(s)
	if err != nil {
		ms.metrics.rejected(name)
		ms.log.Warn("bad message", "peer", name, "err", err)
		_ = wire.WriteFrame(s, []byte(err.Error()))
		return
	}
	if m.From != name {
		err = fmt.Errorf("message claims to be from %q", m.From)
	} else if ms.accept != nil {
		err = ms.accept(m)
	}
	if err == nil {
		err = ms.queue(m)
	}
	if errors.Is(err, errClosing) {
		// Not the peer's fault: it learns the message was not delivered
		// and fails or retries its send as for a node that is down.
		ms.log.Info("message refused", "peer", name, "msg", m.String(), "err", err)
		_ = wire.WriteFrame(s, []byte(err.Error()))
		return
	}
	if err != nil {
		ms.metrics.rejected(name)
		ms.log.Warn("message refused", "peer", name, "msg", m.String(), "err", err)
		_ = wire.WriteFrame(s, []byte(err.Error()))
		return
	}
	ms.metrics.received(name, m.Type)
	_ = wire.WriteFrame(s, []byte(ackOK))
}

// queue puts a peer's message in the mailbox, to be acknowledged, unless
// the node is closing (close).
func (ms *messenger) queue(m *wire.Message) error {
	ms.closeMu.RLock()
	defer ms.closeMu.RUnlock()
	if ms.closing {
		return fmt.Errorf("node %s is %w", ms.self, errClosing)
	}
	return ms.box.Put(m)
}

// close makes the handler refuse every peer's job message from now on:
// the node is stopping, and a message acknowledged now would be lost with
// its mailbox while the sender believed it delivered. Refused, the sender
// learns at once that delivery failed (deliver's "refused"), as from a
// node that is down, and fails its step or retries its report. Once close
// returns no peer's message is queued. Messages to the node itself are
// still queued: no peer is told of them, and a worker's send to itself
// failing before the node's context ends could report a spurious failure.
// Messages acknowledged before close are still lost; a restarted node
// reports their attempts as restarted (fsm.noteStart).
func (ms *messenger) close() {
	ms.closeMu.Lock()
	ms.closing = true
	ms.closeMu.Unlock()
}

// errClosing is the refusal of a peer's message by a node that is closing.
var errClosing = errors.New("closing")

// errStale marks a message for a superseded attempt or finished job.
var errStale = errors.New("stale message")

// errLedger marks a send refused because the audit ledger cannot record it.
var errLedger = fmt.Errorf("audit ledger unavailable: %w", runner.ErrUnrecorded)
