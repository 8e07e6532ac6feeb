package secureagg

// The schedule's messages: the one place where an aggregation sends and
// receives (the joint Paillier decryption, Decryption, which kinds also run
// on their own, has its own). A message is one msgpack body (send,
// receive) or a blob in parts (sendBlob, receiveBlob, lattice_wire.go).

import (
	"context"
	"fmt"
	"sync"

	"github.com/cohortdm/cohort/protocol"
)

// send delivers one message, giving up when the recipient would stop
// waiting for it (hops from start), so a hung peer cannot hold us longer.
func (s *schedule) send(ctx context.Context, hops int, to, typ string, body any, d protocol.Disclosure) error {
	b, err := protocol.Marshal(body)
	if err != nil {
		return err
	}
	ctx, cancel := s.within(ctx, hops)
	defer cancel()
	if err := s.net.Send(ctx, to, typ, b, d); err != nil {
		return fmt.Errorf("secureagg: send %s to %s: %w", typ, to, err)
	}
	return nil
}

// sendAll sends the same body to several parties at once and waits for all.
// A failed send is not an error of this party: the recipient's absence is
// caught where it matters (its missing share or input).
func (s *schedule) sendAll(ctx context.Context, hops func(to string) int, to []string, typ string, body any, d protocol.Disclosure) {
	var wg sync.WaitGroup
	for _, q := range to {
		wg.Go(func() { _ = s.send(ctx, hops(q), q, typ, body, d) })
	}
	wg.Wait()
}

// receive returns the body of the next message of type typ from party
// from, waiting at most until hops from start.
func (s *schedule) receive(ctx context.Context, hops int, from, typ string) ([]byte, error) {
	ctx, cancel := s.within(ctx, hops)
	defer cancel()
	return s.net.Receive(ctx, from, typ)
}

// sendBlob sends data to `to` as a blob of type typ on net
// (in parts, see lattice_wire.go), giving up when the recipient would stop
// waiting for it (hops from start).
func (s *schedule) sendBlob(ctx context.Context, hops int, to, typ string, net Network, data []byte, d protocol.Disclosure) error {
	bodies, err := splitBlob(s.shape, data, s.partSize)
	if err != nil {
		return err
	}
	return s.sendParts(ctx, hops, to, typ, net, bodies, d)
}

func (s *schedule) sendParts(ctx context.Context, hops int, to, typ string, net Network, bodies [][]byte, d protocol.Disclosure) error {
	ctx, cancel := s.within(ctx, hops)
	defer cancel()
	for i, b := range bodies {
		if err := partNet(net, i).Send(ctx, to, typ, b, d); err != nil {
			return fmt.Errorf("secureagg: send %s to %s: %w", typ, to, err)
		}
	}
	return nil
}

// sendBlobAll sends one blob to several parties at once and waits for
// all. A failed send is not an error of this party: the recipient's
// absence is caught where it matters.
func (s *schedule) sendBlobAll(ctx context.Context, hops func(to string) int, to []string, typ string, net Network, data []byte, d protocol.Disclosure) {
	bodies, err := splitBlob(s.shape, data, s.partSize)
	if err != nil {
		return // a header that does not encode: the recipients time out and name us
	}
	var wg sync.WaitGroup
	for _, q := range to {
		wg.Go(func() { _ = s.sendParts(ctx, hops(q), q, typ, net, bodies, d) })
	}
	wg.Wait()
}

// sendAbort tells one party that the attempt failed for want of missing.
func (s *schedule) sendAbort(ctx context.Context, hops int, to, typ string, missing []string) error {
	b, err := frameRaw(blobHeader{Missing: missing}, nil)
	if err != nil {
		return err
	}
	return s.sendParts(ctx, hops, to, typ, s.net, [][]byte{b}, protocol.DiscloseControl)
}

// receiveBlob receives a blob of type typ from `from` on net
// (hops from start), of at most maxSize bytes, or an abort naming missing
// parties of the step.
func (s *schedule) receiveBlob(ctx context.Context, hops int, from, typ string, net Network, maxSize int) ([]byte, []string, error) {
	ctx, cancel := s.within(ctx, hops)
	defer cancel()
	var data []byte
	var first blobHeader
	for i := 0; i == 0 || i < first.Parts; i++ {
		msg, err := partNet(net, i).Receive(ctx, from, typ)
		if err != nil {
			return nil, nil, err
		}
		h, chunk, err := decodePart(msg, s.shape, i, maxSize, s.partSize, s.parties)
		if err != nil {
			return nil, nil, err
		}
		if i == 0 {
			if len(h.Missing) > 0 {
				return nil, h.Missing, nil
			}
			first, data = h, make([]byte, 0, h.Size)
		} else if h.Size != first.Size || h.Parts != first.Parts {
			return nil, nil, fmt.Errorf("%w: the parts of a blob disagree on its size", protocol.ErrMalformed)
		}
		data = append(data, chunk...)
	}
	return data, nil, nil
}
