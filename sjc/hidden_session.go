package sjc

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"

	"github.com/cloudflare/circl/group"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/sjc/internal/seccmp"
	"github.com/cohortdm/cohort/wire"
)

// The party's side of a choose step with hidden gains (hidden.go), on
// sub-channel compare of the step. Every party holding a table (a
// holder) draws a fresh comparison key and a fresh joint-key share. Then,
// per peer holder:
//
//  1. TypeCompareBits: its joint-key share, its comparison public key and,
//     for every comparison in which it holds the earlier table A and the
//     peer the later table B, the encrypted bits of its input x.
//  2. TypeCompareBlinded (B to A): the blinded comparisons and, per
//     comparison, E_K(δ), B's coin under the joint key K.
//  3. TypeCompareResult (A to B): per comparison E_K(b), b = β ⊕ δ, which
//     A makes from its β and E_K(δ).
//  4. TypeCompareCounts (to the next holder in name order, coBlinder): its
//     tables' blinded counts (hidden.go's count), which that party blinds
//     again.
//  5. TypeCompareCoBlinded: the C1 halves of the counts it co-blinded, so
//     that every holder can add its partial decryption to its output.
//
// Outputs go to the coordinator: the C2 halves of the counts it
// co-blinded and its partial decryptions of every table's count
// (hiddenNode).

// compareMsg is one of the messages above; fields a message does not
// carry are empty. Disclosure: score (gains under encryption, values that
// decrypt to a coin-masked bit, bits under a key no party holds).
type compareMsg struct {
	Share []byte `msgpack:"share,omitempty"` // joint-key share h_p
	Key   []byte `msgpack:"key,omitempty"`   // comparison public key
	Cts   []byte `msgpack:"cts,omitempty"`   // ciphertexts, seccmp encoding
	Coins []byte `msgpack:"coins,omitempty"` // E_K(δ) per comparison
	C1    []byte `msgpack:"c1,omitempty"`    // elements, seccmp encoding
}

// comparison is one pair at one open node, by position.
type comparison struct{ node, pair int }

// hiddenRun is one party's state during a choose step with hidden gains.
type hiddenRun struct {
	s      *session
	sub    job.Step
	nopen  int
	pairs  []tablePair
	vals   [][]uint64 // per node, per table (own tables only)
	cmpKey *seccmp.PrivateKey
	share  *seccmp.PrivateKey
	joint  seccmp.PublicKey
	peers  []string
	nbits  int                              // the comparisons' input length (compareBits)
	bits   map[comparison]seccmp.Ciphertext // E_K(b) of every cross-party comparison of the party
}

// chooseHidden is the choose step with hidden gains.
func (s *session) chooseHidden(ctx context.Context, step job.Step, gr *growth, a chooseArgs) (offersOutput, error) {
	if len(s.own) == 0 {
		return offersOutput{}, nil
	}
	fr, err := s.frontiers(step, gr)
	if err != nil {
		return offersOutput{}, err
	}
	h := &hiddenRun{s: s, sub: step.Sub("compare"), nopen: len(a.Open), pairs: tablePairs(s.g), vals: make([][]uint64, len(a.Open)),
		cmpKey: seccmp.GenerateKey(), share: seccmp.GenerateKey(), peers: s.g.PartiesBut(s.p.Self()), bits: map[comparison]seccmp.Ciphertext{}}
	nbits, maxValue := compareBits(len(gr.labels))
	h.nbits = nbits
	for i, id := range a.Open {
		h.vals[i] = make([]uint64, len(s.g.Tables))
		for _, t := range s.own {
			h.vals[i][t] = min(hiddenValue(fr.nodes[id][t]), maxValue) // a gain above log2(labels) is rounding
		}
	}
	for _, phase := range []func(context.Context) error{h.sendBits, h.blind, h.results, h.receiveResults} {
		if err := phase(ctx); err != nil {
			return offersOutput{}, err
		}
	}
	return h.output(ctx)
}

// comparisons lists the comparisons of the step in which party enc holds
// the earlier table (and encrypts) and party ev the later (and evaluates).
func (h *hiddenRun) comparisons(enc, ev string) []comparison {
	var out []comparison
	for i := range h.nopen {
		for k, pr := range h.pairs {
			if h.s.g.Tables[pr.A].Party == enc && h.s.g.Tables[pr.B].Party == ev {
				out = append(out, comparison{node: i, pair: k})
			}
		}
	}
	return out
}

// sendBits is message 1 to every peer holder.
func (h *hiddenRun) sendBits(ctx context.Context) error {
	share, err := h.share.Public().AppendPublic(nil)
	if err != nil {
		return err
	}
	key, err := h.cmpKey.Public().AppendPublic(nil)
	if err != nil {
		return err
	}
	for _, q := range h.peers {
		var cts []byte
		for _, c := range h.comparisons(h.s.p.Self(), q) {
			x, _ := compareInputs(h.vals[c.node][h.pairs[c.pair].A], 0)
			if cts, err = seccmp.AppendCiphertexts(cts, h.cmpKey.EncryptBits(x, h.nbits)); err != nil {
				return err
			}
		}
		if err := h.send(ctx, q, TypeCompareBits, &compareMsg{Share: share, Key: key, Cts: cts}); err != nil {
			return err
		}
	}
	return nil
}

// blind receives every peer's message 1, makes the joint key, and answers
// each peer's comparisons with message 2.
func (h *hiddenRun) blind(ctx context.Context) error {
	msgs := make([]*compareMsg, len(h.peers))
	shares := []seccmp.PublicKey{h.share.Public()}
	for j, p := range h.peers {
		m, err := h.receive(ctx, p, TypeCompareBits)
		if err != nil {
			return err
		}
		sh, err := seccmp.ParsePublic(m.Share)
		if err != nil {
			return fmt.Errorf("comparison bits from %s: %w", p, err)
		}
		msgs[j], shares = m, append(shares, sh)
	}
	h.joint = seccmp.Joint(shares)
	for j, p := range h.peers {
		if err := h.blindFor(ctx, p, msgs[j]); err != nil {
			return err
		}
	}
	return nil
}

// blindFor answers peer p's message 1 with message 2 (and keeps nothing
// but the coins' encryptions' future results, which message 3 brings).
func (h *hiddenRun) blindFor(ctx context.Context, p string, m *compareMsg) error {
	cs := h.comparisons(p, h.s.p.Self())
	pub, err := seccmp.ParsePublic(m.Key)
	if err != nil {
		return fmt.Errorf("comparison bits from %s: %w", p, err)
	}
	xs, err := seccmp.ParseCiphertexts(m.Cts, len(cs)*h.nbits)
	if err != nil {
		return fmt.Errorf("comparison bits from %s: %w", p, err)
	}
	if len(cs) == 0 {
		return nil
	}
	coins := make([]byte, len(cs))
	if _, err := rand.Read(coins); err != nil {
		return fmt.Errorf("sjc: randomness: %w", err)
	}
	var reply, deltas []byte
	for j, c := range cs {
		_, y := compareInputs(0, h.vals[c.node][h.pairs[c.pair].B])
		delta := coins[j]&1 == 1
		back, err := seccmp.Evaluate(pub, xs[j*h.nbits:(j+1)*h.nbits], y, delta)
		if err != nil {
			return fmt.Errorf("comparison bits from %s: %w", p, err)
		}
		if reply, err = seccmp.AppendCiphertexts(reply, back); err != nil {
			return err
		}
		if deltas, err = seccmp.AppendCiphertexts(deltas, []seccmp.Ciphertext{h.joint.Encrypt(uint64(coins[j] & 1))}); err != nil {
			return err
		}
	}
	return h.send(ctx, p, TypeCompareBlinded, &compareMsg{Cts: reply, Coins: deltas})
}

// results receives message 2 from every peer the party encrypted for,
// takes β from the blinded values and answers with message 3: E_K(β ⊕ δ).
func (h *hiddenRun) results(ctx context.Context) error {
	for _, q := range h.peers {
		cs := h.comparisons(h.s.p.Self(), q)
		if len(cs) == 0 {
			continue
		}
		m, err := h.receive(ctx, q, TypeCompareBlinded)
		if err != nil {
			return err
		}
		back, err := seccmp.ParseCiphertexts(m.Cts, len(cs)*h.nbits)
		if err != nil {
			return fmt.Errorf("blinded comparisons from %s: %w", q, err)
		}
		deltas, err := seccmp.ParseCiphertexts(m.Coins, len(cs))
		if err != nil {
			return fmt.Errorf("blinded comparisons from %s: %w", q, err)
		}
		var bits []byte
		for j, c := range cs {
			beta, err := h.cmpKey.AnyZero(back[j*h.nbits : (j+1)*h.nbits])
			if err != nil {
				return fmt.Errorf("blinded comparisons from %s: %w", q, err)
			}
			b := h.joint.Rerandomize(seccmp.XorPlain(deltas[j], beta))
			h.bits[c] = b
			if bits, err = seccmp.AppendCiphertexts(bits, []seccmp.Ciphertext{b}); err != nil {
				return err
			}
		}
		if err := h.send(ctx, q, TypeCompareResult, &compareMsg{Cts: bits}); err != nil {
			return err
		}
	}
	return nil
}

// receiveResults receives message 3 from every peer the party evaluated
// for.
func (h *hiddenRun) receiveResults(ctx context.Context) error {
	for _, p := range h.peers {
		cs := h.comparisons(p, h.s.p.Self())
		if len(cs) == 0 {
			continue
		}
		m, err := h.receive(ctx, p, TypeCompareResult)
		if err != nil {
			return err
		}
		bits, err := seccmp.ParseCiphertexts(m.Cts, len(cs))
		if err != nil {
			return fmt.Errorf("comparison results from %s: %w", p, err)
		}
		for j, c := range cs {
			h.bits[c] = bits[j]
		}
	}
	return nil
}

// count is table t's blinded count at open node i (hidden.go).
func (h *hiddenRun) count(i, t int) seccmp.Ciphertext {
	var plain int64
	if h.vals[i][t] == 0 {
		plain++ // no useful split
	}
	var enc []seccmp.Ciphertext
	for k, pr := range h.pairs {
		if pr.A != t && pr.B != t {
			continue
		}
		if h.s.owns(pr.A) && h.s.owns(pr.B) {
			beats := h.vals[i][pr.B] > h.vals[i][pr.A]+epsUnits
			if pr.A == t && beats || pr.B == t && !beats {
				plain++
			}
			continue
		}
		b := h.bits[comparison{node: i, pair: k}]
		if pr.B == t {
			b = seccmp.AddPlain(seccmp.Neg(b), 1) // 1 − b
		}
		enc = append(enc, b)
	}
	c := h.joint.Encrypt(uint64(plain))
	for _, e := range enc {
		c = seccmp.Add(c, e)
	}
	return h.joint.Blind(c)
}

// output blinds the counts a second time at another party and collects
// the partial decryptions: each party's own blinding factor would let it,
// were it the coordinator, unblind its own tables' counts (how many
// comparisons each lost), so every count is blinded again by the next
// holder after its owner in name order (coBlinder), who outputs its C2
// half. Message 4 (TypeCompareCounts) takes the owner's counts to that
// party; message 5 (TypeCompareCoBlinded) the co-blinded C1 halves to
// every holder, for its partial decryptions.
func (h *hiddenRun) output(ctx context.Context) (offersOutput, error) {
	nt := len(h.s.g.Tables)
	self := h.s.p.Self()
	out := offersOutput{Hidden: make([]hiddenNode, h.nopen)}
	for i := range out.Hidden {
		out.Hidden[i] = hiddenNode{C2: make([][]byte, nt), Partials: make([][]byte, nt)}
	}
	var mine []seccmp.Ciphertext
	for i := range h.nopen {
		for _, t := range h.s.own {
			mine = append(mine, h.count(i, t))
		}
	}
	prev, counts := previousHolder(h.s.g, self), mine
	if prev != self {
		enc, err := seccmp.AppendCiphertexts(nil, mine)
		if err != nil {
			return offersOutput{}, err
		}
		if err := h.send(ctx, coBlinder(h.s.g, self), TypeCompareCounts, &compareMsg{Cts: enc}); err != nil {
			return offersOutput{}, err
		}
		m, err := h.receive(ctx, prev, TypeCompareCounts)
		if err != nil {
			return offersOutput{}, err
		}
		if counts, err = seccmp.ParseCiphertexts(m.Cts, h.nopen*len(tablesOf(h.s.g, prev))); err != nil {
			return offersOutput{}, fmt.Errorf("counts from %s: %w", prev, err)
		}
	}
	c1 := make([][]group.Element, h.nopen) // per node, per table
	for i := range c1 {
		c1[i] = make([]group.Element, nt)
	}
	var mineC1 []group.Element
	theirs := tablesOf(h.s.g, prev)
	for k, c := range counts {
		c = h.joint.Blind(c)
		i, t := k/len(theirs), theirs[k%len(theirs)]
		c1[i][t], mineC1 = c.C1, append(mineC1, c.C1)
		var err error
		if out.Hidden[i].C2[t], err = seccmp.AppendElements(nil, []group.Element{c.C2}); err != nil {
			return offersOutput{}, err
		}
	}
	if err := h.exchangeC1(ctx, mineC1, c1); err != nil {
		return offersOutput{}, err
	}
	for i := range h.nopen {
		for t := range nt {
			var err error
			if out.Hidden[i].Partials[t], err = seccmp.AppendElements(nil, []group.Element{h.share.PartialOf(c1[i][t])}); err != nil {
				return offersOutput{}, err
			}
		}
	}
	return out, nil
}

// exchangeC1 sends message 5 (the C1 halves the party co-blinded) to
// every peer and fills c1 with every peer's.
func (h *hiddenRun) exchangeC1(ctx context.Context, mine []group.Element, c1 [][]group.Element) error {
	enc, err := seccmp.AppendElements(nil, mine)
	if err != nil {
		return err
	}
	for _, q := range h.peers {
		if err := h.send(ctx, q, TypeCompareCoBlinded, &compareMsg{C1: enc}); err != nil {
			return err
		}
	}
	for _, q := range h.peers {
		m, err := h.receive(ctx, q, TypeCompareCoBlinded)
		if err != nil {
			return err
		}
		theirs := tablesOf(h.s.g, previousHolder(h.s.g, q))
		es, err := seccmp.ParseElements(m.C1, h.nopen*len(theirs))
		if err != nil {
			return fmt.Errorf("counts from %s: %w", q, err)
		}
		for k, e := range es {
			c1[k/len(theirs)][theirs[k%len(theirs)]] = e
		}
	}
	return nil
}

// coBlinder is the party that blinds party p's counts a second time: the
// next party holding a table after p in name order, cyclically (p itself
// when it is the only one).
func coBlinder(g *Graph, p string) string {
	hs := g.PartiesBut("")
	return hs[(slices.Index(hs, p)+1)%len(hs)]
}

// previousHolder is the party whose counts p co-blinds.
func previousHolder(g *Graph, p string) string {
	hs := g.PartiesBut("")
	return hs[(slices.Index(hs, p)+len(hs)-1)%len(hs)]
}

func (h *hiddenRun) send(ctx context.Context, to, typ string, m *compareMsg) error {
	b, err := wire.Marshal(m)
	if err != nil {
		return err
	}
	if err := h.s.p.Send(ctx, to, h.sub.Message(h.s.p.Self(), typ, b), wire.DiscloseScore); err != nil {
		return fmt.Errorf("%w: to %s: %w", errNotDelivered, to, err)
	}
	return nil
}

func (h *hiddenRun) receive(ctx context.Context, from, typ string) (*compareMsg, error) {
	m, err := h.s.p.Receive(ctx, from, h.sub.Key(typ))
	if err != nil {
		return nil, fmt.Errorf("%w: from %s: %w", errNoMessage, from, err)
	}
	var cm compareMsg
	if err := wire.Unmarshal(m.Body, &cm); err != nil {
		return nil, fmt.Errorf("comparison from %s: %w", from, err)
	}
	return &cm, nil
}

// tablesOf is party p's tables, in graph order.
func tablesOf(g *Graph, p string) []int {
	var out []int
	for t, info := range g.Tables {
		if info.Party == p {
			out = append(out, t)
		}
	}
	return out
}
