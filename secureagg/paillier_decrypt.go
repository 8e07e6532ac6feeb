package secureagg

import (
	"fmt"
	"math/big"

	"github.com/cohortdm/cohort/paillier"
)

// Decryption on the Paillier backend: the rounds of the aggregation's
// joint decryption of its total (Decryption's, paillierOpening and
// paillierSharing), which the schedule's exchange carries, then the result
// down the tree.

// decryption is the aggregation's joint decryption of its total: every
// party formed the total itself, so the root and the next s.ask−1 parties
// in tree order share at once and the others only when the root asks.
func (s *paillierAgg) decryption() *Decryption {
	return &Decryption{Step: s.step, Keys: s.keys, Root: s.tree.root(), Decryptors: s.tree.order[1:],
		Ask: s.ask - 1, Count: s.count, Held: true, First: s.at(s.shareHops()), Late: s.at(s.lateShareHops()), Random: s.random}
}

// paillierTotalOpening is the root's side of the decryption of the
// total, with the result it makes of it.
type paillierTotalOpening struct {
	*paillierOpening
	s *paillierAgg
}

// opening is the root's side of the decryption of the total.
func (s *paillierAgg) opening(total []*paillier.Ciphertext) totalOpener {
	return &paillierTotalOpening{paillierOpening: s.decryption().opening(s.self, total), s: s}
}

// sharing is a non-root party's side: it shares the total at once if
// asked up front, else when the root asks.
func (s *paillierAgg) sharing(total []*paillier.Ciphertext) (sharer, error) {
	return s.decryption().sharing(s.self, total, nil)
}

// result combines the shares, then unpacks, checks the range and decodes:
// the result message for the root's children and its own outcome.
// Failures become a result with Error set, so they travel down the tree.
func (o *paillierTotalOpening) result(excluded map[string]string, err error) (frames, *Result, error) {
	s := o.s
	res := &resultBody{Included: s.parties, Excluded: excluded, Noise: s.noise}
	var plain []*big.Int
	if err == nil {
		plain, err = o.combine(excluded)
	}
	if err == nil {
		_, err = s.decodeSum(plain)
	}
	if err != nil {
		res = &resultBody{Error: truncate(err.Error()), err: err}
	} else {
		res.Plain = bytesOf(plain)
		if len(excluded) == 0 {
			res.Excluded = nil
		}
	}
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

// bytesOf is the big-endian bytes of each plaintext.
func bytesOf(plain []*big.Int) [][]byte {
	out := make([][]byte, len(plain))
	for i, p := range plain {
		out[i] = p.Bytes()
	}
	return out
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
