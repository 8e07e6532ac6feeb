package bicluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/wire"
)

// The merge test's bits, checked by every party. The root of a test round
// (secureagg.Root: never the coordinator) decrypts the blinded values and
// reads one bit per pair; it reports them to the coordinator, which
// commits them, and sends them to every other party of the step directly.
// Each party keeps the bits it got (its job scratch, so a restart keeps
// them) and, at every later step that replays the committed bits (the
// next test round, the merge, the rows), compares them: a coordinator
// that commits other bits than the decryption gave (to leave a local
// alone in a group, or to join a dissimilar one to a group) is refused by
// every party, naming it and the round, never a bit.

// TypeBits carries the root's bits of a merge test round, one per pair in
// Args order, to every other party of the step (public result: the
// coordinator commits the same), or the root's word that it decrypted
// none.
const TypeBits = "bicluster/bits"

// bitsBody is the body of a bits message.
type bitsBody struct {
	Similar []bool `msgpack:"similar"`
	Failed  bool   `msgpack:"failed"`
}

// decodeBits decodes the root's bits of n pairs: exactly n bits, or its
// word that it has none (an error naming the root).
func decodeBits(b []byte, root string, n int) ([]bool, error) {
	var body bitsBody
	if err := wire.Unmarshal(b, &body); err != nil {
		return nil, fmt.Errorf("the bits from root %s: %w", root, err)
	}
	switch {
	case body.Failed && len(body.Similar) > 0:
		return nil, fmt.Errorf("the bits from root %s: %w: a failure that carries bits", root, wire.ErrMalformed)
	case body.Failed:
		return nil, fmt.Errorf("the root %s decrypted no bits", root)
	case len(body.Similar) != n:
		return nil, fmt.Errorf("the bits from root %s: %w: %d bits for %d pairs", root, wire.ErrMalformed, len(body.Similar), n)
	}
	return body.Similar, nil
}

// announce is the root's last part: its bits (out.Similar), or its word
// that it has none when failed is set, to every other party of the step,
// at once. The failure of a send is returned (that party has no bits to
// check against), unless the round already failed.
func (r *pairRun) announce(ctx context.Context, out testOutput, failed error) error {
	body := bitsBody{Similar: out.Similar}
	if failed != nil {
		body = bitsBody{Failed: true}
	}
	errs := make([]error, len(r.names))
	var wg sync.WaitGroup
	for q := range r.names {
		if q == r.self {
			continue
		}
		wg.Go(func() { errs[q] = r.send(ctx, q, TypeBits, body, wire.DisclosePublicResult) })
	}
	wg.Wait()
	if failed != nil {
		return failed
	}
	return errors.Join(errs...)
}

// awaitBits is a non-root party's last part: the root's bits.
func (r *pairRun) awaitBits(ctx context.Context, root int) ([]bool, error) {
	raw, err := r.receive(ctx, root, TypeBits)
	if err != nil {
		return nil, err
	}
	return decodeBits(raw, r.names[root], len(r.pairs))
}

// heardBits is what a party keeps of a merge test round: the bits the
// round's decryption gave, as the root told it (or as it read them, at
// the root).
type heardBits struct {
	Round   int    `json:"round"`
	Similar []bool `json:"similar"`
}

// bitsName is the job scratch file that keeps merge test round's bits.
func (s *session) bitsName(round int) string {
	return fmt.Sprintf("jobs/%s/bicluster-bits-%d.json", s.p.JobID(), round)
}

// keepBits keeps the bits of the step's round, in the session and in the
// job's scratch, before the party reports the step done.
func (s *session) keepBits(step job.Step, bits []bool) error {
	h := heardBits{Round: step.Round, Similar: slices.Clone(bits)}
	b, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("party %s: encode the bits of merge test round %d: %w", s.p.Self(), step.Round, err)
	}
	if err := s.p.Secrets().WriteSecret(s.bitsName(step.Round), b); err != nil {
		return fmt.Errorf("party %s: keep the bits of merge test round %d: %w", s.p.Self(), step.Round, err)
	}
	if s.heard == nil {
		s.heard = map[int][]bool{}
	}
	s.heard[step.Round] = h.Similar
	return nil
}

// bitsOf are the bits the party kept of merge test round, or nil when it
// keeps none.
func (s *session) bitsOf(round int) ([]bool, error) {
	if bits, ok := s.heard[round]; ok {
		return bits, nil
	}
	b, err := s.p.Secrets().ReadSecret(s.bitsName(round))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("party %s: read the bits of merge test round %d: %w", s.p.Self(), round, err)
	}
	var h heardBits
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, fmt.Errorf("party %s: its record of merge test round %d's bits is unreadable: %w", s.p.Self(), round, err)
	}
	if h.Round != round || h.Similar == nil {
		return nil, fmt.Errorf("party %s: its record of merge test round %d's bits holds another round's, or none", s.p.Self(), round)
	}
	if s.heard == nil {
		s.heard = map[int][]bool{}
	}
	s.heard[round] = h.Similar
	return h.Similar, nil
}

// checkBits compares the bits every committed merge test round holds with
// those the round's decryption gave this party, before step replays them;
// it refuses a difference, naming the coordinator that committed them and
// the round, never a bit. A party that keeps no bits of a committed round
// (its scratch lost) refuses too: it cannot check them.
func (s *session) checkBits(step job.Step) error {
	for _, rec := range pairTestRound.History(s.p.History()) {
		d, err := pairTestRound.Decision(rec)
		if err != nil {
			return err
		}
		heard, err := s.bitsOf(rec.Step.Round)
		if err != nil {
			return err
		}
		switch {
		case heard == nil:
			return fmt.Errorf("party %s refuses %s round %d: it keeps no bits of merge test round %d, so it cannot check those coordinator %s committed",
				s.p.Self(), step.Phase, step.Round, rec.Step.Round, rec.Coordinator)
		case !slices.Equal(heard, d.Similar):
			return fmt.Errorf("party %s refuses %s round %d: coordinator %s committed bits of merge test round %d that are not those its decryption at root %s gave",
				s.p.Self(), step.Phase, step.Round, rec.Coordinator, rec.Step.Round, secureagg.Root(rec.Step))
		}
	}
	return nil
}
