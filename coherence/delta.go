package coherence

import (
	"context"
	"slices"

	"github.com/cohortdm/cohort/internal/sorted"
)

// counter runs Computeδ (Xu, ch. 4, §4.4.3, Figure 18, with its typos
// fixed: δ(v') += … in Cases 1 and 2, X = {v, v'}) over the edges of one
// border: for every item v' it counts the itemsets covered by the edges
// that hold v and v' and have at most length items, without enumerating
// them; it also counts the itemsets holding v. v = nil (-1) counts every
// covered itemset.
type counter struct {
	ctx     context.Context
	bin     binomials
	length  int   // 0: no bound
	v       int32 // -1: nil
	delta   []Count
	touched []int32
	total   Count
	over    bool
	steps   int
	err     error
	pos     []int32 // scratch: per lower element, its place in E*, or -1
	buf     []int32 // scratch
}

func newCounter(ctx context.Context, items int) *counter {
	return &counter{ctx: ctx, delta: make([]Count, items)}
}

// reset clears δ and the total for a count about v (-1: nil) and itemsets
// of at most length items.
func (c *counter) reset(v int32, length int) {
	for _, it := range c.touched {
		c.delta[it] = Count{}
	}
	c.touched, c.total, c.v, c.length, c.over, c.err = c.touched[:0], Count{}, v, length, false, nil
}

// held is e restricted to the itemsets holding v: ⟨α,β⟩ covers as many of
// them as ⟨α∪{v},β⟩ covers itemsets. ok is false when they all have more
// than length items.
func (c *counter) held(e edge) (edge, bool) {
	if c.v >= 0 && !contains(e.a, c.v) {
		e.a = union(e.a, []int32{c.v})
	}
	return e, fits(len(e.a), c.length)
}

// finish returns the count's error: a cancelled context or an overflow.
func (c *counter) finish() error {
	switch {
	case c.err != nil:
		return c.err
	case c.over || c.bin.over:
		return ErrOverflow
	}
	return nil
}

// count counts over the edges of border b whose lower element holds v (all
// of them when v = -1). It is Computeδ's outer loop with E* in the order of
// lower, then upper element, and each ovset found through the border
// instead of by a scan of every examined edge: an examined edge ⟨α',β'⟩
// meets ⟨α,β⟩ only if α' is an upper element under β and β' a lower
// element over α'.
func (c *counter) count(b *border, v int32, length int) error {
	c.reset(v, length)
	var lows []int32
	if v < 0 {
		for j, l := range b.low {
			if l != nil {
				lows = append(lows, int32(j))
			}
		}
	} else {
		for _, j := range b.byItem[v] {
			if b.low[j] != nil {
				lows = append(lows, j)
			}
		}
		slices.Sort(lows)
	}
	if cap(c.pos) < len(b.low) {
		c.pos = make([]int32, len(b.low))
		for j := range c.pos {
			c.pos[j] = -1
		}
	}
	pos := c.pos[:len(b.low)]
	for n, j := range lows {
		pos[j] = int32(n)
	}
	defer func() {
		for _, j := range lows {
			pos[j] = -1
		}
	}()
	var ovset []edge
	for _, j := range lows {
		beta := b.low[j]
		c.bin.grow(len(beta))
		for _, i := range b.under[j] {
			if c.stop() {
				return c.finish()
			}
			e, ok := c.held(edge{b.up[i], beta})
			if !ok {
				continue
			}
			ovset = ovset[:0]
			best, bestSize := -1, 0
			for _, i2 := range b.under[j] {
				// α' ⊆ β holds; the meet's α ∪ α' must be short enough.
				a2 := b.up[i2]
				x := unionSize(e.a, a2, c.v)
				if !fits(x, c.length) {
					continue
				}
				for _, j2 := range b.over[i2] {
					if p := pos[j2]; p < 0 || p > pos[j] || j2 == j && i2 >= i || b.low[j2] == nil {
						continue // not examined
					}
					beta2 := b.low[j2]
					if !subset(e.a, beta2) {
						continue
					}
					size := x - len(e.a) + len(beta) - c.interSize(beta, beta2)
					if best < 0 || size < bestSize {
						best, bestSize = len(ovset), size
					}
					f, _ := c.held(edge{a2, beta2})
					ovset = append(ovset, f)
				}
			}
			c.examine(e, ovset, best)
		}
	}
	return c.finish()
}

func (c *counter) stop() bool {
	if c.steps++; c.steps&1023 == 0 && c.err == nil {
		c.err = c.ctx.Err()
	}
	return c.err != nil
}

// unionSize is |a ∪ b ∪ {v}| for sorted a and b, a holding v (v < 0:
// none).
func unionSize(a, b []int32, v int32) int {
	n, i := len(a), 0
	for _, x := range b {
		for i < len(a) && a[i] < x {
			i++
		}
		if x != v && (i == len(a) || a[i] != x) {
			n++
		}
	}
	return n
}

// interSize is |a ∩ b| for sorted a and b.
func (c *counter) interSize(a, b []int32) int {
	c.buf = sorted.AppendIntersect(c.buf[:0], a, b)
	return len(c.buf)
}

// overlap reports whether e meets f on an itemset short enough to count
// (Theorem 4(2)), and how many edges e − f would leave (Theorem 5).
func (c *counter) overlap(e, f edge) (int, bool) {
	if !e.meets(f) {
		return 0, false
	}
	x := unionSize(e.a, f.a, -1)
	if !fits(x, c.length) {
		return 0, false
	}
	return x - len(e.a) + len(e.b) - c.interSize(e.b, f.b), true
}

// computeDelta adds the itemsets covered by estar and by no edge of ehat
// (E* and E^ of Figure 18).
func (c *counter) computeDelta(estar, ehat []edge) {
	ehat = ehat[:len(ehat):len(ehat)]
	var ovset []edge
	for _, e := range estar {
		if c.stop() {
			return
		}
		// ovset: the examined edges e meets; pick the one leaving the
		// fewest new edges.
		ovset = ovset[:0]
		best, bestSize := -1, 0
		for _, f := range ehat {
			if size, ok := c.overlap(e, f); ok {
				if best < 0 || size < bestSize {
					best, bestSize = len(ovset), size
				}
				ovset = append(ovset, f)
			}
		}
		c.examine(e, ovset, best)
		ehat = append(ehat, e)
	}
}

// examine counts what e adds beyond the examined edges it meets, ovset:
// Case 1 (none), Case 2 (one) or Case 3 (e minus ovset[best], recursively
// against the rest).
func (c *counter) examine(e edge, ovset []edge, best int) {
	for _, f := range ovset {
		if subset(f.a, e.a) && subset(e.b, f.b) {
			return // f covers all of e: nothing new
		}
	}
	switch len(ovset) {
	case 0:
		c.add(e, nil)
	case 1:
		g := e.meet(ovset[0])
		c.add(e, &g)
	default:
		f := ovset[best]
		rest := append(slices.Clip(ovset[:best]), ovset[best+1:]...)
		c.computeDelta(e.minus(f, c.length), rest)
	}
}

// add counts the itemsets of e that g (a part of e, or nil) does not hold:
// for each v' in β − {v}, δ(v') += W_X(e) − W_X(g) with X = {v, v'}.
func (c *counter) add(e edge, g *edge) {
	a, b := len(e.a), len(e.b)
	in, out := c.wSum(a, b, c.length), c.wSum(a+1, b, c.length)
	var gIn, gOut Count
	var gx, gy []int32
	if g != nil {
		gx, gy = g.a, g.b
		gIn, gOut = c.wSum(len(gx), len(gy), c.length), c.wSum(len(gx)+1, len(gy), c.length)
	}
	c.total = c.total.add(in.sub(gIn), &c.over)
	i, x, y := 0, 0, 0
	for _, w := range e.b {
		for i < len(e.a) && e.a[i] < w {
			i++
		}
		for x < len(gx) && gx[x] < w {
			x++
		}
		for y < len(gy) && gy[y] < w {
			y++
		}
		if w == c.v {
			continue
		}
		d := out
		if i < len(e.a) && e.a[i] == w {
			d = in
		}
		switch {
		case x < len(gx) && gx[x] == w:
			d = d.sub(gIn)
		case y < len(gy) && gy[y] == w:
			d = d.sub(gOut)
		}
		if d.IsZero() {
			continue
		}
		if c.delta[w].IsZero() {
			c.touched = append(c.touched, w)
		}
		c.delta[w] = c.delta[w].add(d, &c.over)
	}
}
