package boost

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/wire"
)

// poolSize bounds the class holder's randomiser pool: encryptions of one
// level's down messages draw from it. The pool is sized to twice the
// join's rows (a level's down messages hold at most one entry per join
// row and child edge), so that its filler, which runs beside the node's
// Raft and network work, draws no more than a level may use.
const poolSize = 1024

// prepareLevel reads the party's share of the consortium key (every
// party decrypts or encrypts) and starts the class holder's booster.
func (s *session) prepareLevel(ctx context.Context) error {
	s.dropTables()
	if s.backend == BackendLattice {
		if err := s.readLatticeKey(); err != nil {
			return err
		}
	} else if s.keys == nil {
		k, err := keyring.ReadPaillier(s.p.Secrets())
		if err != nil {
			return fmt.Errorf("party %s has no consortium threshold key (run 'cohort keys deal'): %w", s.p.Self(), err)
		}
		s.keys = k
	}
	if s.isHolder() && s.holder == nil {
		s.holder = NewHolder(s.prm)
	}
	return nil
}

// holderCrypto sets up the class holder's sealing once the join's row
// count is known (the first level's groups): packed Paillier under the
// consortium key with pooled randomisers; the level's joint decryption
// gives the plaintexts that Crypto.Unpack opens.
func (s *session) holderCrypto(_ context.Context, groups []Group) error {
	if s.pool != nil {
		return nil
	}
	for _, gr := range groups {
		s.rows += gr.Count
	}
	if s.rows == 0 {
		return ErrEmptyJoin
	}
	pk := &s.keys.Public().PublicKey
	pctx, stop := context.WithCancel(context.Background())
	pool, err := paillier.NewRandomizerPool(pctx, pk, nil, int(min(poolSize, 2*s.rows)))
	if err != nil {
		stop()
		return fmt.Errorf("boost: randomiser pool: %w", err)
	}
	c, err := PaillierCrypto(pk, pool, s.rows, nil)
	if err != nil {
		stop()
		pool.Close()
		return err
	}
	s.crypto, s.pool, s.stop = c, pool, stop
	s.sealer = newSealer(c, s.prm.Reuse)
	return nil
}

// senders are the parties whose tables' bin sums are encrypted, sorted:
// the segments of a level's decryption, in order.
func (s *session) senders() []string {
	var out []string
	for t := range s.g.Tables {
		if q := s.g.Tables[t].Party; !s.plainTable(t) && !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	slices.Sort(out)
	return out
}

// digestMsg tells a decryptor how many ciphertexts a party sent the class
// holder at this level and their digest (secureagg.Digest).
type digestMsg struct {
	Count int    `msgpack:"count"`
	D     []byte `msgpack:"d"`
}

// decrypt sends the party's encrypted bin sums to the class holder (and
// their digest to every other party) and runs the level's joint
// decryption of every party's, rooted at the class holder: only it learns
// the bin sums. Each decryptor shares only ciphertexts whose every
// segment is, byte for byte, what its sender sent (its digest).
func (r *levelRun) decrypt(ctx context.Context) error {
	s := r.s
	senders := s.senders()
	if len(senders) == 0 {
		return nil
	}
	holder := s.g.Tables[0].Party
	pk := &s.keys.Public().PublicKey
	sub := r.step.Sub("bins")
	own := wireBins{}
	var ownCts []*paillier.Ciphertext
	for _, t := range s.own {
		if bs, ok := r.sealed[t]; ok {
			es, cts, err := flattenBins(t, bs)
			if err != nil {
				return err
			}
			own.Entries, ownCts = append(own.Entries, es...), append(ownCts, cts...)
		}
	}
	segs := map[string][]*paillier.Ciphertext{}
	bins := map[string]wireBins{}
	if slices.Contains(senders, s.p.Self()) {
		var err error
		if ownCts, err = r.compress(&own, ownCts); err != nil {
			return err
		}
		if own.C, err = pk.MarshalCiphertexts(ownCts); err != nil {
			return fmt.Errorf("boost: marshal ciphertexts: %w", err)
		}
		dm := digestMsg{Count: len(ownCts), D: secureagg.Digest(sub, s.p.Self(), own.C)}
		for _, q := range s.p.Spec().PartyNames() {
			if q != s.p.Self() && q != holder {
				if err := s.send(ctx, sub, q, TypeDigest, &dm, wire.DiscloseControl); err != nil {
					return err
				}
			}
		}
		if s.p.Self() != holder {
			if err := s.send(ctx, sub, holder, TypeBins, &own, wire.DiscloseCiphertext); err != nil {
				return err
			}
		}
		segs[s.p.Self()], bins[s.p.Self()] = ownCts, own
	}
	if s.p.Self() == holder {
		return r.decryptRoot(ctx, senders, segs, bins)
	}
	return r.share(ctx, senders, own.C)
}

// decryption is the level's joint decryption as every party builds it from
// the committed step: rooted at the class holder, which asks t of the
// other parties (in name order) for shares and the rest only when shares
// fail.
func (r *levelRun) decryption(ctx context.Context, count int) *secureagg.Decryption {
	s := r.s
	holder := s.g.Tables[0].Party
	var others []string
	for _, q := range s.p.Spec().PartyNames() {
		if q != holder && s.keys.Index(q) != 0 {
			others = append(others, q)
		}
	}
	var first time.Time
	if end, ok := ctx.Deadline(); ok {
		first = time.Now().Add(time.Until(end) / 2)
	}
	sub := r.step.Sub("decrypt")
	return &secureagg.Decryption{Net: secureagg.StepNetwork(s.p, sub), Step: sub, Keys: s.keys, Root: holder, Decryptors: others,
		Ask: min(s.keys.Public().Threshold, len(others)), Count: count, Release: true, First: first}
}

// decryptRoot is the class holder's: it gathers every sender's bin sums,
// decrypts them jointly and opens each table's.
func (r *levelRun) decryptRoot(ctx context.Context, senders []string, segs map[string][]*paillier.Ciphertext, bins map[string]wireBins) error {
	s := r.s
	pk := &s.keys.Public().PublicKey
	sub := r.step.Sub("bins")
	for _, q := range senders {
		if q == s.p.Self() {
			continue
		}
		b, err := s.receive(ctx, sub, q, TypeBins)
		if err != nil {
			return err
		}
		var w wireBins
		if err := wire.Unmarshal(b, &w); err != nil {
			return fmt.Errorf("%w: bin sums from %s: %w", ErrWire, q, err)
		}
		if segs[q], err = pk.UnmarshalCiphertexts(w.C); err != nil {
			return fmt.Errorf("%w: bin sums from %s: %w", ErrWire, q, err)
		}
		bins[q] = w
	}
	var all []*paillier.Ciphertext
	for _, q := range senders {
		all = append(all, segs[q]...)
	}
	if len(all) == 0 {
		return nil
	}
	plain, _, err := r.decryption(ctx, len(all)).Decrypt(ctx, all)
	if err != nil {
		return err
	}
	for _, q := range senders {
		n := len(segs[q])
		pts, err := r.expand(bins[q], plain[:n])
		if err != nil {
			return fmt.Errorf("bin sums from %s: %w", q, err)
		}
		plain = plain[n:]
		for t := range s.g.Tables {
			if s.g.Tables[t].Party != q || s.plainTable(t) {
				continue
			}
			var es []binEntry
			for _, e := range bins[q].Entries {
				if e.Table == t {
					es = append(es, e)
				}
			}
			if r.plain[t], pts, err = openEntries(es, pts, numericCount(s.g, t), s.crypto.Unpack); err != nil {
				return fmt.Errorf("bin sums from %s: %w", q, err)
			}
		}
		if len(pts) != 0 {
			return fmt.Errorf("%w: bin sums from %s: ciphertexts without a bin", ErrWire, q)
		}
	}
	return nil
}

// compress moves the party's bin-sum ciphertexts several to one
// (compress.go) when it knows the class holder's packing layout: its own
// if it is the class holder, else one a down message told it this level.
func (r *levelRun) compress(own *wireBins, cts []*paillier.Ciphertext) ([]*paillier.Ciphertext, error) {
	lay := r.layout
	if r.s.isHolder() {
		lay = r.s.crypto.Layout
	}
	if lay.SlotBits == 0 || len(cts) == 0 {
		return cts, nil
	}
	bp, err := newBinPacker(&r.s.keys.Public().PublicKey, lay)
	if err != nil {
		return nil, err
	}
	widths, err := bp.widths(own.Entries)
	if err != nil {
		return nil, err
	}
	own.SlotBits = lay.SlotBits
	return bp.compress(cts, widths)
}

// expand is the class holder's inverse of a sender's compress: the
// plaintexts of w's ciphertexts, one per bin-sum ciphertext before it.
func (r *levelRun) expand(w wireBins, pts []*big.Int) ([]*big.Int, error) {
	if w.SlotBits == 0 {
		return pts, nil
	}
	lay := r.s.crypto.Layout
	if w.SlotBits != lay.SlotBits {
		return nil, fmt.Errorf("%w: bin sums compressed with another slot width", ErrWire)
	}
	bp, err := newBinPacker(&r.s.keys.Public().PublicKey, lay)
	if err != nil {
		return nil, err
	}
	widths, err := bp.widths(w.Entries)
	if err != nil {
		return nil, err
	}
	return bp.expand(pts, widths)
}

// share is a decryptor's part: it learns every other sender's count and
// digest, and vets the class holder's request against them.
func (r *levelRun) share(ctx context.Context, senders []string, ownC []byte) error {
	s := r.s
	sub := r.step.Sub("bins")
	digests := map[string]digestMsg{}
	count := 0
	for _, q := range senders {
		if q == s.p.Self() {
			digests[q] = digestMsg{Count: -1, D: secureagg.Digest(sub, q, ownC)}
			continue
		}
		b, err := s.receive(ctx, sub, q, TypeDigest)
		if err != nil {
			return err
		}
		var dm digestMsg
		if err := wire.Unmarshal(b, &dm); err != nil || dm.Count < 0 {
			return fmt.Errorf("%w: the digest from %s", ErrWire, q)
		}
		digests[q] = dm
		count += dm.Count
	}
	if c := digests[s.p.Self()]; c.Count == -1 {
		own, err := s.keys.Public().UnmarshalCiphertexts(ownC)
		if err != nil {
			return fmt.Errorf("boost: own bin sums: %w", err)
		}
		count += len(own)
		digests[s.p.Self()] = digestMsg{Count: len(own), D: c.D}
	}
	if count == 0 {
		return nil
	}
	pk := &s.keys.Public().PublicKey
	vet := func(cts []*paillier.Ciphertext) error {
		for _, q := range senders {
			dm := digests[q]
			seg := cts[:dm.Count]
			cts = cts[dm.Count:]
			b, err := pk.MarshalCiphertexts(seg)
			if err != nil {
				return fmt.Errorf("boost: marshal ciphertexts: %w", err)
			}
			if !bytes.Equal(dm.D, secureagg.Digest(sub, q, b)) {
				return fmt.Errorf("%w: party %s refuses to decrypt: the class holder asks values that are not the bin sums %s sent it (coordinator %s)",
					secureagg.ErrTampered, s.p.Self(), q, r.step.Coordinator)
			}
		}
		return nil
	}
	return r.decryption(ctx, count).Share(ctx, nil, vet)
}
