package coherence

import (
	"errors"
	"math/bits"
)

// zdd is a zero-suppressed decision diagram (S. Minato, "Zero-suppressed
// BDDs for set manipulation in combinatorial problems", DAC 1993): a
// family of itemsets as a DAG whose node (x, lo, hi) stands for
// lo ∪ {γ ∪ {x} | γ ∈ hi}, variables increasing along every path, no node
// with hi = ∅. Node 0 is the empty family, node 1 the family {∅}. It holds
// the nuggets: the downset of the nugget border's lower bound, which it
// keeps compact however many itemsets it stands for.
type zdd struct {
	v      []int32 // variable per node
	lo, hi []uint32
	table  []uint32 // open addressing: node ids, 0 for empty
	cache  []zcache // lossy memo of operations
	limit  int
}

type zcache struct{ op, a, b, r uint32 }

// ErrTooLarge means a decision diagram grew past its node limit.
var ErrTooLarge = errors.New("coherence: the nugget diagram has too many nodes")

const (
	opUnion = iota + 1
	opDown
	opOffset
)

func newZDD(limit int) *zdd {
	z := &zdd{v: []int32{1 << 30, 1 << 30}, lo: []uint32{0, 0}, hi: []uint32{0, 0}, limit: limit}
	z.table = make([]uint32, 1<<12)
	z.cache = make([]zcache, 1<<12)
	return z
}

func zhash(v int32, lo, hi uint32) uint64 {
	x := uint64(uint32(v))*0x9E3779B97F4A7C15 ^ uint64(lo)*0xC2B2AE3D27D4EB4F ^ uint64(hi)*0x165667B19E3779F9
	return x ^ x>>29
}

// node returns the node (x, lo, hi), made once.
func (z *zdd) node(x int32, lo, hi uint32) uint32 {
	if hi == 0 {
		return lo
	}
	mask := uint64(len(z.table) - 1)
	for i := zhash(x, lo, hi) & mask; ; i = (i + 1) & mask {
		id := z.table[i]
		if id == 0 {
			id = uint32(len(z.v))
			z.v, z.lo, z.hi = append(z.v, x), append(z.lo, lo), append(z.hi, hi)
			z.table[i] = id
			if len(z.v)*2 > len(z.table) {
				z.rehash()
			}
			return id
		}
		if z.v[id] == x && z.lo[id] == lo && z.hi[id] == hi {
			return id
		}
	}
}

func (z *zdd) rehash() {
	z.table = make([]uint32, len(z.table)*2)
	if len(z.cache) < len(z.table) {
		z.cache = make([]zcache, len(z.table))
	}
	mask := uint64(len(z.table) - 1)
	for id := 2; id < len(z.v); id++ {
		for i := zhash(z.v[id], z.lo[id], z.hi[id]) & mask; ; i = (i + 1) & mask {
			if z.table[i] == 0 {
				z.table[i] = uint32(id)
				break
			}
		}
	}
}

func (z *zdd) slot(op, a, b uint32) *zcache {
	h := (uint64(op)*0x9E3779B1 ^ uint64(a)*0x85EBCA77 ^ uint64(b)*0xC2B2AE3D) * 0x27D4EB2F165667C5
	return &z.cache[(h>>32)&uint64(len(z.cache)-1)]
}

func (z *zdd) full() bool { return len(z.v) > z.limit }

// union is a ∪ b.
func (z *zdd) union(a, b uint32) uint32 {
	switch {
	case a == 0 || a == b:
		return b
	case b == 0:
		return a
	case a > b:
		a, b = b, a
	}
	s := z.slot(opUnion, a, b)
	if s.op == opUnion && s.a == a && s.b == b {
		return s.r
	}
	var r uint32
	switch va, vb := z.v[a], z.v[b]; {
	case a == 1: // {∅} ∪ b: ∅ goes down b's lo side
		r = z.node(vb, z.union(1, z.lo[b]), z.hi[b])
	case va < vb:
		r = z.node(va, z.union(z.lo[a], b), z.hi[a])
	case va > vb:
		r = z.node(vb, z.union(a, z.lo[b]), z.hi[b])
	default:
		r = z.node(va, z.union(z.lo[a], z.lo[b]), z.union(z.hi[a], z.hi[b]))
	}
	*z.slot(opUnion, a, b) = zcache{opUnion, a, b, r}
	return r
}

// down is the downset of a: every subset of its itemsets.
func (z *zdd) down(a uint32) uint32 {
	if a < 2 {
		return a
	}
	s := z.slot(opDown, a, 0)
	if s.op == opDown && s.a == a {
		return s.r
	}
	h := z.down(z.hi[a])
	r := z.node(z.v[a], z.union(z.down(z.lo[a]), h), h)
	*z.slot(opDown, a, 0) = zcache{opDown, a, 0, r}
	return r
}

// offset is the itemsets of a without variable x.
func (z *zdd) offset(a uint32, x int32) uint32 {
	if a < 2 || z.v[a] > x {
		return a
	}
	if z.v[a] == x {
		return z.lo[a]
	}
	s := z.slot(opOffset, a, uint32(x))
	if s.op == opOffset && s.a == a && s.b == uint32(x) {
		return s.r
	}
	r := z.node(z.v[a], z.offset(z.lo[a], x), z.offset(z.hi[a], x))
	*z.slot(opOffset, a, uint32(x)) = zcache{opOffset, a, uint32(x), r}
	return r
}

// family builds the family of sets, each a sorted list of variables; sets
// must be sorted lexicographically and distinct.
func (z *zdd) family(sets [][]int32, depth int) uint32 {
	hasEmpty := len(sets) > 0 && len(sets[0]) == depth
	if hasEmpty {
		sets = sets[1:]
	}
	if len(sets) == 0 {
		if hasEmpty {
			return 1
		}
		return 0
	}
	x := sets[0][depth]
	j := 1
	for j < len(sets) && sets[j][depth] == x {
		j++
	}
	// Sets after j start with a later variable: they are lo's, one level
	// down in their own lists.
	hi := z.family(sets[:j], depth+1)
	lo := z.family(sets[j:], depth)
	if hasEmpty {
		lo = z.union(lo, 1)
	}
	return z.node(x, lo, hi)
}

// sizeCounts are counts of itemsets by size 0..length (length 0: one entry,
// every size together).
type sizeCounts []Count

// counts returns, for the itemsets of a with at most length items (0: no
// bound) and at least one, how many there are and how many hold each
// variable (indexed by variable, vars of them).
func (z *zdd) counts(a uint32, length int, vars int) (Count, []Count, error) {
	width := length + 1
	if length == 0 {
		width = 1
	}
	over := false
	shift := func(dst, src sizeCounts) { // dst += src moved up one size
		if length == 0 {
			dst[0] = dst[0].add(src[0], &over)
			return
		}
		for s := length; s >= 1; s-- {
			dst[s] = dst[s].add(src[s-1], &over)
		}
	}
	// Nodes are made after their children: ids ascending are bottom up.
	reach := make([]bool, len(z.v))
	reach[a] = true
	for id := int(a); id >= 2; id-- {
		if reach[id] {
			reach[z.lo[id]], reach[z.hi[id]] = true, true
		}
	}
	up := make([]sizeCounts, len(z.v))
	up[0] = make(sizeCounts, width)
	up[1] = make(sizeCounts, width)
	up[1][0] = CountOf(1)
	for id := 2; id <= int(a); id++ {
		if !reach[id] {
			continue
		}
		u := make(sizeCounts, width)
		copy(u, up[z.lo[id]])
		shift(u, up[z.hi[id]])
		up[id] = u
	}
	down := make([]sizeCounts, len(z.v))
	down[a] = make(sizeCounts, width)
	down[a][0] = CountOf(1)
	per := make([]Count, vars)
	for id := int(a); id >= 2; id-- {
		d := down[id]
		if d == nil {
			continue
		}
		for _, c := range []uint32{z.lo[id], z.hi[id]} {
			if down[c] == nil {
				down[c] = make(sizeCounts, width)
			}
		}
		for s := range width {
			down[z.lo[id]][s] = down[z.lo[id]][s].add(d[s], &over)
		}
		shift(down[z.hi[id]], d)
		// Itemsets through this node's hi edge hold its variable.
		h := up[z.hi[id]]
		var through Count
		for s := range width {
			for t := range width {
				if length != 0 && s+t+1 > length {
					break
				}
				through = through.add(mulCount(d[s], h[t], &over), &over)
			}
		}
		per[z.v[id]] = per[z.v[id]].add(through, &over)
		down[id] = nil
	}
	var total Count
	for s, c := range up[a] {
		if s > 0 || length == 0 {
			total = total.add(c, &over)
		}
	}
	if length == 0 && z.hasEmpty(a) {
		total = total.sub(CountOf(1))
	}
	if over {
		return Count{}, nil, ErrOverflow
	}
	return total, per, nil
}

// hasEmpty reports whether ∅ is one of a's itemsets.
func (z *zdd) hasEmpty(a uint32) bool {
	for a >= 2 {
		a = z.lo[a]
	}
	return a == 1
}

// mulCount is c·d, setting *over when it passes 2^128 - 1.
func mulCount(c, d Count, over *bool) Count {
	if c.hi != 0 && d.hi != 0 {
		*over = true
		return Count{}
	}
	h, l := bits.Mul64(c.lo, d.lo)
	x1, y1 := bits.Mul64(c.hi, d.lo)
	x2, y2 := bits.Mul64(c.lo, d.hi)
	if x1 != 0 || x2 != 0 {
		*over = true
	}
	var carry uint64
	h, carry = bits.Add64(h, y1, 0)
	if carry != 0 {
		*over = true
	}
	h, carry = bits.Add64(h, y2, 0)
	if carry != 0 {
		*over = true
	}
	return Count{h, l}
}
