package boost

import "github.com/cohortdm/cohort/lattice"

// The lattice path's kept Ws (sumGroups): a table's party keeps each
// group of columns' plaintext W per chunk and layout, so that a later
// sum over the same rows skips W's NTT (lattice.WeightCache; docs/boost.md, "A faster
// lattice path"). They cost memory and buy CPU, and a node's memory is
// its operator's, not the spec's: the cap is a node setting
// (node.yaml boost_lattice_cache_bytes, Kind.LatticeCacheBytes), one
// budget for every table of the party in a job. The model does not
// depend on it: a W not kept is made again, the same W.

// DefaultLatticeCacheBytes is the kept Ws' cap when the node sets none:
// at default_credit's size (24,000 rows, 32 bins) one group of columns'
// Ws (lattice_pack.go) take 37 MB at one node a slot, so the host's 10
// columns, packed into 4 groups, keep theirs and, from the second level
// on, skip their NTTs (docs/boost.md has the trade measured at several
// caps, before the columns were packed: a W per column then).
const DefaultLatticeCacheBytes = 256 << 20

// NoLatticeCache, as Kind.LatticeCacheBytes, keeps no W.
const NoLatticeCache = -1

// keptWeights is one budget of kept Ws shared by a party's tables: each
// table numbers its groups of columns from its own base, so that no two
// tables' groups share a key.
type keptWeights struct {
	cache *lattice.WeightCache
	next  int // the next table's first column number
}

// newKeptWeights returns a budget of at most cap bytes in all (see
// CheckLatticeCacheBytes for 0 and -1), or nil for none.
// lattice.WeightCache counts each W's polynomial, the terms it keeps
// beside it and its record (lattice.KeptBytes), so the cap is its budget
// as it is.
func newKeptWeights(cap int64) *keptWeights {
	switch {
	case cap == 0:
		cap = DefaultLatticeCacheBytes
	case cap < 0:
		return nil
	}
	return &keptWeights{cache: lattice.NewWeightCache(int(cap))}
}

// keptEntryBytes is the most one kept W takes under p: its polynomial
// (the first result) and, with its chunk's most terms, all it takes (the
// second). A chunk's terms are at most one per coefficient pair of its
// row slots (a row slot holds 2·nodes·bins coefficients and a row at most
// bins terms, one per position of its group, by groupTermsFrom), so at
// most Slots/2.
func keptEntryBytes(p lattice.Params) (poly, entry int64) {
	return int64(p.CiphertextBytes() / 2), int64(lattice.KeptBytes(p, p.Slots()/2))
}

// table gives a table of cols columns its base: numbers base to
// base+cols-1 are its own (its groups, at most one a column).
func (k *keptWeights) table(cols int) int {
	base := k.next
	k.next += cols
	return base
}

// Bytes is the size of the Ws kept, their terms and records included.
func (k *keptWeights) Bytes() int {
	if k == nil {
		return 0
	}
	return k.cache.Bytes()
}
