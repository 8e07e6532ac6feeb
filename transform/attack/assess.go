package attack

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/cohortdm/cohort/transform"
	"github.com/cohortdm/cohort/tree"
)

// Assessment: the paper's attacks run against one key, the one about to
// be used, so that its owner sees what the recoded table still reveals
// before sending it (`cohort data attack`). The figures of the paper (and
// of our figures tests) are medians over fresh keys; here the key is
// fixed and the trials draw fresh knowledge points only.

// Errors callers may tell apart with errors.Is.
var (
	// ErrOptions marks bad assessment options.
	ErrOptions = errors.New("attack: invalid options")
	// ErrMismatch marks a table whose values the key does not hold.
	ErrMismatch = errors.New("attack: table and key differ")
)

// Options are the hacker and the trials of an assessment.
type Options struct {
	// Good and Bad are the knowledge points per column and trial (§6.1:
	// an expert has 4 good ones, a knowledgeable hacker 2).
	Good, Bad int
	// Rho is the crack radius as a share of each column's range width
	// (Definition 1; the paper's figures use 2%).
	Rho float64
	// Trials is the number of draws of knowledge points; Seed seeds them.
	Trials int
	Seed   uint64
}

func (o Options) check() error {
	switch {
	case o.Good < 0 || o.Bad < 0:
		return fmt.Errorf("%w: good and bad knowledge points must be at least 0", ErrOptions)
	case !(o.Rho > 0 && o.Rho < 1):
		return fmt.Errorf("%w: rho must be in (0, 1)", ErrOptions)
	case o.Trials < 1:
		return fmt.Errorf("%w: trials must be at least 1", ErrOptions)
	}
	return nil
}

// rng is the generator of one column's trial.
func (o Options) rng(column string, trial int) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(column))
	return rand.New(rand.NewPCG(o.Seed, h.Sum64()^uint64(trial)))
}

// ColumnRisk is the domain disclosure (Definition 1: the share of the
// column's distinct values a crack function guesses within ρ) of one
// recoded column under each attack.
type ColumnRisk struct {
	Stats transform.ColumnStats `json:"stats"`
	// Rho is the crack radius in the column's units.
	Rho float64 `json:"rho"`
	// FaceValue: the ignorant hacker, who takes recoded values as they are.
	FaceValue float64 `json:"face_value"`
	// Constant: a hacker who guesses the median value for everything, a
	// floor no recoding can lower.
	Constant float64 `json:"constant_guess"`
	// LinReg, Spline, Polyline: curve fitting through the knowledge points
	// (Definition 5), medians over the trials.
	LinReg   float64 `json:"linear_regression"`
	Spline   float64 `json:"spline"`
	Polyline float64 `json:"polyline"`
	// Union, TwoOrMore, Expected: the combination attack (§6.2.2) of the
	// three fits, means over the trials (Combination).
	Union     float64 `json:"combination_union"`
	TwoOrMore float64 `json:"combination_two_or_more"`
	Expected  float64 `json:"combination_expected"`
	// SortingExact and Sorting: the sorting attack in its worst case (§3,
	// Figure 11: the true minimum and direction), cracks exact and within
	// ρ. On an integer column the hacker maps the i-th recoded value to
	// min + i, as in the paper; on another, to min + i·(max − min)/(n − 1)
	// (he knows the maximum too).
	SortingExact float64 `json:"sorting_exact"`
	Sorting      float64 `json:"sorting"`
	// SortingProb is §5.4's crack probability of the sorting attack, the
	// mean over values (integer columns; −1 otherwise).
	SortingProb float64 `json:"sorting_probability"`
}

// Best is the largest domain disclosure of the hacker's attacks (the
// fits, their union and the sorting attack).
func (r ColumnRisk) Best() float64 {
	return max(r.FaceValue, r.LinReg, r.Spline, r.Polyline, r.Union, r.Sorting)
}

// AssessColumn runs every attack on one recoded column's key. rows, if
// not nil, holds each row's value index (ValueIndex): the constant guess
// is then the median row value, else the median distinct value.
func AssessColumn(c *transform.ColumnKey, rows []int32, o Options) (ColumnRisk, error) {
	if err := o.check(); err != nil {
		return ColumnRisk{}, err
	}
	if !c.Recoded() || len(c.Values) == 0 {
		return ColumnRisk{}, fmt.Errorf("%w: column %q is not recoded", ErrOptions, c.Name)
	}
	s := c.Stats()
	r := ColumnRisk{Stats: s, Rho: o.Rho * s.Width}
	r.FaceValue = Share(Cracked(c, Fit(LinReg, nil), r.Rho))
	med := c.Values[(len(c.Values)-1)/2]
	if len(rows) > 0 {
		x := make([]float64, len(rows))
		for j, v := range rows {
			x[j] = c.Values[v]
		}
		med = Median(x)
	}
	r.Constant = Share(Cracked(c, func(float64) float64 { return med }, r.Rho))
	sorting := worstSorting(c, s)
	r.SortingExact = Share(Cracked(c, sorting, 0))
	r.Sorting = Share(Cracked(c, sorting, r.Rho))
	r.SortingProb = -1
	if s.Integer {
		r.SortingProb = sortingProb(c, r.Rho)
	}
	var lin, spl, pol []float64
	for i := range o.Trials {
		kps := KnowledgePoints(c, o.Good, o.Bad, r.Rho, o.rng(c.Name, i))
		l := Cracked(c, Fit(LinReg, kps), r.Rho)
		sp := Cracked(c, Fit(Spline, kps), r.Rho)
		p := Cracked(c, Fit(Polyline, kps), r.Rho)
		lin, spl, pol = append(lin, Share(l)), append(spl, Share(sp)), append(pol, Share(p))
		cmb := Combine(l, sp, p)
		r.Union += cmb.Union / float64(o.Trials)
		r.TwoOrMore += cmb.TwoOrMore / float64(o.Trials)
		r.Expected += cmb.Expected / float64(o.Trials)
	}
	r.LinReg, r.Spline, r.Polyline = Median(lin), Median(spl), Median(pol)
	return r, nil
}

// worstSorting is the sorting attack knowing the true minimum and
// direction (and, on a column that is not integer, the maximum).
func worstSorting(c *transform.ColumnKey, s transform.ColumnStats) func(float64) float64 {
	step := 1.0
	if n := len(c.Values); !s.Integer && n > 1 {
		step = (c.Values[n-1] - c.Values[0]) / float64(n-1)
	}
	return Sorting(c, c.Values[0], step, c.Direction)
}

// sortingProb is the mean over values of SortingProb in the integer
// domain [min, max], the hacker knowing the direction: a value with r
// recoded values before it in that order has r below and n − 1 − r above.
func sortingProb(c *transform.ColumnKey, rho float64) float64 {
	n := len(c.Values)
	imgs := slices.Clone(c.Images)
	slices.Sort(imgs)
	lo, hi := c.Values[0], c.Values[n-1]
	sum := 0.0
	for i, y := range c.Images {
		r := sort.SearchFloat64s(imgs, y)
		if c.Direction == transform.AntiMonotone {
			r = n - 1 - r
		}
		sum += SortingProb(r, n-1-r, lo, hi, c.Values[i], rho)
	}
	return sum / float64(n)
}

// ValueIndex maps a column's original row values to their indices in the
// key (for SubspaceRisk); a value the key lacks is an error naming the
// row, never the value.
func ValueIndex(c *transform.ColumnKey, x []float64) ([]int32, error) {
	out := make([]int32, len(x))
	for j, v := range x {
		i, ok := slices.BinarySearch(c.Values, v)
		if !ok {
			return nil, fmt.Errorf("%w: column %q, row %d: a value the key does not hold (another table?)", ErrMismatch, c.Name, j+1)
		}
		out[j] = int32(i)
	}
	return out, nil
}

// Subspace is the subspace association disclosure (Definition 2) of the
// columns cs with row indices rank (ValueIndex), the median over trials
// of the share of rows cracked in every column: by polyline fitting, or
// where sorting[j] is set by the worst-case sorting attack.
func Subspace(cs []*transform.ColumnKey, rank [][]int32, sorting []bool, o Options) (float64, error) {
	if err := o.check(); err != nil {
		return 0, err
	}
	var risks []float64
	for i := range o.Trials {
		cracked := make([][]bool, len(cs))
		for j, c := range cs {
			s := c.Stats()
			rho := o.Rho * s.Width
			g := worstSorting(c, s)
			if !sorting[j] {
				g = Fit(Polyline, KnowledgePoints(c, o.Good, o.Bad, rho, o.rng(c.Name, i)))
			}
			cracked[j] = Cracked(c, g, rho)
		}
		risks = append(risks, SubspaceRisk(rank, cracked))
	}
	return Median(risks), nil
}

// PatternRisk is the pattern disclosure (Definition 3) of a tree mined
// on the recoded table, decoded the tree with the original thresholds:
// per trial the hacker fits a polyline through fresh knowledge points of
// every recoded column; the median and the largest share of cracked
// root-to-leaf paths, and the number of paths.
func PatternRisk(mined, decoded *tree.Tree, key *transform.Key, o Options) (median, worst float64, paths int, err error) {
	if err := o.check(); err != nil {
		return 0, 0, 0, err
	}
	var risks []float64
	for i := range o.Trials {
		crack, rho := map[string]func(float64) float64{}, map[string]float64{}
		for _, c := range key.Columns {
			if c.Recoded() && len(c.Values) > 0 {
				rho[c.Name] = o.Rho * c.Stats().Width
				crack[c.Name] = Fit(Polyline, KnowledgePoints(c, o.Good, o.Bad, rho[c.Name], o.rng(c.Name, i)))
			}
		}
		ps, err := Paths(mined, decoded, crack, rho)
		if err != nil {
			return 0, 0, 0, err
		}
		n := 0
		for _, p := range ps {
			if p.Cracked {
				n++
			}
		}
		paths = len(ps)
		risks = append(risks, float64(n)/float64(len(ps)))
	}
	return Median(risks), slices.Max(risks), paths, nil
}
