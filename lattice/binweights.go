package lattice

// Kept plaintexts W of BinSummer (binsums.go). A party that sums the bins
// of the same rows again, with other encrypted values, multiplies by the
// same W: boost's lattice path sums every column of a table at each level
// of every tree, and while the rows it is sent (the join values with rows
// in open nodes) and their bins stay the same, only the class holder's
// gradients change. W's NTT was the largest share of that path's CPU
// (docs/boost.md, "The lattice path"), so a WeightCache keeps each chunk's
// W, in NTT and Montgomery form, with the terms it was made from, and a
// later sum whose chunk has exactly those terms, in the same layout, takes
// it instead of transforming again. Nothing about W leaves the party: the
// cache is memory only, and the product and its mask are as before.

import (
	"slices"
	"sync"
	"unsafe"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
)

// WeightCache keeps chunks' W for BinSummer.SumTermsKept up to a byte
// budget (first come, first kept: a sum offered past the budget is not
// kept). The budget counts everything a kept W holds: its polynomial, the
// terms kept beside it to compare a later chunk's with, and a fixed
// allowance for the record and the map's entry (weightOverhead), so that
// an owner can give it the memory it means to spend and no margin. Safe for concurrent use, as long as no two sums of the same
// column run at once (each column's entries are read and replaced only by
// the sum of that column).
type WeightCache struct {
	mu     sync.Mutex
	budget int
	used   int
	m      map[weightKey]*weights
}

// weightKey names a chunk's W: its layout, the caller's column, the chunk.
type weightKey struct{ bins, nodes, col, chunk int }

// weights is a kept W and the terms it was made from.
type weights struct {
	terms []BinTerm
	w     ring.Poly
}

// NewWeightCache returns a cache holding at most budget bytes of kept Ws
// (KeptBytes each: a chunk's W is one polynomial modulo Q,
// Params.CiphertextBytes/2, beside its terms).
func NewWeightCache(budget int) *WeightCache {
	return &WeightCache{budget: budget, m: map[weightKey]*weights{}}
}

// weightOverhead is a kept W's bytes beyond its polynomial's coefficients
// and its terms: the weights record, the slices' and the polynomial's
// headers and the map's entry, rounded up.
const weightOverhead = 256

// termBytes is one kept BinTerm's size.
const termBytes = int(unsafe.Sizeof(BinTerm{}))

// KeptBytes is what a WeightCache counts for a W under p kept with terms
// terms.
func KeptBytes(p Params, terms int) int {
	return p.CiphertextBytes()/2 + terms*termBytes + weightOverhead
}

// keptBytes is what the cache counts for w kept with terms terms:
// KeptBytes of w's parameters.
func keptBytes(w ring.Poly, terms int) int {
	return w.N()*len(w.Coeffs)*8 + terms*termBytes + weightOverhead
}

// Bytes is the size of the Ws kept, their terms and records included
// (KeptBytes each).
func (c *WeightCache) Bytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// SumTermsKept is SumTerms with each chunk's W taken from kept when kept
// holds it for column col (any number the caller gives its columns) with
// this chunk's terms in this layout, and offered to kept otherwise. The
// result decrypts to the same sums as SumTerms'.
func (s *BinSummer) SumTermsKept(cts []*rlwe.Ciphertext, terms []BinTerm, kept *WeightCache, col int) (*rlwe.Ciphertext, error) {
	out, err := s.sumEach([][]*rlwe.Ciphertext{cts}, terms, kept, col)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// chunkWeights returns chunk k's W for its terms (from kept, or made in
// s.w and offered to kept), and whether any term counts.
func (s *BinSummer) chunkWeights(terms []BinTerm, k int, kept *WeightCache, col int) (ring.Poly, bool) {
	if kept == nil {
		return s.w, s.weigh(terms, k)
	}
	key := weightKey{bins: s.l.bins, nodes: s.l.nodes, col: col, chunk: k}
	if w := kept.get(key); w != nil && slices.Equal(w.terms, terms) {
		return w.w, true // kept only when some term counts
	}
	if !s.weigh(terms, k) {
		return s.w, false
	}
	kept.offer(key, terms, s.w)
	return s.w, true
}

func (c *WeightCache) get(k weightKey) *weights {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

// offer keeps a copy of w and terms under k, replacing what k held, if
// the budget allows.
func (c *WeightCache) offer(k weightKey, terms []BinTerm, w ring.Poly) {
	size := keptBytes(w, len(terms))
	c.mu.Lock()
	old := c.m[k]
	if old != nil {
		c.used -= keptBytes(old.w, len(old.terms))
		delete(c.m, k)
	}
	if c.used+size > c.budget {
		c.mu.Unlock()
		return
	}
	c.used += size
	c.mu.Unlock()
	kw := &weights{terms: make([]BinTerm, len(terms)), w: *w.CopyNew()} // cap len(terms): what KeptBytes counts
	copy(kw.terms, terms)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[k] = kw
}
