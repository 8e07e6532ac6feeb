package coherence

import (
	"container/heap"
	"context"
	"math/bits"
	"slices"
	"time"
)

// Result is what a cohesion algorithm decided.
type Result struct {
	// Suppressed lists the suppressed public items in the order they were
	// chosen: the size-1 moles first (Observation 2), by item.
	Suppressed []int32
	// Size1 is how many of Suppressed are size-1 moles.
	Size1 int
	// MinimalMoles is the number of minimal moles of size 2 or more
	// (after the size-1 moles are suppressed).
	MinimalMoles int
	Mine         MineStats
	// MineTime is the time spent finding minimal moles (and, for
	// Border-Cohesion, the borders); Time is the whole run.
	MineTime, Time time.Duration
}

// Publish returns the published database: db without the suppressed items.
func (r *Result) Publish(db *Labelled) *Database { return db.Database.Without(r.Suppressed) }

// start checks eligibility and finds the size-1 moles and the minimal moles
// of size 2 or more.
func start(ctx context.Context, db *Labelled, prm Params) (*problem, *Result, *Itemsets, error) {
	begin := time.Now()
	pr, err := newProblem(db, prm)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := pr.eligible(); err != nil {
		return nil, nil, nil, err
	}
	size1, nonMoles, live := pr.singles()
	res := &Result{Suppressed: size1, Size1: len(size1)}
	moles, stats, err := pr.minimalMoles(ctx, nonMoles, live)
	if err != nil {
		return nil, nil, nil, err
	}
	res.MinimalMoles, res.Mine, res.MineTime = moles.Len(), stats, time.Since(begin)
	return pr, res, moles, nil
}

// TreeCohesion publishes db (h,k,p)-coherent with item utility, the loss of
// suppressing v being IL(v) = Sup(v) (Xu, ch. 4, §4.3, Figure 15): it
// suppresses the size-1 moles, finds the minimal moles M*, puts them in a
// MOLE-tree (Definition 11) and suppresses, while a minimal mole is left,
// the public item with the most minimal moles per unit of loss, MM(v)/IL(v).
// Ties go to the item with more minimal moles, then to the smaller item.
func TreeCohesion(ctx context.Context, db *Labelled, prm Params) (*Result, error) {
	begin := time.Now()
	pr, res, moles, err := start(ctx, db, prm)
	if err != nil {
		return nil, err
	}
	t := buildMoleTree(moles, len(db.Items))
	il := func(v int32) uint64 { return uint64(pr.sup[v]) }
	sc := newScores(t.mm, il)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		v, ok := sc.pop()
		if !ok {
			break
		}
		res.Suppressed = append(res.Suppressed, v)
		t.suppress(v)
	}
	res.Time = time.Since(begin)
	return res, nil
}

// moleTree is the MOLE-tree: a prefix tree of the minimal moles, each path
// ordered by descending MM (ties by item), with each node's mole-num and,
// per item, its node-link. Nodes are numbered in preorder, so a node's
// subtree is the nodes x..end[x]-1.
type moleTree struct {
	label, num, parent, end []int32
	deleted                 []bool
	links                   [][]int32 // per item, its nodes
	mm                      []uint64  // per item, MM(v): minimal moles holding v
}

func buildMoleTree(moles *Itemsets, items int) *moleTree {
	t := &moleTree{links: make([][]int32, items), mm: make([]uint64, items)}
	for i := range moles.Len() {
		for _, v := range moles.At(i) {
			t.mm[v]++
		}
	}
	before := func(a, b int32) int {
		if t.mm[a] != t.mm[b] {
			if t.mm[a] > t.mm[b] {
				return -1
			}
			return 1
		}
		return int(a - b)
	}
	paths := make([][]int32, moles.Len())
	for i := range paths {
		paths[i] = slices.SortedFunc(slices.Values(moles.At(i)), before)
	}
	slices.SortFunc(paths, func(a, b []int32) int { return slices.CompareFunc(a, b, before) })
	// Node 0 is the root; each path shares its prefix with the previous.
	t.label, t.num, t.parent = []int32{-1}, []int32{0}, []int32{-1}
	var stack []int32 // the previous path's nodes
	var prev []int32
	for _, p := range paths {
		common := 0
		for common < len(p) && common < len(prev) && p[common] == prev[common] {
			common++
		}
		stack = stack[:common]
		for d, v := range p {
			if d < common {
				t.num[stack[d]]++
				continue
			}
			parent := int32(0)
			if d > 0 {
				parent = stack[d-1]
			}
			x := int32(len(t.label))
			t.label = append(t.label, v)
			t.num = append(t.num, 1)
			t.parent = append(t.parent, parent)
			t.links[v] = append(t.links[v], x)
			stack = append(stack, x)
		}
		prev = p
	}
	t.deleted = make([]bool, len(t.label))
	// end[x]: preorder numbering makes a subtree contiguous.
	t.end = make([]int32, len(t.label))
	for x := range t.end {
		t.end[x] = int32(x + 1)
	}
	for x := len(t.label) - 1; x > 0; x-- {
		p := t.parent[x]
		t.end[p] = max(t.end[p], t.end[x])
	}
	return t
}

// suppress deletes every minimal mole holding v (Figure 15, lines 7-9).
func (t *moleTree) suppress(v int32) {
	for _, x := range t.links[v] {
		if t.deleted[x] {
			continue
		}
		num := t.num[x]
		// Step 8: the subtree at x, every mole through x.
		for w := x; w < t.end[x]; w++ {
			if !t.deleted[w] {
				t.mm[t.label[w]] -= uint64(t.num[w])
				t.deleted[w] = true
			}
		}
		// Step 9: x's ancestors lose those moles.
		for a := t.parent[x]; a > 0; a = t.parent[a] {
			t.num[a] -= num
			t.mm[t.label[a]] -= uint64(num)
			if t.num[a] == 0 {
				t.deleted[a] = true
			}
		}
	}
	t.links[v] = nil
}

// scores is the Score table: a max-heap of items by MM(v)/IL(v), refreshed
// lazily (scores only fall, so a stale entry is re-keyed when it surfaces).
type scores struct {
	mm   []uint64
	il   func(int32) uint64
	heap scoreHeap
}

type scoreEntry struct {
	v      int32
	mm, il uint64
}

func newScores(mm []uint64, il func(int32) uint64) *scores {
	s := &scores{mm: mm, il: il}
	for v, n := range mm {
		if n > 0 {
			s.heap = append(s.heap, scoreEntry{int32(v), n, il(int32(v))})
		}
	}
	heap.Init(&s.heap)
	return s
}

// pop returns the item with the best current score, or false when no
// item holds a mole.
func (s *scores) pop() (int32, bool) {
	for s.heap.Len() > 0 {
		e := heap.Pop(&s.heap).(scoreEntry)
		switch cur := s.mm[e.v]; {
		case cur == 0:
			continue
		case cur != e.mm:
			heap.Push(&s.heap, scoreEntry{e.v, cur, e.il})
			continue
		}
		return e.v, true
	}
	return 0, false
}

type scoreHeap []scoreEntry

func (h scoreHeap) Len() int { return len(h) }

// Less orders by MM/IL descending (IL = 0 is infinite), then MM
// descending, then item ascending.
func (h scoreHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if c := cmpRatio(a.mm, a.il, b.mm, b.il); c != 0 {
		return c > 0
	}
	if a.mm != b.mm {
		return a.mm > b.mm
	}
	return a.v < b.v
}
func (h scoreHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *scoreHeap) Push(x any)   { *h = append(*h, x.(scoreEntry)) }
func (h *scoreHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// cmpRatio compares a/b with c/d exactly, x/0 being infinite (and equal
// to any other infinity).
func cmpRatio(a, b, c, d uint64) int {
	switch {
	case b == 0 && d == 0:
		return 0
	case b == 0:
		return 1
	case d == 0:
		return -1
	}
	h1, l1 := bits.Mul64(a, d)
	h2, l2 := bits.Mul64(c, b)
	switch {
	case h1 != h2:
		if h1 > h2 {
			return 1
		}
		return -1
	case l1 != l2:
		if l1 > l2 {
			return 1
		}
		return -1
	}
	return 0
}
