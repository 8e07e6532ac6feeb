package boost

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/paillier"
)

// Gradient ciphertexts re-used within a tree (params.reuse, on by
// default). A join row's gradient and hessian do not change within a tree
// (its margin is the base score and the earlier trees' leaves), so the
// class holder encrypts its down messages in full only at the tree's
// first level, where every entry holds the pair (G, H) of one open node.
// At a deeper level an entry (join value, combo) whose join rows outside
// the child's subtree all lie in one open node k has, as its sums, its
// first-level entry's pair placed in node k's slots (the combo at the
// first level is the deeper combo with every table's signature cut to its
// length at the tree's start). The class holder sends, for such an
// entry, the index of its first-level entry and k instead of a fresh
// ciphertext; the receiver adds the first-level ciphertext it kept to
// per-node bin sums and places those in their node's slots once per bin
// (Ring.Place: a multiplication of the plaintext by a power of two and an
// addition of the packing's offsets). Entries whose outside join rows lie
// in several nodes (many-to-many joins, splits on the class holder's side
// that part a join value's rows) are sealed afresh as before. A level
// costs the class holder encryptions only for those, and the receiver one
// placement per open node and bin instead of none.
//
// What it discloses (the package doc's profile): the receiver of a down
// message, and every table below it, learns the open node of each
// re-used entry, that is, which of the tree's nodes the join rows of its
// (join value, combo) entries fall in: SecureBoost's instance space, which
// SecureBoost discloses to its passive parties. The ciphertexts
// themselves disclose nothing more than before (they are under the
// threshold key, and a re-used one is one the receiver already holds).
// params.reuse: false keeps every entry's node hidden, at the cost of a
// fresh encryption per entry per level.

// Layout is the slot layout of packed sums: SlotBits per slot, values
// offset by 2^ValueBits (paillier.Packing's).
type Layout struct {
	SlotBits  int `msgpack:"slot_bits"`
	ValueBits int `msgpack:"value_bits"`
}

// Reuse marks a down entry whose sums are the tree's first-level entry
// Ref of the same join value, in open node Node's slots (Node -1: no join
// row of the entry is in an open node; it adds nothing).
type Reuse struct {
	Ref  int `msgpack:"ref"`
	Node int `msgpack:"node"`
}

// markReuse replaces the sums of ds's entries that first (the same edge's
// down summary at the tree's first level, in the clear) already holds by
// Reuse marks, for vectors of at most maxWidth slots (0: any width). ds is
// in the clear.
func markReuse(first, ds *DownSummary, maxWidth int) {
	if first == nil {
		return
	}
	f := newFinder(first.Values)
	for i, v := range ds.Values {
		fi, ok := f.find(v)
		if !ok || len(first.Entries[fi]) == 0 {
			continue
		}
		fes := first.Entries[fi]
		lens := componentLens(fes[0].Combo)
		for j := range ds.Entries[i] {
			e := &ds.Entries[i][j]
			x := e.Sums.(Vec)
			if maxWidth > 0 && len(x) > maxWidth {
				return
			}
			c0 := cutCombo(e.Combo, lens)
			ref, ok := slices.BinarySearchFunc(fes, c0, func(a DownEntry, c string) int { return strings.Compare(a.Combo, c) })
			if !ok {
				continue
			}
			if k, ok := placedAt(x, fes[ref].Sums.(Vec)); ok {
				e.Sums, e.Reuse = nil, &Reuse{Ref: ref, Node: k}
			}
		}
	}
}

// placedAt reports whether x is f (a pair) in exactly one node's slots,
// and which (-1: x is zero).
func placedAt(x, f Vec) (int, bool) {
	k := -1
	for n := 0; 2*n+1 < len(x); n++ {
		if x[2*n] == 0 && x[2*n+1] == 0 {
			continue
		}
		if k >= 0 || x[2*n] != f[0] || x[2*n+1] != f[1] {
			return 0, false
		}
		k = n
	}
	return k, true
}

// componentLens is the length of each table's signature in a combo.
func componentLens(combo string) []int {
	parts := strings.Split(strings.TrimSuffix(combo, "|"), "|")
	out := make([]int, len(parts))
	for i, p := range parts {
		out[i] = len(p)
	}
	return out
}

// cutCombo cuts each table's signature in combo to lens (a combo of the
// same subtree at the tree's first level); "" when it does not fit.
func cutCombo(combo string, lens []int) string {
	parts := strings.Split(strings.TrimSuffix(combo, "|"), "|")
	if len(parts) != len(lens) {
		return ""
	}
	var b strings.Builder
	for i, p := range parts {
		if len(p) < lens[i] {
			return ""
		}
		b.WriteString(p[:lens[i]])
		b.WriteByte('|')
	}
	return b.String()
}

// cloneSummary copies ds's entry lists (the sums are shared: sealing
// replaces them in the copy's original, not in the copy).
func cloneSummary(ds DownSummary) *DownSummary {
	out := ds
	out.Entries = make([][]DownEntry, len(ds.Entries))
	for i, es := range ds.Entries {
		out.Entries[i] = slices.Clone(es)
	}
	return &out
}

// sealer seals a party's down messages to other parties' tables, keeping
// each edge's first-level summary of the tree in the clear to mark
// re-used entries at deeper levels.
type sealer struct {
	c     Crypto
	reuse bool
	first map[int]*DownSummary // by edge
}

func newSealer(c Crypto, reuse bool) *sealer {
	return &sealer{c: c, reuse: reuse, first: map[int]*DownSummary{}}
}

// seal seals ds (in the clear) for its edge at the tree's level depth.
func (z *sealer) seal(ds *DownSummary, depth int) error {
	ds.Width, ds.Layout = 0, z.c.Layout
	for _, es := range ds.Entries {
		if len(es) > 0 {
			ds.Width = len(es[0].Sums.(Vec))
			break
		}
	}
	if z.reuse {
		if depth == 0 {
			ds.First = true
			z.first[ds.Edge] = cloneSummary(*ds)
		} else {
			markReuse(z.first[ds.Edge], ds, z.c.MaxWidth)
		}
	}
	return sealEntries(ds, z.c.Seal)
}

// sealEntries replaces every entry's Vec in ds by seal's form of it (the
// re-used entries have none), on every core: seal must be safe for
// concurrent use.
func sealEntries(ds *DownSummary, seal func(Vec) (Sum, error)) error {
	var todo []*DownEntry
	for _, es := range ds.Entries {
		for j := range es {
			if es[j].Sums != nil {
				todo = append(todo, &es[j])
			}
		}
	}
	return onCores(len(todo), func() (func(i int) error, error) {
		return func(i int) error {
			s, err := seal(todo[i].Sums.(Vec))
			if err != nil {
				return err
			}
			todo[i].Sums = s
			return nil
		}, nil
	})
}

// Place returns x (a pair) times k in node's slots of a width-slot vector.
func (PlainRing) Place(x Sum, node, width int, k uint64, _ Layout) (Sum, error) {
	v := make(Vec, width)
	p := x.(Vec)
	v[2*node], v[2*node+1] = p[0]*int64(k), p[1]*int64(k)
	return v, nil
}

// Place returns x (one ciphertext of a packed pair, the sum of x.N packed
// vectors) times k in node's slots of a width-slot packed vector: the
// plaintext shifted up by 2·node slots, plus the offsets of the x.N·k
// summands in every other slot, so that it unpacks as any packed sum.
func (r PaillierRing) Place(x Sum, node, width int, k uint64, lay Layout) (Sum, error) {
	p := x.(*Packed)
	bits := r.PK.N.BitLen()
	if len(p.C) != 1 || p.W != 2 || node < 0 || 2*node+1 >= width || width > maxWidth || lay.SlotBits < 1 || lay.SlotBits >= bits ||
		lay.ValueBits < 1 || lay.ValueBits >= lay.SlotBits || width*lay.SlotBits >= bits {
		return nil, fmt.Errorf("%w: a re-used gradient sum does not fit the level's packing", ErrWire)
	}
	n := p.N * k
	e := new(big.Int).Lsh(new(big.Int).SetUint64(k), uint(2*node*lay.SlotBits))
	c := r.PK.MulPlain(p.C[0], e)
	off := new(big.Int).Lsh(new(big.Int).SetUint64(n), uint(lay.ValueBits))
	m := new(big.Int)
	for j := width - 1; j >= 0; j-- {
		m.Lsh(m, uint(lay.SlotBits))
		if j != 2*node && j != 2*node+1 {
			m.Add(m, off)
		}
	}
	return &Packed{C: []*paillier.Ciphertext{r.PK.AddPlain(c, m)}, N: n, W: width}, nil
}
