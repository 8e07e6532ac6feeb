package coherence

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
)

// brute is a reference for small databases: it enumerates every itemset
// that definitions mention and recounts everything from scratch.
type brute struct {
	trans [][]int32 // sorted
	roles []Role
	prm   Params
}

func newBrute(db *Labelled, prm Params) *brute {
	b := &brute{roles: db.Roles, prm: prm}
	for _, tr := range db.Trans {
		b.trans = append(b.trans, slices.Sorted(slices.Values(tr)))
	}
	return b
}

func (b *brute) without(v int32) {
	for i, tr := range b.trans {
		b.trans[i] = slices.DeleteFunc(slices.Clone(tr), func(x int32) bool { return x == v })
	}
}

func (b *brute) sup(set []int32) int {
	n := 0
	for _, tr := range b.trans {
		if subset(set, tr) {
			n++
		}
	}
	return n
}

// breachOwn reports whether Pr(s|set) > h for a private s.
func (b *brute) breachOwn(set []int32) bool {
	sup := b.sup(set)
	if sup == 0 {
		return false
	}
	for s, r := range b.roles {
		if r == Private && b.prm.breaches(b.sup(union(set, []int32{int32(s)})), sup) {
			return true
		}
	}
	return false
}

// subsetsOf lists every subset of set (∅ and set included).
func subsetsOf(set []int32) [][]int32 {
	out := [][]int32{{}}
	for _, x := range set {
		for _, s := range out[:len(out):len(out)] {
			out = append(out, append(slices.Clip(s), x))
		}
	}
	return out
}

func (b *brute) isMole(set []int32) bool {
	if len(set) == 0 || !fits(len(set), b.prm.P) || b.sup(set) == 0 {
		return false
	}
	if b.sup(set) < b.prm.K {
		return true
	}
	for _, s := range subsetsOf(set) {
		if b.breachOwn(s) {
			return true
		}
	}
	return false
}

// present lists the distinct itemsets of at most length items (0: any)
// over the items keep accepts that some transaction holds.
func (b *brute) present(length int, keep func(int32) bool) [][]int32 {
	seen := map[string][]int32{}
	for _, tr := range b.trans {
		var items []int32
		for _, x := range tr {
			if keep(x) {
				items = append(items, x)
			}
		}
		for _, s := range subsetsOf(items) {
			if len(s) > 0 && fits(len(s), length) {
				seen[fmt.Sprint(s)] = s
			}
		}
	}
	var out [][]int32
	for _, s := range seen {
		out = append(out, s)
	}
	slices.SortFunc(out, slices.Compare)
	return out
}

func (b *brute) public(x int32) bool { return b.roles[x] == Public }

func (b *brute) moles() [][]int32 {
	var out [][]int32
	for _, s := range b.present(b.prm.P, b.public) {
		if b.isMole(s) {
			out = append(out, s)
		}
	}
	return out
}

func (b *brute) minimalMoles() [][]int32 {
	var out [][]int32
	for _, m := range b.moles() {
		minimal := true
		for _, s := range subsetsOf(m) {
			if len(s) > 0 && len(s) < len(m) && b.isMole(s) {
				minimal = false
			}
		}
		if minimal {
			out = append(out, m)
		}
	}
	return out
}

func (b *brute) nuggets(nug Nuggets) [][]int32 {
	var out [][]int32
	for _, s := range b.present(nug.P, func(int32) bool { return true }) {
		if b.sup(s) >= nug.K {
			out = append(out, s)
		}
	}
	return out
}

func (b *brute) eligible() bool {
	if len(b.trans) < b.prm.K {
		return false
	}
	return !b.breachOwn(nil)
}

// size1 suppresses and returns the size-1 moles.
func (b *brute) size1() []int32 {
	var out []int32
	for v, r := range b.roles {
		if r == Public && b.isMole([]int32{int32(v)}) {
			out = append(out, int32(v))
		}
	}
	for _, v := range out {
		b.without(v)
	}
	return out
}

func countHolding(sets [][]int32, v int32) uint64 {
	n := uint64(0)
	for _, s := range sets {
		if contains(s, v) {
			n++
		}
	}
	return n
}

// greedy runs the framework of Figure 12 by recounting: score(v) is
// moles(v)/loss(v) over the current database.
func (b *brute) greedy(moles func() [][]int32, loss func(v int32) uint64) []int32 {
	out := b.size1()
	for {
		ms := moles()
		if len(ms) == 0 {
			return out
		}
		best, bm, bl := int32(-1), uint64(0), uint64(0)
		for v, r := range b.roles {
			m := countHolding(ms, int32(v))
			if r != Public || m == 0 {
				continue
			}
			l := loss(int32(v))
			c := cmpRatio(m, l, bm, bl)
			if best < 0 || c > 0 || c == 0 && m > bm {
				best, bm, bl = int32(v), m, l
			}
		}
		out = append(out, best)
		b.without(best)
	}
}

func (b *brute) tree() []int32 {
	return b.greedy(b.minimalMoles, func(v int32) uint64 { return uint64(b.sup([]int32{v})) })
}

func (b *brute) border(nug Nuggets) []int32 {
	return b.greedy(b.moles, func(v int32) uint64 { return countHolding(b.nuggets(nug), v) })
}

func (b *brute) rmAll() []int32 {
	out := b.size1()
	in := map[int32]bool{}
	for _, m := range b.moles() {
		for _, v := range m {
			in[v] = true
		}
	}
	for v := range b.roles {
		if in[int32(v)] {
			out = append(out, int32(v))
		}
	}
	return out
}

// randomDB draws a small database: a few public and private items, each
// transaction a random set.
func randomDB(rng *rand.Rand) *Labelled {
	pub, priv := 3+rng.IntN(6), rng.IntN(4)
	n := 4 + rng.IntN(28)
	density := 0.2 + 0.6*rng.Float64()
	db := &Database{}
	roles := []Role{}
	for i := range pub + priv {
		db.Items = append(db.Items, strconv.Itoa(i))
		if i < pub {
			roles = append(roles, Public)
		} else {
			roles = append(roles, Private)
		}
	}
	if rng.IntN(4) == 0 && pub > 3 {
		roles[0] = Kept
	}
	for range n {
		var tr []int32
		for i := range pub {
			if rng.Float64() < density {
				tr = append(tr, int32(i))
			}
		}
		for i := range priv {
			if rng.IntN(3) == 0 {
				tr = append(tr, int32(pub+i))
			}
		}
		rng.Shuffle(len(tr), func(i, j int) { tr[i], tr[j] = tr[j], tr[i] })
		db.Trans = append(db.Trans, tr)
	}
	return &Labelled{Database: db, Roles: roles}
}

func randomParams(rng *rand.Rand) (Params, Nuggets) {
	hs := []float64{0.3, 0.5, 0.6, 0.75, 1}
	ps := []int{1, 2, 3, 4, 0}
	prm := Params{H: hs[rng.IntN(len(hs))], K: 2 + rng.IntN(3), P: ps[rng.IntN(len(ps))]}
	nps := []int{0, 1, 2, 3}
	return prm, Nuggets{K: 2 + rng.IntN(5), P: nps[rng.IntN(len(nps))]}
}
