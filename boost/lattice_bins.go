package boost

// The bins of the lattice path's layouts in the job (docs/boost.md, "Bins
// per layout"). A layout's slot holds every summed node's bins, so the
// class holder's down message to a table is entries × nodes × 2 × bins
// coefficients: laid out for params.bins, a9a's binary columns took 16
// times the coefficients they need, and at depth 6 and 32 bins a level's
// message passed a gigabyte. The class holder encrypts before it sees a
// column, so each party that owns such a table announces, in its load
// report, the most bins any numeric column of its tables has (one number
// per party, not per column or table: the least that sizes the layouts);
// the coordinator commits the announcements and every party lays out,
// sums and reads each table's bin sums for its party's committed number.
//
// What that reveals (the package doc's profile): every member reads in
// the log each announcing party's widest column's number of bins, at most
// params.bins (so, below it, that every numeric column of the party has
// at most that many distinct values). The class holder learns every
// column's number of bins from the decrypted sums anyway.
//
// Every party checks the number before it uses it: the coordinator
// refuses an announcement outside [1, params.bins]; each party refuses a
// committed set that names other parties than the announcing ones, or a
// number outside that range, and its own number unless it is what it
// announced; the lattice messages name the bins they are laid out for,
// which each receiver checks against the log. So a lying coordinator or
// party makes the job fail, naming the field, and nobody reads sums laid
// out for another number than the log's.

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cohortdm/cohort/joinprop"
)

// ErrLayoutBins: the bins announced or committed for the lattice path's
// layouts do not fit the job.
var ErrLayoutBins = errors.New("boost: the announced bins of the lattice layouts do not fit")

// announcers are the parties that announce their widest column's bins on
// the lattice path: every party but the class holder's that owns a table
// with a numeric column (the class holder's own tables are summed in the
// clear).
func announcers(g *joinprop.Graph) []string {
	var out []string
	for i := 1; i < len(g.Tables); i++ {
		q := g.Tables[i].Party
		if q != g.Tables[0].Party && numericCount(g, i) > 0 && !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	slices.Sort(out)
	return out
}

// widest is the party's announcement: the most bins of any numeric column
// of its tables that the class holder lays out for (0: none).
func (s *session) widest() int {
	if s.owns(0) {
		return 0
	}
	w := 0
	for _, i := range s.own {
		if l := s.locals[i]; l != nil && len(l.feats) > 0 {
			w = max(w, l.maxBins())
		}
	}
	return w
}

// layoutBins is the coordinator's: the bins it commits, by announcing
// party, each as announced, which must lie in [1, params.bins].
func layoutBins(g *joinprop.Graph, p Params, rs map[string]loadOutput) (map[string]int, error) {
	out := map[string]int{}
	for _, q := range announcers(g) {
		b := rs[q].Bins
		if b < 1 || b > p.Bins {
			return nil, fmt.Errorf("%w: party %s announced bins outside 1 to params.bins", ErrLayoutBins, q)
		}
		out[q] = b
	}
	return out, nil
}

// checkBins takes the committed bins of a load decision once it has
// checked them: on the lattice path exactly the announcing parties, each
// in [1, params.bins], the party's own as it announced; else none.
func (s *session) checkBins(d loadDecision) error {
	if d.Backend != BackendLattice {
		if len(d.Bins) > 0 {
			return fmt.Errorf("%w: bins committed for the %s backend", ErrLayoutBins, BackendPaillier)
		}
		return nil
	}
	if want := announcers(s.g); !slices.Equal(slices.Sorted(maps.Keys(d.Bins)), want) {
		return fmt.Errorf("%w: the committed bins name other parties than those that announce", ErrLayoutBins)
	}
	for q, b := range d.Bins {
		if b < 1 || b > s.prm.Bins {
			return fmt.Errorf("%w: the committed bins of party %s lie outside 1 to params.bins", ErrLayoutBins, q)
		}
	}
	if w := s.widest(); w > 0 && d.Bins[s.p.Self()] != w {
		return fmt.Errorf("%w: the committed bins of party %s are not what it announced", ErrLayoutBins, s.p.Self())
	}
	s.bins = d.Bins
	return nil
}

// tableBins is the bins table i's layouts have: its party's committed
// number.
func (s *session) tableBins(i int) int { return s.bins[s.g.Tables[i].Party] }
