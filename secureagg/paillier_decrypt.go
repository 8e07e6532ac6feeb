package secureagg

import (
	"context"
	"fmt"
	"math/big"
	"time"

	"github.com/cohortdm/cohort/paillier"
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

// share is a non-root party's part of the decryption once it holds the
// total: share it at once if asked up front, else when the root asks,
// until shareCtx ends (the result arrived). A share the root does not get
// is the root's to report (it excludes us).
func (s *paillierAgg) share(ctx, shareCtx context.Context, total []*paillier.Ciphertext) {
	_ = s.decryption(ctx).Share(shareCtx, total, nil)
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

// open is the root's part of the decryption: the result message for its
// children and its own outcome.
func (s *paillierAgg) open(ctx context.Context, total []*paillier.Ciphertext) (frames, *Result, error) {
	res := s.decrypt(ctx, total)
	f, err := frame(res)
	if err != nil {
		return nil, nil, err
	}
	if res.Error != "" {
		return f, nil, res.err
	}
	out, err := s.outcome(res)
	return f, out, err
}

// result decodes the result from the parent: the message to pass down (the
// result as it came, re-encoded) and this party's outcome; nil frames and
// an error for a malformed result.
func (s *paillierAgg) result(data []byte, _ []string) (frames, *Result, error) {
	res, err := decodeResult(data, s.count, s.pk.PlaintextModulus(), s.parties)
	if err != nil {
		return nil, nil, err
	}
	f, err := frame(res)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case len(res.Missing) > 0:
		return f, nil, &MissingError{Parties: res.Missing, Formed: true}
	case res.Error != "":
		return f, nil, fmt.Errorf("%w: %s", ErrRoot, res.Error)
	}
	out, err := s.outcome(res)
	return f, out, err
}

// resultMissing is the verdict a party passes down when its parent never
// passed a result.
func (s *paillierAgg) resultMissing(missing []string) (frames, error) {
	return frame(resultBody{Missing: missing})
}

// outcome unpacks, range-checks and decodes a result's sum.
func (s *paillierAgg) outcome(res *resultBody) (*Result, error) {
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
