package anonymize

import (
	"context"
	"errors"
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
	sets := [][]string{cols}
	for _, c := range cols {
		if _, err := t.Column(c); err != nil {
			return QIReport{Columns: cols, D: 1}, fmt.Errorf("%w: column %q: %w", ErrRequirement, c, err)
		}
		sets = append(sets, []string{c})
	}
	groups := make([][]table.Group, len(sets))
	for i, set := range sets {
		groups[i] = countGroups(t, set)
	}
	return qiReport(cols, groups[1:], groups[0], t.NumRows(), universe, alpha), nil
}

// countGroups counts the combinations of set's values over t's rows.
func countGroups(t *table.Table, set []string) []table.Group {
	var cs []*table.Column
	for _, c := range set {
		col, _ := t.Column(c)
		cs = append(cs, col)
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
	out := make([]table.Group, 0, len(count))
	for _, n := range count {
		out = append(out, table.Group{Count: n})
	}
	return out
}

// QITests tests each set of columns of the table agg reads, as QITest
// does, from the counts of their value combinations, which agg computes
// where the table lives (one query per set and column for a database,
// one pass over a file): no row is loaded. A universe of 0 or less is the
// table's rows, which it returns.
func QITests(ctx context.Context, agg table.Aggregator, sets [][]string, universe, alpha float64) (int, float64, []QIReport, error) {
	var all [][]string
	singles := map[string]int{}
	for i, set := range sets {
		all = append(all, set)
		for _, c := range set {
			if _, ok := singles[c]; !ok {
				singles[c] = -1
			}
		}
		if len(set) == 1 && singles[set[0]] < 0 {
			singles[set[0]] = i
		}
	}
	for _, set := range sets {
		for _, c := range set {
			if singles[c] < 0 {
				singles[c] = len(all)
				all = append(all, []string{c})
			}
		}
	}
	rows, groups, err := agg.GroupCounts(ctx, all)
	if errors.Is(err, table.ErrNoColumn) {
		return 0, 0, nil, fmt.Errorf("%w: %w", ErrRequirement, err)
	}
	if err != nil {
		return 0, 0, nil, err
	}
	if universe <= 0 {
		universe = float64(rows)
	}
	out := make([]QIReport, len(sets))
	for i, set := range sets {
		var per [][]table.Group
		for _, c := range set {
			per = append(per, groups[singles[c]])
		}
		out[i] = qiReport(set, per, groups[i], rows, universe, alpha)
	}
	return rows, universe, out, nil
}

// qiReport is the test of cols from the combinations of each column's
// values (perColumn) and of theirs together (joint) over rows rows.
func qiReport(cols []string, perColumn [][]table.Group, joint []table.Group, rows int, universe, alpha float64) QIReport {
	r := QIReport{Columns: cols, D: 1}
	for _, g := range perColumn {
		r.Distinct = append(r.Distinct, len(g))
		r.D *= float64(len(g))
	}
	for _, g := range joint {
		if g.Count == 1 {
			r.Singletons++
		}
	}
	if rows > 0 {
		r.F1 = float64(r.Singletons) / float64(rows)
	}
	r.F2 = MaxUniqueFraction(r.D, universe)
	r.KAnon = math.Max(1, universe/r.D)
	r.QI = r.F1 >= alpha || r.F2 >= alpha
	return r
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
