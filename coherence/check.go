package coherence

// The independent checker. It is written apart from the algorithms and
// shares no code with them (no tidsets, borders, tries or helpers): it
// reads the definitions of Xu, ch. 4 (Definitions 5, 6 and 8) as plainly as
// it can, so that a bug in an algorithm is not repeated here.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sort"
)

// ErrNotCohesion means a publication is not an (h,k,p)-cohesion of its
// database.
var ErrNotCohesion = errors.New("coherence: not an (h,k,p)-cohesion")

// Check verifies that pub is an (h,k,p)-cohesion of db (Definition 8): the
// same transactions in the same order, each with the items of one set S of
// public items removed and nothing else changed, and no mole (Definition
// 6): every public itemset γ of 1 to p items that some transaction of pub
// holds has Sup(γ) ≥ k and, for every private item s and every β ⊆ γ
// (∅ included), Sup(β ∪ {s}) ≤ h·Sup(β). Items are compared by label.
//
// It enumerates the public itemsets pub holds, up to p items, depth first
// over the transactions that hold each; with h = 1 and no bound on p, only
// the transactions' public parts need their support counted (every other
// itemset lies in one and has at least its support). The error says which
// condition fails and never names an item.
func Check(ctx context.Context, db *Labelled, pub *Database, prm Params) error {
	role, err := suppression(db, pub, ErrNotCohesion)
	if err != nil {
		return err
	}
	c := newChecker(pub, role, prm)
	if err := c.emptySet(); err != nil {
		return err
	}
	if prm.H >= 1 && (prm.P == 0 || prm.P >= c.longest) {
		return c.projections(ctx)
	}
	all := c.everyone()
	danger := make([]int, len(c.priv))
	for i := range danger {
		danger[i] = i
	}
	return c.visit(ctx, all, -1, 0, danger)
}

// suppression checks that pub is db with some public items suppressed:
// the same transactions in the same order, each with the items of one set
// S of public items removed and nothing else changed. It returns each
// label's role. Its errors wrap bad.
func suppression(db *Labelled, pub *Database, bad error) (map[string]Role, error) {
	if len(db.Trans) != len(pub.Trans) {
		return nil, fmt.Errorf("%w: %d transactions published for %d", bad, len(pub.Trans), len(db.Trans))
	}
	role := map[string]Role{}
	for i, lab := range db.Items {
		role[lab] = db.Roles[i]
	}
	// Structure: pub[t] is db[t] without the removed labels, in order.
	removed := map[string]bool{}
	for t := range db.Trans {
		j := 0
		out := pub.Trans[t]
		for _, it := range db.Trans[t] {
			lab := db.Items[it]
			if j < len(out) && pub.Items[out[j]] == lab {
				j++
				continue
			}
			removed[lab] = true
		}
		if j != len(out) {
			return nil, fmt.Errorf("%w: published transaction %d is not its original with items removed", bad, t+1)
		}
	}
	for t := range pub.Trans {
		for _, it := range pub.Trans[t] {
			if removed[pub.Items[it]] {
				return nil, fmt.Errorf("%w: an item is removed from some transactions and published in others (transaction %d)", bad, t+1)
			}
		}
	}
	for lab := range removed {
		if role[lab] != Public {
			return nil, fmt.Errorf("%w: a %s item is suppressed", bad, role[lab])
		}
	}
	return role, nil
}

// tset is a set of transactions: a bitset when dense, else a sorted list.
type tset struct {
	bits []uint64
	list []int32
	n    int
}

type checker struct {
	prm     Params
	num     int64     // h = num / 1e6
	trans   int       // transactions
	pubs    [][]int32 // per transaction, its public items (checker's numbering), ascending
	pub     []tset    // per public item, its transactions
	priv    []tset    // per private item, its transactions
	longest int       // the most public items of a transaction
	mark    []bool
}

func newChecker(pub *Database, role map[string]Role, prm Params) *checker {
	c := &checker{prm: prm, num: int64(math.Floor(prm.H*1e6 + 0.5)), trans: len(pub.Trans)}
	pubs, privs := &numbering{id: map[string]int32{}}, &numbering{id: map[string]int32{}}
	for t, tr := range pub.Trans {
		var p []int32
		for _, it := range tr {
			switch lab := pub.Items[it]; role[lab] {
			case Public:
				p = append(p, pubs.hold(lab, t))
			case Private:
				privs.hold(lab, t)
			}
		}
		sort.Slice(p, func(i, j int) bool { return p[i] < p[j] })
		c.pubs = append(c.pubs, p)
		c.longest = max(c.longest, len(p))
	}
	for _, l := range pubs.holders {
		c.pub = append(c.pub, c.make(l))
	}
	for _, l := range privs.holders {
		c.priv = append(c.priv, c.make(l))
	}
	c.mark = make([]bool, len(c.pub))
	return c
}

// numbering numbers labels as they come and lists each one's
// transactions.
type numbering struct {
	id      map[string]int32
	holders [][]int32
}

// hold records that transaction t holds lab and returns lab's number.
func (n *numbering) hold(lab string, t int) int32 {
	id, ok := n.id[lab]
	if !ok {
		id = int32(len(n.holders))
		n.id[lab] = id
		n.holders = append(n.holders, nil)
	}
	n.holders[id] = append(n.holders[id], int32(t))
	return id
}

// make turns a sorted list of transactions into a tset.
func (c *checker) make(l []int32) tset {
	if len(l)*32 <= c.trans {
		return tset{list: l, n: len(l)}
	}
	b := make([]uint64, (c.trans+63)/64)
	for _, t := range l {
		b[t/64] |= 1 << (t % 64)
	}
	return tset{bits: b, n: len(l)}
}

func (c *checker) everyone() tset {
	l := make([]int32, c.trans)
	for i := range l {
		l[i] = int32(i)
	}
	return c.make(l)
}

// and is a ∩ b.
func (c *checker) and(a, b tset) tset {
	if a.list == nil && a.bits == nil || b.list == nil && b.bits == nil {
		return tset{}
	}
	if a.bits != nil && b.bits != nil {
		out := make([]uint64, len(a.bits))
		n := 0
		for w := range out {
			out[w] = a.bits[w] & b.bits[w]
			n += bits.OnesCount64(out[w])
		}
		if n*32 > c.trans {
			return tset{bits: out, n: n}
		}
		var l []int32
		for w, x := range out {
			for ; x != 0; x &= x - 1 {
				l = append(l, int32(w*64+bits.TrailingZeros64(x)))
			}
		}
		return tset{list: l, n: n}
	}
	if a.list == nil {
		a, b = b, a
	}
	var l []int32
	for _, t := range a.list {
		if b.has(t) {
			l = append(l, t)
		}
	}
	return tset{list: l, n: len(l)}
}

func (s tset) has(t int32) bool {
	if s.bits != nil {
		return s.bits[t/64]&(1<<(t%64)) != 0
	}
	i := sort.Search(len(s.list), func(i int) bool { return s.list[i] >= t })
	return i < len(s.list) && s.list[i] == t
}

// emptySet checks ∅: at least k transactions, no private item in more than
// h of them (Theorem 3).
func (c *checker) emptySet() error {
	if c.trans < c.prm.K {
		return fmt.Errorf("%w: fewer than k transactions", ErrNotCohesion)
	}
	for _, s := range c.priv {
		if int64(s.n)*1_000_000 > c.num*int64(c.trans) {
			return fmt.Errorf("%w: a private item is in more than a fraction h of the transactions", ErrNotCohesion)
		}
	}
	return nil
}

// visit checks every public itemset that extends the itemset held by ts
// (of size items, its last public item last) by later public items.
// danger lists the private items that may still breach h below: for every
// superset δ of the itemset, Sup(δ ∪ s) ≤ Sup(itemset ∪ s), and a breach
// at δ needs Sup(δ ∪ s) > h·Sup(δ) ≥ h·k, so an item held with the
// itemset by at most h·k transactions is safe below it.
func (c *checker) visit(ctx context.Context, ts tset, last int32, size int, danger []int) error {
	if c.prm.P != 0 && size >= c.prm.P {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var next []int32
	if ts.list != nil {
		for _, t := range ts.list {
			for _, x := range c.pubs[t] {
				if x > last && !c.mark[x] {
					c.mark[x] = true
					next = append(next, x)
				}
			}
		}
		for _, x := range next {
			c.mark[x] = false
		}
		sort.Slice(next, func(i, j int) bool { return next[i] < next[j] })
	} else {
		for x := last + 1; x < int32(len(c.pub)); x++ {
			next = append(next, x)
		}
	}
	for _, x := range next {
		held := c.and(ts, c.pub[x])
		if held.n == 0 {
			continue
		}
		if held.n < c.prm.K {
			return fmt.Errorf("%w: a public itemset of %d items is held by fewer than k transactions", ErrNotCohesion, size+1)
		}
		var still []int
		for _, s := range danger {
			both := c.and(held, c.priv[s]).n
			if int64(both)*1_000_000 > c.num*int64(held.n) {
				return fmt.Errorf("%w: a public itemset of %d items has breach probability above h", ErrNotCohesion, size+1)
			}
			if int64(both)*1_000_000 > c.num*int64(c.prm.K) {
				still = append(still, s)
			}
		}
		if err := c.visit(ctx, held, x, size+1, still); err != nil {
			return err
		}
	}
	return nil
}

// projections checks, for h = 1 and p unbounded, that each transaction's
// public part is held by at least k transactions: every public itemset
// lies in one and has at least its support.
func (c *checker) projections(ctx context.Context) error {
	done := map[string]bool{}
	for t, p := range c.pubs {
		if len(p) == 0 {
			continue
		}
		key := fmt.Sprint(p)
		if done[key] {
			continue
		}
		done[key] = true
		if t%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		held := c.pub[p[0]]
		for _, x := range p[1:] {
			held = c.and(held, c.pub[x])
		}
		if held.n < c.prm.K {
			return fmt.Errorf("%w: a public itemset of %d items is held by fewer than k transactions", ErrNotCohesion, len(p))
		}
	}
	return nil
}

// ErrNotKAnonymous means a publication is not a k-anonymous suppression of
// its database.
var ErrNotKAnonymous = errors.New("coherence: not k-anonymous over the public items")

// CheckKAnonymous verifies what KAnonymizer claims: pub is db with some
// public items suppressed (as Check reads it) and every transaction of pub
// has the same public items as at least k − 1 others (k-anonymity with
// the public items as the quasi-identifier, absence included). Like Check
// it shares no code with the algorithm; its errors never name an item.
func CheckKAnonymous(db *Labelled, pub *Database, k int) error {
	role, err := suppression(db, pub, ErrNotKAnonymous)
	if err != nil {
		return err
	}
	classes := map[string]int{}
	keys := make([]string, len(pub.Trans))
	for t, tr := range pub.Trans {
		var labs []string
		for _, it := range tr {
			if lab := pub.Items[it]; role[lab] == Public {
				labs = append(labs, lab)
			}
		}
		sort.Strings(labs)
		// Labels may hold any byte but NUL separates them unambiguously
		// only if none holds NUL: length-prefix each instead.
		var key []byte
		for _, l := range labs {
			key = fmt.Appendf(key, "%d:%s", len(l), l)
		}
		keys[t] = string(key)
		classes[keys[t]]++
	}
	for t, key := range keys {
		if classes[key] < k {
			return fmt.Errorf("%w: transaction %d shares its public items with %d transactions, fewer than k", ErrNotKAnonymous, t+1, classes[key])
		}
	}
	return nil
}
