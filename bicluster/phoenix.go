package bicluster

import (
	"fmt"
	"math"
	"slices"
)

// Mode is how the global column barycenters are formed from the parties'
// contributions (Ahmad and Khokhar, "Phoenix", §3.1).
type Mode string

const (
	// Exact aggregates each column's numerator Σ w·ρ and denominator Σ w
	// over all parties' rows separately and divides after decryption: the
	// true barycenter of the union of the rows. The default.
	Exact Mode = "exact"
	// MeanOfMeans is the paper's μ_G = Σ_i μ_ij / n: each party contributes
	// its local barycenter μ_ij and a count of 1 for each column it has
	// weight in; the mean is over those parties.
	MeanOfMeans Mode = "mean-of-means"
)

// ParseMode parses a mode as written in a job spec; "" is Exact.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", string(Exact):
		return Exact, nil
	case string(MeanOfMeans):
		return MeanOfMeans, nil
	}
	return "", fmt.Errorf("%w: unknown mode %q (want exact or mean-of-means)", ErrParams, s)
}

// Contribution is one party's share of the column barycenters for one
// iteration: two vectors over the columns that are summed over the parties
// by secure aggregation (secureagg sums fixed-point vectors; send Num and
// Den as one vector of 2·cols values or as two aggregations with Step.Sub).
// The barycenter of column j is ΣNum_j / ΣDen_j.
type Contribution struct {
	Num []float64 `msgpack:"num"`
	Den []float64 `msgpack:"den"`
}

// Vector is the contribution as one vector, Num then Den, for one
// secure aggregation.
func (c Contribution) Vector() []float64 { return slices.Concat(c.Num, c.Den) }

// ContributionFromVector splits a summed Vector back into Num and Den.
func ContributionFromVector(v []float64, cols int) (Contribution, error) {
	if cols < 1 || len(v) != 2*cols {
		return Contribution{}, fmt.Errorf("%w: aggregated vector has %d values, want 2×%d", ErrParams, len(v), cols)
	}
	return Contribution{Num: slices.Clone(v[:cols]), Den: slices.Clone(v[cols:])}, nil
}

// PartyState is what a party keeps between iterations: its local row
// order (positions to row indices). Nil means index order (before the
// first iteration).
type PartyState struct {
	RowOrder []int `msgpack:"row_order"`
}

// Round is one party's crossing-minimisation iteration (Phoenix §3.1),
// a pure function of its matrix, its state and the public
// column order: it re-sorts its rows by their barycenters under colOrder
// (Phoenix eq. (2), local) and returns the new state and its contribution
// to the column barycenters. Row ranks are normalised to [0, 1],
// ρ = position/(rows−1) (0.5 for a single row), so a party's weight in
// the barycenters does not grow with its number of rows.
func Round(m *Matrix, st PartyState, colOrder []int, mode Mode) (PartyState, Contribution, error) {
	rows, err := SortRows(m, colOrder, st.RowOrder)
	if err != nil {
		return st, Contribution{}, err
	}
	c, err := contribution(m, rows, mode)
	if err != nil {
		return st, Contribution{}, err
	}
	return PartyState{RowOrder: rows}, c, nil
}

// contribution computes a party's Num and Den for its rows in rowOrder.
func contribution(m *Matrix, rowOrder []int, mode Mode) (Contribution, error) {
	if mode != Exact && mode != MeanOfMeans {
		return Contribution{}, fmt.Errorf("%w: mode %q", ErrParams, mode)
	}
	c := Contribution{Num: make([]float64, m.Cols), Den: make([]float64, m.Cols)}
	for pos, r := range rowOrder {
		rho := 0.5
		if m.Rows > 1 {
			rho = float64(pos) / float64(m.Rows-1)
		}
		for j, x := range m.Row(r) {
			w := weight(x)
			c.Num[j] += w * rho
			c.Den[j] += w
		}
	}
	if mode == MeanOfMeans {
		for j := range c.Num {
			if c.Den[j] > 0 {
				c.Num[j] /= c.Den[j] // μ_ij
				c.Den[j] = 1
			}
		}
	}
	return c, nil
}

// Aggregate adds two contributions (the plaintext fold of secure
// aggregation, in any order).
func Aggregate(a, b Contribution) (Contribution, error) {
	if len(a.Num) != len(b.Num) || len(a.Den) != len(b.Den) || len(a.Num) != len(a.Den) {
		return Contribution{}, fmt.Errorf("%w: contributions of %d/%d and %d/%d columns", ErrColumns, len(a.Num), len(a.Den), len(b.Num), len(b.Den))
	}
	out := Contribution{Num: slices.Clone(a.Num), Den: slices.Clone(a.Den)}
	for j := range out.Num {
		out.Num[j] += b.Num[j]
		out.Den[j] += b.Den[j]
	}
	return out, nil
}

// UpdateColumns is the coordinator's (or every party's) public step after
// aggregation (Phoenix §3.1 and §3.5): the global barycenter of column
// j is Num_j/Den_j; columns are sorted by it starting from colOrder, ties
// and columns without weight (Den_j ≤ 0, placed last) keeping their order
// in colOrder. It reports whether the order changed.
func UpdateColumns(sum Contribution, colOrder []int) ([]int, bool, error) {
	n := len(colOrder)
	if len(sum.Num) != n || len(sum.Den) != n {
		return nil, false, fmt.Errorf("%w: aggregate of %d/%d columns for %d columns", ErrColumns, len(sum.Num), len(sum.Den), n)
	}
	if err := checkOrder("column", colOrder, n); err != nil {
		return nil, false, err
	}
	bary := make([]float64, n)
	for j := range bary {
		num, den := sum.Num[j], sum.Den[j]
		if math.IsNaN(num) || math.IsNaN(den) || math.IsInf(num, 0) || math.IsInf(den, 0) {
			return nil, false, fmt.Errorf("%w: aggregated barycenter of column %d is %v/%v", ErrValue, j, num, den)
		}
		bary[j] = math.Inf(1)
		if den > 0 {
			bary[j] = num / den
		}
	}
	next := sortByBarycenter(colOrder, bary)
	return next, !slices.Equal(next, colOrder), nil
}

// Done is the termination test (Phoenix §3.1; Table 1 caps the
// iterations at 5): stop when the global column order did not change in
// iteration iter (1-based) or when iter reached maxIter. Every party
// decides the same, since the column order is public.
func Done(changed bool, iter, maxIter int) bool { return !changed || iter >= maxIter }

// Finish is a party's last local step: its rows re-sorted under the final
// column order (a no-op when the order converged) and its local biclusters
// (Identify with MinRows = p.LocalMinRows), in its own row indices.
func Finish(m *Matrix, st PartyState, colOrder []int, p Params) (PartyState, []Bicluster, error) {
	rows, err := SortRows(m, colOrder, st.RowOrder)
	if err != nil {
		return st, nil, err
	}
	local := p
	local.MinRows = p.LocalMinRows
	bs, err := Identify(m, rows, colOrder, local)
	if err != nil {
		return st, nil, err
	}
	return PartyState{RowOrder: rows}, bs, nil
}
