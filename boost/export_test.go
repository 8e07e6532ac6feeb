package boost

import (
	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/table"
)

// WithMaxNodes is c with at most n open nodes to a layout (0: as many as
// fit), for tests of levels that take several layouts.
func WithMaxNodes(c LatticeCrypto, n int) LatticeCrypto {
	c.maxNodes = n
	return c
}

// ChooseBackend is the coordinator's choice of the backend from
// params.backend and which parties reported holding the lattice key.
func ChooseBackend(want string, g *joinprop.Graph, holds map[string]bool, parties []string) (string, error) {
	rs := map[string]loadOutput{}
	for q, h := range holds {
		rs[q] = loadOutput{Lattice: h}
	}
	return chooseBackend(want, g, rs, parties)
}

// MaxBins is the most bins of any of the table's columns, which its party
// announces on the lattice path.
func (l *Local) MaxBins() int { return l.maxBins() }

// ColBins is each numeric column's number of bins, which the lattice
// path's bin sums name to the class holder.
func (l *Local) ColBins() []int { return l.colBins() }

// PackGroups is the number of groups columns of these bins pack into on
// the lattice path at width positions a group.
func PackGroups(bins []int, width int) int {
	p, err := packColumns(bins, width)
	if err != nil {
		return -1
	}
	return p.groups
}

// Kept is a party's kept Ws after TrainLatticeKept.
type Kept = keptWeights

// TrainLatticeKept is TrainLattice with each party's kept Ws (nil where
// the cap keeps none).
func TrainLatticeKept(g *joinprop.Graph, data map[string]*table.Table, p Params, c LatticeCrypto) (*Model, map[string]*Kept, error) {
	return trainLattice(g, data, p, c)
}

// KeptEntryBytes is the most one kept W takes under pk, its terms and
// bookkeeping included, and its polynomial's share.
func KeptEntryBytes(pk *lattice.PublicKey) (poly, entry int64) { return keptEntryBytes(pk.Params) }

// LayoutNodes is the class holder's grouping of k open nodes into
// layouts for bins bins and entries entries (lattice_layouts.go).
func LayoutNodes(pk *lattice.PublicKey, bins, k, entries int) []int {
	return layoutNodes(pk.Params, bins, k, entries, 0)
}

// WithLayoutNodes is k with at most n nodes a lattice layout, so that
// small cases' levels take several layouts.
func WithLayoutNodes(k Kind, n int) Kind {
	k.layoutNodes = n
	return k
}

// WithDownPart is k with down messages' parts bounded by n bytes, so that
// small cases' down messages come in several parts.
func WithDownPart(k Kind, n int) Kind {
	k.downPart = n
	return k
}
