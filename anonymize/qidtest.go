package anonymize

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/table"
)

// Lodha and Thomas, "Probabilistic Anonymity" (PinKDD 2007): a test of
// which columns can re-identify, to run before anything is shared, and
// optimal one-dimensional k-anonymity.

// MaxUniqueFraction is the largest expected fraction of rows of a universe
// of n rows that a set of columns with D possible value combinations
// identifies uniquely (their Theorems 1–2): D/(e·n) when D ≤ n, e^(−n/D)
// otherwise.
func MaxUniqueFraction(D, n float64) float64 {
	if D <= n {
		return D / (math.E * n)
	}
	return math.Exp(-n / D)
}

// QIReport is the test of one set of columns of a table.
type QIReport struct {
	Columns    []string `json:"columns"`
	Distinct   []int    `json:"distinct"`   // values per column in the table
	D          float64  `json:"d"`          // Π distinct: combinations under the multiple-domain assumption
	Singletons int      `json:"singletons"` // rows of the table alone on these columns (S)
	F1         float64  `json:"f1"`         // S / rows: the fraction the table itself shows unique
	F2         float64  `json:"f2"`         // MaxUniqueFraction(D, universe): the bound for the universe
	KAnon      float64  `json:"k_anon"`     // universe / D, at least 1: expected rows per combination
	QI         bool     `json:"qi"`         // F1 ≥ α or F2 ≥ α: the columns may re-identify
}

// QITest tests the columns of t as an α-quasi-identifier (their Def. 2)
// against a universe of the given size (the population the table is drawn
// from; the table's own rows against a targeted adversary).
func QITest(t *table.Table, cols []string, universe, alpha float64) (QIReport, error) {
	r := QIReport{Columns: cols, D: 1}
	var cs []*table.Column
	for _, c := range cols {
		col, err := t.Column(c)
		if err != nil {
			return r, fmt.Errorf("%w: column %q: %w", ErrRequirement, c, err)
		}
		cs = append(cs, col)
		seen := map[string]bool{}
		for _, v := range col.Str {
			seen[v] = true
		}
		r.Distinct = append(r.Distinct, len(seen))
		r.D *= float64(len(seen))
	}
	count := map[string]int{}
	var b strings.Builder
	for row := range t.NumRows() {
		b.Reset()
		for _, c := range cs {
			b.WriteString(c.Str[row])
			b.WriteByte(0)
		}
		count[b.String()]++
	}
	for _, n := range count {
		if n == 1 {
			r.Singletons++
		}
	}
	if t.NumRows() > 0 {
		r.F1 = float64(r.Singletons) / float64(t.NumRows())
	}
	r.F2 = MaxUniqueFraction(r.D, universe)
	r.KAnon = math.Max(1, universe/r.D)
	r.QI = r.F1 >= alpha || r.F2 >= alpha
	return r, nil
}

// OneDimK is optimal one-dimensional k-anonymity (Lodha and Thomas §4.1):
// the values sorted and cut into contiguous clusters of k to 2k−1 values,
// each published as its median, minimising the sum of |x − median| (the
// k-median cost), by dynamic programming in O(n·k) after the sort. It
// returns the clusters (indices into values) and the cost.
func OneDimK(values []float64, k int) ([][]int, float64, error) {
	n := len(values)
	if k < 1 || k > n {
		return nil, 0, fmt.Errorf("%w: k = %d with %d values", ErrRequirement, k, n)
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmpFloat(values[a], values[b]) })
	x := make([]float64, n)
	for i, j := range idx {
		x[i] = values[j]
	}
	prefix := make([]float64, n+1)
	for i, v := range x {
		prefix[i+1] = prefix[i] + v
	}
	cost := func(a, b int) float64 { // cluster x[a:b], median x[(a+b-1)/2]
		m := (a + b - 1) / 2
		return x[m]*float64(m-a) - (prefix[m] - prefix[a]) + (prefix[b] - prefix[m+1]) - x[m]*float64(b-m-1)
	}
	C := make([]float64, n+1)
	from := make([]int, n+1)
	for j := 1; j <= n; j++ {
		C[j] = math.Inf(1)
		for size := k; size < 2*k && size <= j; size++ {
			if c := C[j-size] + cost(j-size, j); c < C[j] {
				C[j], from[j] = c, j-size
			}
		}
	}
	if math.IsInf(C[n], 1) {
		return nil, 0, fmt.Errorf("%w: %d values cannot be cut into clusters of %d to %d", ErrRequirement, n, k, 2*k-1)
	}
	var clusters [][]int
	for j := n; j > 0; j = from[j] {
		clusters = append(clusters, slices.Clone(idx[from[j]:j]))
	}
	slices.Reverse(clusters)
	return clusters, C[n], nil
}
