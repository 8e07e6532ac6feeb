package coherence

import (
	"context"
	"encoding/binary"
	"slices"
)

// maximalProjections returns the lower bound of the mole border (Xu, ch. 4,
// §4.4.1): the maximal itemsets of support at least 1 over the items
// keep marks, that is the maximal ones among the transactions' projections
// on those items; and, per transaction, the index of its projection among
// them, or -1 when the projection is not maximal.
func maximalProjections(pr *problem, keep []bool) ([][]int32, []int32) {
	index := map[string]int32{}
	var distinct [][]int32
	var exact []int
	of := make([]int32, pr.n)
	var key []byte
	for t, tr := range pr.trans {
		var proj []int32
		for _, it := range tr {
			if keep[it] {
				proj = append(proj, it)
			}
		}
		if len(proj) == 0 {
			of[t] = -1
			continue
		}
		key = key[:0]
		for _, it := range proj {
			key = binary.LittleEndian.AppendUint32(key, uint32(it))
		}
		d, ok := index[string(key)]
		if !ok {
			d = int32(len(distinct))
			index[string(key)] = d
			distinct = append(distinct, proj)
			exact = append(exact, 0)
		}
		exact[d]++
		of[t] = d
	}
	// A projection is maximal when no other transaction holds it: its
	// support equals the number of transactions projecting onto it.
	low := make([][]int32, 0, len(distinct))
	at := make([]int32, len(distinct))
	for d, proj := range distinct {
		at[d] = -1
		if supportAtMost(pr, proj, exact[d]) {
			at[d] = int32(len(low))
			low = append(low, proj)
		}
	}
	for t, d := range of {
		if d >= 0 {
			of[t] = at[d]
		}
	}
	return low, of
}

// supportAtMost reports whether at most limit transactions hold set,
// intersecting its items' tids from the rarest and stopping early.
func supportAtMost(pr *problem, set []int32, limit int) bool {
	order := slices.Clone(set)
	slices.SortFunc(order, func(a, b int32) int { return pr.sup[a] - pr.sup[b] })
	cur := pr.tids[order[0]]
	for _, it := range order[1:] {
		if len(cur) <= limit {
			return true
		}
		cur = mergeLists(cur, pr.tids[it])
	}
	return len(cur) <= limit
}

// tidsOf returns the transactions holding set.
func tidsOf(pr *problem, set []int32) []uint32 {
	order := slices.Clone(set)
	slices.SortFunc(order, func(a, b int32) int { return pr.sup[a] - pr.sup[b] })
	cur := pr.tids[order[0]]
	for _, it := range order[1:] {
		cur = mergeLists(cur, pr.tids[it])
	}
	return cur
}

// maximalFrequent returns the maximal itemsets of support at least minSup
// over the items not removed (the lower bound of the nugget border), by a
// depth-first search in the manner of GenMax and MAFIA: items ordered by
// ascending support, tidsets intersected down the tree, items as frequent
// as the head merged into it (parent equivalence), a branch skipped when
// its head and whole tail lie in a maximal itemset found already, and the
// maximal itemsets that may matter passed down the tree (progressive
// focusing).
func maximalFrequent(ctx context.Context, pr *problem, removed []bool, minSup int) ([][]int32, error) {
	var items []int32
	for it, s := range pr.sup {
		if s >= minSup && !removed[it] {
			items = append(items, int32(it))
		}
	}
	pr.byRank(items)
	f := &mfiSearch{ctx: ctx, pr: pr, item: items, words: (len(items) + 63) / 64}
	tail := make([]entry, len(items))
	for r, it := range items {
		tail[r] = entry{rank: int32(r), ts: settle(listSet(pr.tids[it]), pr.n)}
	}
	if len(items) == 0 {
		return nil, nil
	}
	f.minSup = minSup
	f.levels = [][]int32{nil}
	err := f.search(nil, pr.n, tail, 0)
	out := make([][]int32, len(f.found))
	for i, ranks := range f.found {
		set := make([]int32, len(ranks))
		for j, r := range ranks {
			set[j] = items[r]
		}
		slices.Sort(set)
		out[i] = set
	}
	return out, err
}

type mfiSearch struct {
	ctx    context.Context
	pr     *problem
	item   []int32
	words  int
	minSup int
	found  [][]int32 // ranks
	bits   [][]uint64
	levels [][]int32 // per depth, the found itemsets holding that depth's head
	steps  int
}

func (f *mfiSearch) bitsOf(ranks ...[]int32) []uint64 {
	b := make([]uint64, f.words)
	for _, rs := range ranks {
		for _, r := range rs {
			b[r>>6] |= 1 << (r & 63)
		}
	}
	return b
}

// covered reports whether the itemset b lies in a found itemset of list.
func (f *mfiSearch) covered(b []uint64, list []int32) bool {
	for _, i := range list {
		m := f.bits[i]
		in := true
		for w, x := range b {
			if x&^m[w] != 0 {
				in = false
				break
			}
		}
		if in {
			return true
		}
	}
	return false
}

func (f *mfiSearch) search(head []int32, headSup int, tail []entry, depth int) error {
	if f.steps++; f.steps&255 == 0 {
		if err := f.ctx.Err(); err != nil {
			return err
		}
	}
	// Parent equivalence: an item in every transaction of the head is in
	// every maximal itemset above it.
	var rest []entry
	head = slices.Clip(head)
	for _, e := range tail {
		if e.ts.sup == headSup {
			head = append(head, e.rank)
		} else {
			rest = append(rest, e)
		}
	}
	local := f.levels[depth]
	if len(rest) == 0 {
		if b := f.bitsOf(head); !f.covered(b, local) {
			f.add(head, b, depth)
		}
		return nil
	}
	all := make([]int32, len(rest))
	for i, e := range rest {
		all[i] = e.rank
	}
	if f.covered(f.bitsOf(head, all), local) {
		return nil
	}
	for i := range rest {
		c := &rest[i]
		var next []entry
		for j := i + 1; j < len(rest); j++ {
			if ts := intersect(c.ts, rest[j].ts, f.pr.n); ts.sup >= f.minSup {
				next = append(next, entry{rank: rest[j].rank, ts: ts})
			}
		}
		sub := append(slices.Clip(head), c.rank)
		// The found itemsets that may cover sub's branch hold c.
		var focus []int32
		for _, x := range f.levels[depth] {
			if f.bits[x][c.rank>>6]&(1<<(c.rank&63)) != 0 {
				focus = append(focus, x)
			}
		}
		if len(f.levels) <= depth+1 {
			f.levels = append(f.levels, nil)
		}
		f.levels[depth+1] = focus
		if err := f.search(sub, c.ts.sup, next, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// add records a maximal itemset found at depth: it holds every shallower
// head, so every level's list gains it.
func (f *mfiSearch) add(ranks []int32, b []uint64, depth int) {
	idx := int32(len(f.found))
	f.found = append(f.found, slices.Clone(ranks))
	f.bits = append(f.bits, b)
	for d := 0; d <= depth; d++ {
		f.levels[d] = append(f.levels[d], idx)
	}
}
