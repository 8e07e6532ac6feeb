package coherence

import (
	"context"
	"slices"
)

// MineStats describe one search for minimal moles.
type MineStats struct {
	// NonMoles is how many non-moles (of size 1 to p) the search met.
	NonMoles int
	// Candidates is how many itemsets it counted the support of.
	Candidates int
	// Horizontal is how many of the expansions delivered occurrences from
	// the transactions instead of intersecting tidsets.
	Horizontal, Vertical int
}

// minimalMoles finds every minimal mole of size 2..p (Definition 9) among
// the public items that are non-moles on their own (Xu, ch. 4, §4.3.1,
// Figure 13 with two corrections: a candidate must have every immediate
// subset among the non-moles, not merely none among the minimal moles,
// and a candidate no transaction holds is no mole).
//
// It walks the lattice depth first: a node is a non-mole Q and its
// children the non-moles Q ∪ {y}, y after Q's items in the order of
// ascending support. Children are visited last item first; in that order
// every immediate subset of a candidate Q ∪ {y} has been visited before
// the candidate is formed (it differs from Q ∪ {y} at the first item it
// lacks, where it holds a later item), so the non-moles found so far, kept
// in a trie, answer the subset test. Only generators are kept: a candidate
// with the support of an immediate subset is neither a minimal mole nor
// under one (every transaction of the subset holds the missing item, so
// dropping that item from a superset changes neither its cohort nor its
// breach, and a mole stays a mole), and neither is an item in every
// transaction. A candidate's tidset is either the intersection of two
// siblings' tidsets (bitsets when dense, sorted lists when sparse) or,
// when cheaper, delivered for all of Q's candidates at once by a pass over
// Q's transactions. Since every immediate subset of a candidate β is a
// non-mole, BPr(β) > h exactly when Pr(s|β) > h for a private s; only
// private items that could still breach h are counted (see problem.live),
// each over the tid ranges that hold it.
func (pr *problem) minimalMoles(ctx context.Context, items []int32, live [][]privCount) (*Itemsets, MineStats, error) {
	m := &miner{pr: pr, ctx: ctx, moles: &Itemsets{}}
	if len(items) == 0 || !fits(2, pr.prm.P) {
		return m.moles, m.stats, nil
	}
	type ranked struct {
		item int32
		live []privCount
	}
	var rs []ranked
	for i, it := range items {
		if pr.sup[it] < pr.n { // an item in every transaction is in no minimal mole
			rs = append(rs, ranked{it, live[i]})
		}
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		if pr.sup[a.item] != pr.sup[b.item] {
			return pr.sup[a.item] - pr.sup[b.item]
		}
		return int(a.item - b.item)
	})
	m.item = make([]int32, len(rs))
	rank := make([]int32, len(pr.db.Items))
	for i := range rank {
		rank[i] = -1
	}
	root := make([]entry, len(rs))
	for r, x := range rs {
		m.item[r] = x.item
		rank[x.item] = int32(r)
		root[r] = entry{rank: int32(r), ts: settle(listSet(pr.tids[x.item]), pr.n), live: x.live}
	}
	m.horiz = make([][]int32, pr.n)
	total := 0
	for t, tr := range pr.trans {
		for _, it := range tr {
			if r := rank[it]; r >= 0 {
				m.horiz[t] = append(m.horiz[t], r)
			}
		}
		slices.Sort(m.horiz[t])
		total += len(m.horiz[t])
	}
	m.avgLen = max(1, total/max(1, pr.n))
	m.pos = make([]int32, len(rs))
	for i := range m.pos {
		m.pos[i] = -1
	}
	m.occ = make([][]uint32, len(rs))
	m.trie.init(len(rs))
	for r := range root {
		m.trie.sup[r+1] = int32(root[r].ts.sup)
	}
	for r := range root {
		root[r].node = int32(r + 1)
	}
	m.stats.NonMoles = len(rs)
	err := m.grow(nil, []int32{0}, root)
	return m.moles, m.stats, err
}

type miner struct {
	pr      *problem
	ctx     context.Context
	item    []int32   // rank → item
	horiz   [][]int32 // per tid: the ranks of its items, ascending
	avgLen  int
	pos     []int32    // scratch: rank → index among the current candidates
	occ     [][]uint32 // scratch: delivered tids per candidate
	trie    trie
	moles   *Itemsets
	stats   MineStats
	buf     []int32
	touched []int
	scratch scratch
}

// entry is a non-mole Q ∪ {rank} among its siblings.
type entry struct {
	rank int32
	ts   tidset
	live []privCount // private items that may still breach h, by index
	node int32       // its trie node, 0 when not kept
}

// grow visits the children of the non-mole prefix (whose trie path is
// path), ext, last first.
func (m *miner) grow(prefix, path []int32, ext []entry) error {
	for i := len(ext) - 2; i >= 0; i-- {
		if !fits(len(prefix)+2, m.pr.prm.P) {
			return nil
		}
		if err := m.ctx.Err(); err != nil {
			return err
		}
		q := &ext[i]
		children := m.expand(prefix, path, q, ext[i+1:])
		if len(children) == 0 {
			continue
		}
		sub := append(slices.Clip(prefix), q.rank)
		if err := m.grow(sub, append(slices.Clip(path), q.node), children); err != nil {
			return err
		}
	}
	return nil
}

// expand forms the candidates prefix ∪ {q, c} for the siblings c after q,
// records the minimal moles among them and returns the non-moles (sorted
// by rank) when they may be extended further.
func (m *miner) expand(prefix, path []int32, q *entry, cands []entry) []entry {
	size := len(prefix) + 2
	keep := fits(size+1, m.pr.prm.P)
	// The immediate subsets that drop a prefix item: their nodes' children
	// are the candidates' last items that may pass.
	subs := make([]int32, len(prefix))
	for j := range prefix {
		x := path[j]
		for _, r := range prefix[j+1:] {
			if x = m.trie.child(x, r); x == 0 {
				return nil
			}
		}
		if x = m.trie.child(x, q.rank); x == 0 {
			return nil
		}
		subs[j] = x
	}
	// passes reports whether those subsets are non-mole generators, and
	// the least support among them.
	passes := func(r int32) (bool, int) {
		least := int(^uint(0) >> 1)
		for _, x := range subs {
			y := m.trie.child(x, r)
			if y == 0 {
				return false, 0
			}
			least = min(least, int(m.trie.sup[y]))
		}
		return true, least
	}
	var children []entry
	m.candidates(q, cands, passes, keep, func(i int, ts tidset, least int) {
		c := &cands[i]
		m.stats.Candidates++
		if ts.sup == 0 || ts.sup == min(least, q.ts.sup, c.ts.sup) {
			return // held by no transaction, or not a generator
		}
		if ts.sup < m.pr.prm.K {
			m.addMole(prefix, q.rank, c.rank)
			return
		}
		lv, breach := m.ratio(ts, q.live, c.live)
		if breach {
			m.addMole(prefix, q.rank, c.rank)
			return
		}
		m.stats.NonMoles++
		if keep {
			children = append(children, entry{rank: c.rank, ts: ts, live: lv})
		}
	})
	if keep && len(children) > 0 {
		first := m.trie.add(q.node, len(children))
		for i := range children {
			children[i].node = first + int32(i)
			m.trie.rank[first+int32(i)] = children[i].rank
			m.trie.sup[first+int32(i)] = int32(children[i].ts.sup)
		}
	}
	return children
}

// candidates calls visit with the tidset of q ∪ c for each candidate c
// that passes (its index in cands, and the least support passes found), by
// the cheaper of intersection and delivery. Unless keep, the tidset lives
// in scratch space until visit returns.
func (m *miner) candidates(q *entry, cands []entry, passes func(int32) (bool, int), keep bool, visit func(int, tidset, int)) {
	vcost := 0
	for i := range cands {
		vcost += intersectCost(q.ts, cands[i].ts)
	}
	if vcost <= q.ts.sup*m.avgLen {
		m.stats.Vertical++
		for i := range cands {
			if ok, l := passes(cands[i].rank); ok {
				if keep {
					visit(i, intersect(q.ts, cands[i].ts, m.pr.n), l)
				} else {
					visit(i, m.scratch.intersect(q.ts, cands[i].ts), l)
				}
			}
		}
		return
	}
	m.stats.Horizontal++
	for i := range cands {
		m.pos[cands[i].rank] = int32(i)
	}
	touched := m.touched[:0]
	q.ts.each(func(t uint32) {
		row := m.horiz[t]
		start, _ := slices.BinarySearch(row, q.rank+1)
		for _, r := range row[start:] {
			if x := m.pos[r]; x >= 0 {
				if len(m.occ[x]) == 0 {
					touched = append(touched, int(x))
				}
				m.occ[x] = append(m.occ[x], t)
			}
		}
	})
	for i := range cands {
		m.pos[cands[i].rank] = -1
	}
	slices.Sort(touched)
	for _, i := range touched {
		if ok, l := passes(cands[i].rank); ok {
			if keep {
				visit(i, settle(listSet(slices.Clone(m.occ[i])), m.pr.n), l)
			} else {
				visit(i, listSet(m.occ[i]), l)
			}
		}
		m.occ[i] = m.occ[i][:0]
	}
	m.touched = touched
}

// ratio counts, for the private items that may breach in both parents,
// Sup(β ∪ s) over β's tidset ts: breach when one exceeds h·Sup(β), else the
// ones that may still breach in a superset.
func (m *miner) ratio(ts tidset, a, b []privCount) ([]privCount, bool) {
	var live []privCount
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i].s < b[j].s:
			i++
		case a[i].s > b[j].s:
			j++
		default:
			s := a[i].s
			c := countIn(ts, m.pr.ranges[s])
			if m.pr.prm.breaches(c, ts.sup) {
				return nil, true
			}
			if m.pr.live(c) {
				live = append(live, privCount{s, int32(c)})
			}
			i++
			j++
		}
	}
	return live, false
}

func (m *miner) addMole(prefix []int32, q, c int32) {
	m.buf = m.buf[:0]
	for _, r := range prefix {
		m.buf = append(m.buf, m.item[r])
	}
	m.buf = append(m.buf, m.item[q], m.item[c])
	m.moles.Add(m.buf)
}

// trie holds the non-moles found so far: node 0 is ∅, each node's children
// are contiguous and ascending by rank.
type trie struct {
	rank, first, count, sup []int32
}

// init makes the root with n children of ranks 0..n-1.
func (t *trie) init(n int) {
	t.rank = []int32{-1}
	t.first = []int32{1}
	t.count = []int32{int32(n)}
	t.sup = []int32{0}
	for r := range n {
		t.rank = append(t.rank, int32(r))
		t.first = append(t.first, 0)
		t.count = append(t.count, 0)
		t.sup = append(t.sup, 0)
	}
}

// add gives node x n children (ranks to be filled in) and returns the
// first one's index.
func (t *trie) add(x int32, n int) int32 {
	first := int32(len(t.rank))
	t.first[x], t.count[x] = first, int32(n)
	for range n {
		t.rank = append(t.rank, 0)
		t.first = append(t.first, 0)
		t.count = append(t.count, 0)
		t.sup = append(t.sup, 0)
	}
	return first
}

// child returns x's child of rank r, or 0.
func (t *trie) child(x, r int32) int32 {
	lo, hi := t.first[x], t.first[x]+t.count[x]
	for lo < hi {
		mid := int32(uint32(lo+hi) >> 1)
		if t.rank[mid] < r {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < t.first[x]+t.count[x] && t.rank[lo] == r {
		return lo
	}
	return 0
}
