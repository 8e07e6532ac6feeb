package boost

import "github.com/cohortdm/cohort/joinprop"

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
