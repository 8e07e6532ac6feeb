package secureagg

import (
	"context"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/protocol"
)

// Decryption on the Paillier backend: the aggregation's joint decryption
// of its total (Decryption), then the result down the tree.

// decryption is the aggregation's joint decryption of its total: every
// party formed the total itself, so the root and the next s.ask−1 parties
// in tree order share at once and the others only when the root asks.
// Each tells every party of the step as it makes its share, on ctx (the
// aggregation's: a share's own context ends when the result arrives, and
// the notices must not end with it).
func (s *paillierAgg) decryption(ctx context.Context) *Decryption {
	at := func(hops int) time.Time { return s.start.Add(time.Duration(hops) * s.hop) }
	return &Decryption{Net: s.net, Step: s.step, Keys: s.keys, Root: s.tree.root(), Decryptors: s.tree.order[1:],
		Ask: s.ask - 1, Count: s.count, Held: true, First: at(s.shareHops()), Late: at(s.lateShareHops()), Random: s.random,
		Announce: func(context.Context) { s.announce(ctx, true) }}
}

// shareAndWait is a non-root party's part after the total arrived: share
// it (at once if asked up front, else when the root asks, until the
// result arrives) and wait for the result from the parent.
func (s *paillierAgg) shareAndWait(ctx context.Context, total []*paillier.Ciphertext) (*resultBody, error) {
	shareCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	// A share the root does not get is the root's to report (it excludes
	// us); we still wait for the result.
	wg.Go(func() { _ = s.decryption(ctx).Share(shareCtx, total, nil) })
	parent := s.tree.parent(s.self)
	msg, err := s.receive(ctx, s.resultHops(s.self), parent, TypeResult)
	var res *resultBody
	if err == nil {
		res, err = decodeResult(msg, s.count, s.pk.PlaintextModulus(), s.parties)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("secureagg: waiting for the result from %s: %w", parent, err)
		}
		// As for the total: name the parent, and pass the verdict down.
		return &resultBody{Missing: []string{parent}}, nil
	}
	return res, nil
}

// decrypt is the root's part: decrypt the total jointly, then unpack,
// check the range and decode. Failures become a result with Error set, so
// they travel down the tree.
func (s *paillierAgg) decrypt(ctx context.Context, total []*paillier.Ciphertext) *resultBody {
	fail := func(err error) *resultBody {
		return &resultBody{Error: truncate(err.Error()), err: err}
	}
	plain, excluded, err := s.decryption(ctx).Decrypt(ctx, total)
	if err != nil {
		return fail(err)
	}
	if _, err := s.decodeSum(plain); err != nil {
		return fail(err)
	}
	body := &resultBody{Plain: make([][]byte, len(plain)), Included: s.parties, Excluded: excluded, Noise: s.noise}
	for i, p := range plain {
		body.Plain[i] = p.Bytes()
	}
	if len(excluded) == 0 {
		body.Excluded = nil
	}
	return body
}

// finish decrypts (at the root) or shares and waits (elsewhere), passes
// the result down and decodes it.
func (s *paillierAgg) finish(ctx context.Context, total []*paillier.Ciphertext) (*Result, error) {
	parent, children := s.tree.parent(s.self), s.tree.children(s.self)
	var res *resultBody
	if parent == "" {
		res = s.decrypt(ctx, total)
	} else {
		var err error
		if res, err = s.shareAndWait(ctx, total); err != nil {
			return nil, err
		}
	}
	s.sendAll(ctx, s.resultHops, children, TypeResult, res, protocol.DisclosePublicResult)
	switch {
	case len(res.Missing) > 0:
		return nil, &MissingError{Parties: res.Missing, Formed: true}
	case res.Error != "":
		if parent == "" {
			return nil, res.err
		}
		return nil, fmt.Errorf("%w: %s", ErrRoot, res.Error)
	}
	plain := make([]*big.Int, len(res.Plain))
	for i, p := range res.Plain {
		plain[i] = new(big.Int).SetBytes(p)
	}
	sum, err := s.decodeSum(plain)
	if err != nil {
		return nil, fmt.Errorf("%w: the root's result: %w", ErrRoot, err)
	}
	return &Result{Sum: sum, Included: res.Included, Excluded: res.Excluded, Noise: res.Noise}, nil
}
