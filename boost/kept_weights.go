package boost

import (
	"unsafe"

	"github.com/cohortdm/cohort/lattice"
)

// The lattice path's kept Ws (sumColumns): a table's party keeps each
// column's plaintext W per chunk and layout, so that a later sum over the
// same rows skips W's NTT (lattice.WeightCache; docs/boost.md, "A faster
// lattice path"). They cost memory and buy CPU, and a node's memory is
// its operator's, not the spec's: the cap is a node setting
// (node.yaml boost_lattice_cache_bytes, Kind.LatticeCacheBytes), one
// budget for every table of the party in a job. The model does not
// depend on it: a W not kept is made again, the same W.

// DefaultLatticeCacheBytes is the kept Ws' cap when the node sets none:
// at default_credit's size (24,000 rows, 32 bins) one column's Ws take
// 37 MB at one node a slot, so a 10-column table keeps its first two
// levels' Ws and, from the second tree on, skips their NTTs (docs/boost.md
// has the trade measured at several caps).
const DefaultLatticeCacheBytes = 256 << 20

// NoLatticeCache, as Kind.LatticeCacheBytes, keeps no W.
const NoLatticeCache = -1

// keptWeights is one budget of kept Ws shared by a party's tables: each
// table numbers its columns from its own base, so that no two tables'
// columns share a key.
type keptWeights struct {
	cache *lattice.WeightCache
	next  int // the next table's first column number
}

// newKeptWeights returns a budget of at most cap bytes in all (see
// CheckLatticeCacheBytes for 0 and -1), or nil for none.
//
// lattice.WeightCache counts each W (one polynomial modulo Q), not the
// terms it keeps beside it to compare a later chunk's with. A chunk's
// terms are at most one per coefficient pair of its row slots (a row
// slot holds 2·nodes·bins coefficients and a row at most bins terms, one
// per bin), so at most Slots/2 of them; the cache is given the share of
// cap that leaves room for them, so that W and terms together stay
// within cap whatever the layout.
func newKeptWeights(pk *lattice.PublicKey, cap int64) *keptWeights {
	switch {
	case cap == 0:
		cap = DefaultLatticeCacheBytes
	case cap < 0:
		return nil
	}
	return &keptWeights{cache: lattice.NewWeightCache(weightsBudget(pk.Params, cap))}
}

// keptOverhead is a kept W's bytes beyond its polynomial and terms: the
// map entry, the weights record and the slices' headers, rounded up.
const keptOverhead = 256

// keptEntryBytes is the most one kept W takes under p: its polynomial
// (the first result, all of it), its chunk's worst-case terms and
// keptOverhead (the second).
func keptEntryBytes(p lattice.Params) (poly, entry int64) {
	poly = int64(p.CiphertextBytes() / 2)
	terms := int64(p.Slots()/2) * int64(unsafe.Sizeof(lattice.BinTerm{}))
	return poly, poly + terms + keptOverhead
}

// weightsBudget is the share of cap the Ws' polynomials may take: as many
// as fit in cap at their worst-case entry size.
func weightsBudget(p lattice.Params, cap int64) int {
	poly, entry := keptEntryBytes(p)
	return int(cap / entry * poly)
}

// table gives a table of cols columns its column base: columns base to
// base+cols-1 are its own.
func (k *keptWeights) table(cols int) int {
	base := k.next
	k.next += cols
	return base
}

// Bytes is the size of the Ws kept (their polynomials).
func (k *keptWeights) Bytes() int {
	if k == nil {
		return 0
	}
	return k.cache.Bytes()
}
