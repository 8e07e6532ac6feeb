package coherence

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// ErrIneligible means the database has no (h,k,p)-cohesion at all
// (Theorem 3): it has fewer than k transactions, or a private item occurs in
// more than a fraction h of them. No suppression of public items can help.
var ErrIneligible = errors.New("coherence: no (h,k,p)-cohesion exists")

// The two ways to fail Theorem 3, each an ErrIneligible.
var (
	ErrTooFew      = fmt.Errorf("%w: the database has fewer than k transactions", ErrIneligible)
	ErrBreachEmpty = fmt.Errorf("%w: a private item occurs in more than a fraction h of the transactions (BPr(∅) > h)", ErrIneligible)
)

// problem is a labelled database prepared for the algorithms: transactions
// renumbered so that those holding the same private items are adjacent
// (tid ranges), each item's tids, supports.
type problem struct {
	db  *Labelled
	prm Params
	n   int
	sup []int
	// trans[t] holds the items of transaction t (renumbered), ascending.
	trans [][]int32
	// tids[v] holds item v's transactions, ascending.
	tids [][]uint32
	// priv lists the private items that occur; privAt[v] is v's index in
	// it, or -1; ranges[i] are the tids holding priv[i].
	priv   []int32
	privAt []int32
	ranges [][]tidRange
}

// tidRange is the tids lo..hi-1.
type tidRange struct{ lo, hi uint32 }

func newProblem(db *Labelled, prm Params) (*problem, error) {
	if err := prm.check(); err != nil {
		return nil, err
	}
	if len(db.Roles) != len(db.Items) {
		return nil, fmt.Errorf("%w: %d roles for %d items", ErrRoles, len(db.Roles), len(db.Items))
	}
	if len(db.Trans) >= 1<<31 {
		return nil, fmt.Errorf("%w: more than 2^31 transactions", ErrFormat)
	}
	pr := &problem{db: db, prm: prm, n: len(db.Trans), sup: db.Supports()}
	pr.privAt = make([]int32, len(db.Items))
	for v := range pr.privAt {
		pr.privAt[v] = -1
		if db.Roles[v] == Private && pr.sup[v] > 0 {
			pr.privAt[v] = int32(len(pr.priv))
			pr.priv = append(pr.priv, int32(v))
		}
	}
	// Order transactions by their private items, so that each private
	// item's transactions are few ranges of tids.
	sorted := make([][]int32, pr.n)
	sig := make([][]int32, pr.n)
	order := make([]int32, pr.n)
	for t, tr := range db.Trans {
		sorted[t] = slices.Sorted(slices.Values(tr))
		for _, it := range sorted[t] {
			if pr.privAt[it] >= 0 {
				sig[t] = append(sig[t], pr.privAt[it])
			}
		}
		order[t] = int32(t)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return slices.Compare(sig[a], sig[b]) })
	pr.trans = make([][]int32, pr.n)
	pr.ranges = make([][]tidRange, len(pr.priv))
	pr.tids = make([][]uint32, len(db.Items))
	for v, s := range pr.sup {
		pr.tids[v] = make([]uint32, 0, s)
	}
	for t, o := range order {
		pr.trans[t] = sorted[o]
		for _, it := range sorted[o] {
			pr.tids[it] = append(pr.tids[it], uint32(t))
		}
		for _, s := range sig[o] {
			r := pr.ranges[s]
			if n := len(r); n > 0 && r[n-1].hi == uint32(t) {
				r[n-1].hi++
			} else {
				pr.ranges[s] = append(r, tidRange{uint32(t), uint32(t) + 1})
			}
		}
	}
	return pr, nil
}

// eligible applies Theorem 3: ∅ must be a non-mole.
func (pr *problem) eligible() error {
	if pr.n < pr.prm.K {
		return ErrTooFew
	}
	for _, s := range pr.priv {
		if pr.prm.breaches(pr.sup[s], pr.n) {
			return ErrBreachEmpty
		}
	}
	return nil
}

// privCount is Sup(β ∪ {priv[s]}) for one private item.
type privCount struct {
	s int32
	n int32
}

// singles classifies the public items that occur: size-1 moles (Sup < k
// or Pr(s|v) > h for a private s; Observation 2) and non-moles, each
// non-mole with the private items that may still breach h in a superset
// (those with Sup(v ∪ s) > h·k: see live).
func (pr *problem) singles() (moles []int32, nonMoles []int32, live [][]privCount) {
	cnt := make([]int32, len(pr.priv))
	var touched []int32
	for v, r := range pr.db.Roles {
		if r != Public || pr.sup[v] == 0 {
			continue
		}
		if pr.sup[v] < pr.prm.K {
			moles = append(moles, int32(v))
			continue
		}
		touched = touched[:0]
		for _, t := range pr.tids[v] {
			for _, it := range pr.trans[t] {
				if s := pr.privAt[it]; s >= 0 {
					if cnt[s] == 0 {
						touched = append(touched, s)
					}
					cnt[s]++
				}
			}
		}
		slices.Sort(touched)
		mole := false
		var lv []privCount
		for _, s := range touched {
			c := int(cnt[s])
			cnt[s] = 0
			if pr.prm.breaches(c, pr.sup[v]) {
				mole = true
			}
			if pr.live(c) {
				lv = append(lv, privCount{s, int32(c)})
			}
		}
		if mole {
			moles = append(moles, int32(v))
			continue
		}
		nonMoles = append(nonMoles, int32(v))
		live = append(live, lv)
	}
	return moles, nonMoles, live
}

// live reports whether a private item held by count transactions of a
// non-mole γ may still breach h in a superset β of γ: a breach needs
// Sup(β ∪ s) > h·Sup(β) ≥ h·k, and Sup(β ∪ s) ≤ count. With h = 1 nothing
// can breach.
func (pr *problem) live(count int) bool {
	return pr.prm.hNum() < hDen && pr.prm.breaches(count, pr.prm.K)
}

// byRank orders items by ascending support, then id: the order the miners
// extend itemsets in.
func (pr *problem) byRank(items []int32) {
	slices.SortFunc(items, func(a, b int32) int {
		return cmp.Or(cmp.Compare(pr.sup[a], pr.sup[b]), cmp.Compare(a, b))
	})
}
