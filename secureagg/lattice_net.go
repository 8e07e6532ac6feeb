package secureagg

import (
	"context"
	"fmt"
	"sync"

	"github.com/cohortdm/cohort/protocol"
)

// sendBlob sends data to `to` as a blob of type typ on net
// (in parts, see lattice_wire.go), giving up when the recipient would stop
// waiting for it (hops from start).
func (s *latticeAgg) sendBlob(ctx context.Context, hops int, to, typ string, net Network, data []byte, d protocol.Disclosure) error {
	bodies, err := splitBlob(s.shape, data, s.partSize)
	if err != nil {
		return err
	}
	return s.sendParts(ctx, hops, to, typ, net, bodies, d)
}

func (s *latticeAgg) sendParts(ctx context.Context, hops int, to, typ string, net Network, bodies [][]byte, d protocol.Disclosure) error {
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
func (s *latticeAgg) sendBlobAll(ctx context.Context, hops func(to string) int, to []string, typ string, net Network, data []byte, d protocol.Disclosure) {
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
func (s *latticeAgg) sendAbort(ctx context.Context, hops int, to, typ string, missing []string) error {
	b, err := frameRaw(blobHeader{Missing: missing}, nil)
	if err != nil {
		return err
	}
	return s.sendParts(ctx, hops, to, typ, s.net, [][]byte{b}, protocol.DiscloseControl)
}

// abortDown passes an abort naming missing to every child.
func (s *latticeAgg) abortDown(ctx context.Context, missing []string) {
	var wg sync.WaitGroup
	for _, c := range s.tree.children(s.self) {
		wg.Go(func() { _ = s.sendAbort(ctx, s.downHops(c), c, TypeDown, missing) })
	}
	wg.Wait()
}

// abort tells the parent and the children at once (and, at the root, the
// children waiting for its commitment) that the attempt failed for want
// of missing, so nobody waits for this party in vain.
func (s *latticeAgg) abort(ctx context.Context, missing []string) {
	s.withdrawCommit(ctx)
	if parent := s.tree.parent(s.self); parent != "" {
		_ = s.sendAbort(ctx, s.upHops(s.self), parent, TypeUp, missing)
	}
	s.abortDown(ctx, missing)
}

// receiveBlob receives a blob of type typ from `from` on net
// (hops from start), of at most maxSize bytes, or an abort naming missing
// parties of the step.
func (s *latticeAgg) receiveBlob(ctx context.Context, hops int, from, typ string, net Network, maxSize int) ([]byte, []string, error) {
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
