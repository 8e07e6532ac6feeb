package secureagg

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strings"
	"sync"

	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/protocol"
)

// shareAndWait is a non-root party's part after the total arrived: send the
// root a decryption share if asked up front, or when the root asks later,
// and wait for the result from the parent.
func (s *aggregation) shareAndWait(ctx context.Context, total []*paillier.Ciphertext) (*resultBody, error) {
	sendShare := func(ctx context.Context, hops int) error {
		share, err := s.keys.Share.DecryptShare(s.random, total, s.proofContext())
		if err != nil {
			return fmt.Errorf("secureagg: decryption share: %w", err)
		}
		b, err := share.MarshalBinary()
		if err != nil {
			return fmt.Errorf("secureagg: marshal share: %w", err)
		}
		return s.send(ctx, hops, s.tree.root(), TypeShare, shareBody{Share: b}, protocol.DiscloseDecryptionShare)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	if slices.Contains(s.asked(), s.self) {
		// A share the root does not get is the root's to report (it
		// excludes us); we still wait for the result.
		if err := sendShare(ctx, s.shareHops()); err != nil && ctx.Err() != nil {
			return nil, err
		}
	} else {
		// Answer a later request from the root, until the result arrives.
		askCtx, stop := context.WithCancel(ctx)
		defer stop()
		wg.Go(func() {
			wctx, cancel := s.within(askCtx, s.lateShareHops())
			defer cancel()
			m, err := s.p.Receive(wctx, s.tree.root(), s.step.Key(TypeShareRequest))
			if err != nil || protocol.Unmarshal(m.Body, &shareRequest{}) != nil {
				return
			}
			_ = sendShare(askCtx, s.lateShareHops())
		})
	}
	parent := s.tree.parent(s.self)
	wctx, cancel := s.within(ctx, s.resultHops(s.self))
	defer cancel()
	m, err := s.p.Receive(wctx, parent, s.step.Key(TypeResult))
	var res *resultBody
	if err == nil {
		res, err = decodeResult(m.Body, s.count, s.pk.PlaintextModulus(), s.parties)
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

// collectShares receives and verifies the shares of from, each within hops,
// adding the valid ones to valid and naming the others in excluded.
func (s *aggregation) collectShares(ctx context.Context, total []*paillier.Ciphertext, from []string, hops int, valid *[]*paillier.DecryptionShare, excluded map[string]string) {
	type verdict struct {
		share *paillier.DecryptionShare
		why   string
	}
	verdicts := make([]verdict, len(from))
	var wg sync.WaitGroup
	for i, q := range from {
		wg.Go(func() {
			wctx, cancel := s.within(ctx, hops)
			defer cancel()
			m, err := s.p.Receive(wctx, q, s.step.Key(TypeShare))
			if err != nil {
				verdicts[i].why = "no decryption share in time"
				return
			}
			sh, err := decodeShare(m.Body, s.pk, s.keys.Index(q), s.count)
			if err != nil {
				verdicts[i].why = "malformed decryption share: " + truncate(err.Error())
				return
			}
			if err := s.pk.VerifyShare(total, sh, s.proofContext()); err != nil {
				verdicts[i].why = "invalid decryption share: " + truncate(err.Error())
				return
			}
			verdicts[i].share = sh
		})
	}
	wg.Wait()
	for i, v := range verdicts {
		if v.share == nil {
			excluded[from[i]] = v.why
		} else {
			*valid = append(*valid, v.share)
		}
	}
}

// decrypt is the root's part: collect and verify the shares, asking more
// parties if too few are valid, combine t+1 valid ones, unpack, check the
// range and decode.
// Failures become a result with Error set, so they travel down the tree.
func (s *aggregation) decrypt(ctx context.Context, total []*paillier.Ciphertext) *resultBody {
	fail := func(err error) *resultBody {
		return &resultBody{Error: truncate(err.Error()), err: err}
	}
	// Compute our own share while the others' arrive and are verified.
	var own *paillier.DecryptionShare
	var ownErr error
	var wg sync.WaitGroup
	wg.Go(func() { own, ownErr = s.keys.Share.DecryptShare(s.random, total, s.proofContext()) })
	var others []*paillier.DecryptionShare
	excluded := map[string]string{}
	first := s.asked()[1:] // the root is first in tree order
	s.collectShares(ctx, total, first, s.shareHops(), &others, excluded)
	wg.Wait()
	if ownErr != nil {
		return fail(fmt.Errorf("secureagg: decryption share: %w", ownErr))
	}
	valid := append([]*paillier.DecryptionShare{own}, others...)
	need := s.pk.Threshold + 1
	if rest := s.tree.order[s.ask:]; len(valid) < need && len(rest) > 0 {
		s.sendAll(ctx, func(string) int { return s.shareHops() + 1 }, rest, TypeShareRequest, shareRequest{}, protocol.DiscloseControl)
		s.collectShares(ctx, total, rest, s.lateShareHops(), &valid, excluded)
	}
	if err := ctx.Err(); err != nil {
		return fail(fmt.Errorf("secureagg: %w", err))
	}
	if len(valid) < need {
		names := slices.Sorted(maps.Keys(excluded))
		return fail(fmt.Errorf("%w: %d of %d needed; excluded %s", ErrTooFewShares, len(valid), need, strings.Join(names, ", ")))
	}
	plain, err := s.pk.Combine(total, valid[:need])
	if err != nil {
		return fail(fmt.Errorf("secureagg: combine shares: %w", err))
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

// decodeSum unpacks the decrypted plaintexts, checks every slot against
// what N in-range inputs can produce, and decodes the fixed point.
func (s *aggregation) decodeSum(plain []*big.Int) ([]float64, error) {
	sums, err := s.packing.Unpack(plain, s.n, len(s.parties))
	if err != nil {
		return nil, fmt.Errorf("%w: unpack the sum: %w", ErrRange, err)
	}
	limit := new(big.Int).Mul(s.bound, big.NewInt(int64(len(s.parties))))
	out := make([]float64, s.n)
	for i, v := range sums {
		if new(big.Int).Abs(v).Cmp(limit) >= 0 {
			return nil, fmt.Errorf("%w: decrypted sum[%d] exceeds %d parties × 2^%d", ErrRange, i, len(s.parties), s.bound.BitLen()-1)
		}
		out[i] = s.fp.Decode(v)
		if math.IsInf(out[i], 0) || math.IsNaN(out[i]) {
			return nil, fmt.Errorf("%w: decrypted sum[%d] is not a finite float", ErrRange, i)
		}
	}
	return out, nil
}

func truncate(s string) string {
	if len(s) > maxReason {
		return s[:maxReason]
	}
	return s
}
