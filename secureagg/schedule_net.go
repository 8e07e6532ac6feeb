package secureagg

// The schedule's messages: with the share exchange's driver (exchange.go),
// the one place where an aggregation sends and receives. A message is one msgpack body (send,
// receive) or frames, the bodies of its parts (sendFrames, receiveFrames),
// which the backends encode and decode without I/O.

import (
	"context"
	"strconv"
	"sync"

	"github.com/cohortdm/cohort/wire"
)

// send delivers one message, giving up when the recipient would stop
// waiting for it (hops from start), so a hung peer cannot hold us longer.
func (s *schedule) send(ctx context.Context, hops int, to, typ string, body any, d wire.Disclosure) error {
	b, err := wire.Marshal(body)
	if err != nil {
		return err
	}
	return s.sendFrames(ctx, hops, to, typ, frames{b}, d)
}

// sendAll sends the same body to several parties at once and waits for all.
// A failed send is not an error of this party: the recipient's absence is
// caught where it matters (its missing share or input).
func (s *schedule) sendAll(ctx context.Context, hops func(to string) int, to []string, typ string, body any, d wire.Disclosure) {
	b, err := wire.Marshal(body)
	if err != nil {
		return // the recipients time out and name us
	}
	s.sendFramesAll(ctx, hops, to, typ, frames{b}, d)
}

// receive returns the body of the next message of type typ from party
// from, waiting at most until hops from start.
func (s *schedule) receive(ctx context.Context, hops int, from, typ string) ([]byte, error) {
	ctx, cancel := s.within(ctx, hops)
	defer cancel()
	return s.net.Receive(ctx, from, typ)
}

// sendFrames sends a message's parts to `to` on s.net, giving up when
// the recipient would stop waiting for it (hops from start).
func (s *schedule) sendFrames(ctx context.Context, hops int, to, typ string, f frames, d wire.Disclosure) error {
	return s.sendParts(ctx, hops, to, typ, s.net, f, d)
}

func (s *schedule) sendParts(ctx context.Context, hops int, to, typ string, net Network, bodies frames, d wire.Disclosure) error {
	return sendBy(ctx, s.at(hops), net, to, typ, bodies, d)
}

// sendFramesAll sends one message to several parties at once and waits
// for all. A failed send is not an error of this party: the recipient's
// absence is caught where it matters.
func (s *schedule) sendFramesAll(ctx context.Context, hops func(to string) int, to []string, typ string, f frames, d wire.Disclosure) {
	s.sendPartsAll(ctx, hops, to, typ, s.net, f, d)
}

func (s *schedule) sendPartsAll(ctx context.Context, hops func(to string) int, to []string, typ string, net Network, f frames, d wire.Disclosure) {
	var wg sync.WaitGroup
	for _, q := range to {
		wg.Go(func() { _ = s.sendParts(ctx, hops(q), q, typ, net, f, d) })
	}
	wg.Wait()
}

// receiveFrames receives a message of type typ from `from` on s.net into
// r, part by part, within hops from start.
func (s *schedule) receiveFrames(ctx context.Context, hops int, from, typ string, r reader) error {
	return s.receiveParts(ctx, hops, from, typ, s.net, r)
}

func (s *schedule) receiveParts(ctx context.Context, hops int, from, typ string, net Network, r reader) error {
	return receiveBy(ctx, s.at(hops), net, from, typ, r)
}

// abort tells the parent and the children at once (and, at the root, the
// children waiting for its commitment) that the attempt failed: f is the
// backend's abort naming the parties missing.
func (s *schedule) abort(ctx context.Context, f frames) {
	s.withdrawCommit(ctx)
	if parent := s.tree.parent(s.self); parent != "" {
		_ = s.sendFrames(ctx, s.upHops(s.self), parent, TypeUp, f, wire.DiscloseControl)
	}
	s.abortDown(ctx, f)
}

// abortDown passes the abort f to every child.
func (s *schedule) abortDown(ctx context.Context, f frames) {
	s.sendFramesAll(ctx, s.downHops, s.tree.children(s.self), TypeDown, f, wire.DiscloseControl)
}

// partNet is the channel that carries part i of a message sent on net.
func partNet(net Network, i int) Network {
	if i == 0 {
		return net
	}
	return net.Sub("part/" + strconv.Itoa(i))
}
