package sjc

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/sjc/internal/seccmp"
	"github.com/cohortdm/cohort/wire"
)

// The party's side of a choose step with hidden gains (hidden.go): its
// tables' values at the level's open nodes, and its part in the secure
// comparison of every pair of tables it shares with another party, on
// sub-channel compare of the step.

// compareMsg is a party's message to a peer in a choose step with hidden
// gains: as the encrypting party (TypeCompareBits) its fresh public key
// and, for every comparison it encrypts for the peer (open nodes in order,
// then pairs in tablePairs order), seccmp.L ciphertexts of its input's
// bits; as the evaluating party (TypeCompareBlinded) no key and the
// blinded ciphertexts, in the same order. Disclosure: score (gains under
// encryption, and values that decrypt to nothing but a masked bit).
type compareMsg struct {
	Key []byte `msgpack:"key"`
	Cts []byte `msgpack:"cts"`
}

// comparison is one pair at one open node, by position.
type comparison struct{ node, pair int }

// chooseHidden is the choose step with hidden gains: the party outputs
// its usefulness bits and comparison shares (hiddenNode), never a gain.
func (s *session) chooseHidden(ctx context.Context, step job.Step, gr *growth, a chooseArgs) (offersOutput, error) {
	pairs := tablePairs(s.g)
	out := offersOutput{Hidden: make([]hiddenNode, len(a.Open))}
	for i := range out.Hidden {
		out.Hidden[i] = hiddenNode{Useful: make([]uint8, len(s.g.Tables)), Shares: make([]uint8, len(pairs))}
	}
	if len(s.own) == 0 {
		return out, nil
	}
	fr, err := s.frontiers(step, gr)
	if err != nil {
		return offersOutput{}, err
	}
	vals := make([][]uint64, len(a.Open))
	for i, id := range a.Open {
		vals[i] = make([]uint64, len(s.g.Tables))
		for _, t := range s.own {
			vals[i][t] = hiddenValue(fr.nodes[id][t])
			out.Hidden[i].Useful[t] = shareOf(vals[i][t] > 0)
		}
		for k, pr := range pairs {
			if s.owns(pr.A) && s.owns(pr.B) {
				out.Hidden[i].Shares[k] = shareOf(vals[i][pr.B] > vals[i][pr.A]+epsUnits)
			}
		}
	}
	sub := step.Sub("compare")
	key := seccmp.GenerateKey()
	peers := s.g.PartiesBut(s.p.Self())
	// 1. As the encrypting party: every peer gets its comparisons' bits.
	for _, q := range peers {
		if err := s.sendBits(ctx, sub, key, q, s.comparisons(len(a.Open), pairs, s.p.Self(), q), pairs, vals); err != nil {
			return offersOutput{}, err
		}
	}
	// 2. As the evaluating party: blind every peer's comparisons.
	for _, p := range peers {
		if err := s.blindComparisons(ctx, sub, p, s.comparisons(len(a.Open), pairs, p, s.p.Self()), pairs, vals, out.Hidden); err != nil {
			return offersOutput{}, err
		}
	}
	// 3. As the encrypting party: β from the blinded values.
	for _, q := range peers {
		if err := s.decryptBlinded(ctx, sub, key, q, s.comparisons(len(a.Open), pairs, s.p.Self(), q), out.Hidden); err != nil {
			return offersOutput{}, err
		}
	}
	return out, nil
}

// comparisons lists the comparisons of a level in which party enc holds
// the earlier table (and encrypts) and party ev the later (and evaluates).
func (s *session) comparisons(nopen int, pairs []tablePair, enc, ev string) []comparison {
	var out []comparison
	for i := range nopen {
		for k, pr := range pairs {
			if s.g.Tables[pr.A].Party == enc && s.g.Tables[pr.B].Party == ev {
				out = append(out, comparison{node: i, pair: k})
			}
		}
	}
	return out
}

// sendBits sends peer q the encrypted bits of the party's input to each
// of cs.
func (s *session) sendBits(ctx context.Context, sub job.Step, key *seccmp.PrivateKey, q string, cs []comparison, pairs []tablePair, vals [][]uint64) error {
	if len(cs) == 0 {
		return nil
	}
	pub, err := key.Public().AppendPublic(nil)
	if err != nil {
		return err
	}
	var cts []byte
	for _, c := range cs {
		pr := pairs[c.pair]
		x, _ := compareInputs(vals[c.node][pr.A], 0)
		if cts, err = seccmp.AppendCiphertexts(cts, key.EncryptBits(x)); err != nil {
			return err
		}
	}
	return s.sendCompare(ctx, sub, q, TypeCompareBits, &compareMsg{Key: pub, Cts: cts})
}

// blindComparisons receives peer p's encrypted bits for cs, blinds each
// comparison under a fresh coin δ (the party's share), and sends them back.
func (s *session) blindComparisons(ctx context.Context, sub job.Step, p string, cs []comparison, pairs []tablePair, vals [][]uint64, shares []hiddenNode) error {
	if len(cs) == 0 {
		return nil
	}
	m, err := s.receiveCompare(ctx, sub, p, TypeCompareBits)
	if err != nil {
		return err
	}
	pub, err := seccmp.ParsePublic(m.Key)
	if err != nil {
		return fmt.Errorf("comparison bits from %s: %w", p, err)
	}
	xs, err := seccmp.ParseCiphertexts(m.Cts, len(cs)*seccmp.L)
	if err != nil {
		return fmt.Errorf("comparison bits from %s: %w", p, err)
	}
	coins := make([]byte, len(cs))
	if _, err := rand.Read(coins); err != nil {
		return fmt.Errorf("sjc: randomness: %w", err)
	}
	var reply []byte
	for j, c := range cs {
		pr := pairs[c.pair]
		_, y := compareInputs(0, vals[c.node][pr.B])
		delta := coins[j]&1 == 1
		back, err := seccmp.Evaluate(pub, xs[j*seccmp.L:(j+1)*seccmp.L], y, delta)
		if err != nil {
			return fmt.Errorf("comparison bits from %s: %w", p, err)
		}
		if reply, err = seccmp.AppendCiphertexts(reply, back); err != nil {
			return err
		}
		shares[c.node].Shares[c.pair] = shareOf(delta)
	}
	return s.sendCompare(ctx, sub, p, TypeCompareBlinded, &compareMsg{Cts: reply})
}

// decryptBlinded receives peer q's blinded values for cs and sets the
// party's share of each, β.
func (s *session) decryptBlinded(ctx context.Context, sub job.Step, key *seccmp.PrivateKey, q string, cs []comparison, shares []hiddenNode) error {
	if len(cs) == 0 {
		return nil
	}
	m, err := s.receiveCompare(ctx, sub, q, TypeCompareBlinded)
	if err != nil {
		return err
	}
	back, err := seccmp.ParseCiphertexts(m.Cts, len(cs)*seccmp.L)
	if err != nil || len(m.Key) > 0 {
		return fmt.Errorf("blinded comparisons from %s: %w", q, seccmp.ErrMalformed)
	}
	for j, c := range cs {
		beta, err := key.AnyZero(back[j*seccmp.L : (j+1)*seccmp.L])
		if err != nil {
			return fmt.Errorf("blinded comparisons from %s: %w", q, err)
		}
		shares[c.node].Shares[c.pair] = shareOf(beta)
	}
	return nil
}

func (s *session) sendCompare(ctx context.Context, sub job.Step, to, typ string, m *compareMsg) error {
	b, err := wire.Marshal(m)
	if err != nil {
		return err
	}
	if err := s.p.Send(ctx, to, sub.Message(s.p.Self(), typ, b), wire.DiscloseScore); err != nil {
		return fmt.Errorf("%w: to %s: %w", errNotDelivered, to, err)
	}
	return nil
}

func (s *session) receiveCompare(ctx context.Context, sub job.Step, from, typ string) (*compareMsg, error) {
	m, err := s.p.Receive(ctx, from, sub.Key(typ))
	if err != nil {
		return nil, fmt.Errorf("%w: from %s: %w", errNoMessage, from, err)
	}
	var cm compareMsg
	if err := wire.Unmarshal(m.Body, &cm); err != nil {
		return nil, fmt.Errorf("comparison from %s: %w", from, err)
	}
	return &cm, nil
}
