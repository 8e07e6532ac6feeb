package bicluster

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/cohortdm/cohort/internal/sorted"
)

// Bicluster is a set of rows similar on a set of columns. Rows and Cols
// are indices into the matrix it was found in, ascending.
type Bicluster struct {
	Rows []int
	Cols []int
	// Score is the mean divergence of the bicluster's cells from its
	// constant model (see Identify); below Params.Delta.
	Score float64
	// Mean is the mean value over the bicluster's cells.
	Mean float64
}

// Cells is the number of cells, |Rows|·|Cols|.
func (b Bicluster) Cells() int { return len(b.Rows) * len(b.Cols) }

// Params configures cHawk and the pure Phoenix steps.
type Params struct {
	// Delta is δ: a bicluster's dissimilarity score, and each of its rows'
	// and columns' divergence from its model, must be below it (Table 1: 0.5).
	Delta float64
	// MinRows and MinCols are the smallest accepted bicluster (no value in
	// the paper; 5 each).
	MinRows, MinCols int
	// Divergence is the Bregman divergence (default I-divergence).
	Divergence Divergence
	// MaxIter caps the crossing-minimisation iterations (Table 1: 5).
	MaxIter int
	// Reach is how many consecutive rejected rows (or columns) the local
	// search steps over before it stops growing in one direction, so that a
	// few rows misplaced by noise do not cut a bicluster (default 10).
	Reach int
	// Gap is how many inactive columns may separate a seed row's active
	// cells within one seed window (default 3): windows tolerate noise
	// but do not join two biclusters that the column order put apart.
	Gap int
	// Epsilon smooths every weight for Itakura–Saito (x ↦ max(x,0)+ε) so
	// it is finite on zeros (default 1e-6). The
	// I-divergence is finite at 0 (B(0; μ) = μ) and is not smoothed.
	Epsilon float64
	// MaxOverlap drops a bicluster when more than this fraction of its cells
	// lie in a larger one already kept (default 0.5); smaller overlaps are
	// kept, so biclusters may overlap.
	MaxOverlap float64
	// LocalMinRows is the smallest local bicluster a Phoenix party keeps
	// (Finish): a party holds only its share of each bicluster's rows, so
	// MinRows applies to the merged global bicluster instead (default 1).
	LocalMinRows int
	// MinLift is how many times a bicluster's mean must exceed its rows'
	// mean on the other columns (default 1.5): biclusters are denser parts
	// of the weighted graph, not even patches of background noise.
	MinLift float64
	// Beta is the merge threshold β of PlainSimilar (default 0.6).
	Beta float64
	// Mode is how Phoenix forms the global column barycenters (default
	// Exact); centralised cHawk is always exact.
	Mode Mode
}

// DefaultParams are the paper's Table 1 settings with the defaults above.
func DefaultParams() Params {
	return Params{Delta: 0.5, MinRows: 5, MinCols: 5, Divergence: IDivergence, MaxIter: 5,
		Reach: 10, Gap: 3, Epsilon: 1e-6, MaxOverlap: 0.5, LocalMinRows: 1, MinLift: 1.5, Beta: 0.6, Mode: Exact}
}

// Check reports the first invalid parameter.
func (p Params) Check() error {
	switch {
	case !(p.Delta > 0):
		return fmt.Errorf("%w: delta %v, want > 0", ErrParams, p.Delta)
	case p.MinRows < 1 || p.MinCols < 1 || p.LocalMinRows < 1:
		return fmt.Errorf("%w: min rows %d, min cols %d, local min rows %d, want ≥ 1", ErrParams, p.MinRows, p.MinCols, p.LocalMinRows)
	case p.Divergence != IDivergence && p.Divergence != ItakuraSaito:
		return fmt.Errorf("%w: divergence %q", ErrParams, p.Divergence)
	case p.MaxIter < 1:
		return fmt.Errorf("%w: max iterations %d, want ≥ 1", ErrParams, p.MaxIter)
	case p.Reach < 0 || p.Gap < 0:
		return fmt.Errorf("%w: reach %d, gap %d, want ≥ 0", ErrParams, p.Reach, p.Gap)
	case !(p.Epsilon > 0):
		return fmt.Errorf("%w: epsilon %v, want > 0", ErrParams, p.Epsilon)
	case !(p.MaxOverlap >= 0 && p.MaxOverlap <= 1):
		return fmt.Errorf("%w: max overlap %v, want in [0, 1]", ErrParams, p.MaxOverlap)
	case !(p.MinLift >= 0) || math.IsInf(p.MinLift, 0):
		return fmt.Errorf("%w: min lift %v, want ≥ 0", ErrParams, p.MinLift)
	case !(p.Beta >= 0):
		return fmt.Errorf("%w: beta %v, want ≥ 0", ErrParams, p.Beta)
	case p.Mode != Exact && p.Mode != MeanOfMeans:
		return fmt.Errorf("%w: mode %q", ErrParams, p.Mode)
	}
	return nil
}

// searcher holds the reordered matrix: w[p·L+q] is the weight of the row
// at position p and the column at position q.
type searcher struct {
	w     []float64
	M, L  int
	p     Params
	found []found
	// rowIn[p] lists the found biclusters holding row position p.
	rowIn [][]int
}

// found is a bicluster in position space.
type found struct {
	rows, cols []int // positions, ascending
	colSet     []bool
	score, mu  float64 // mu is the smoothed mean (see eps)
}

// Identify finds biclusters in m reordered by rowOrder and colOrder (the
// result of crossing minimisation): cHawk's local search, as the package
// doc reconstructs it (the proceedings give only its inputs and outputs). Biclusters are returned
// in m's indices, largest first (ties by first row, then first column).
func Identify(m *Matrix, rowOrder, colOrder []int, p Params) ([]Bicluster, error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	if err := p.Check(); err != nil {
		return nil, err
	}
	if err := checkOrder("row", rowOrder, m.Rows); err != nil {
		return nil, err
	}
	if err := checkOrder("column", colOrder, m.Cols); err != nil {
		return nil, err
	}
	s := &searcher{w: make([]float64, m.Rows*m.Cols), M: m.Rows, L: m.Cols, p: p, rowIn: make([][]int, m.Rows)}
	for pr, r := range rowOrder {
		row := m.Row(r)
		for q, c := range colOrder {
			s.w[pr*s.L+q] = weight(row[c])
		}
	}
	for pr := range s.M {
		for _, J := range s.windows(pr) {
			if s.covered(pr, J) {
				continue
			}
			if f, ok := s.grow(pr, J); ok {
				s.add(f)
			}
		}
	}
	return s.result(rowOrder, colOrder), nil
}

// windows returns the seed column windows of row position pr: the row's
// active cells (above its two-means threshold) in column order, split where
// more than Gap inactive columns separate them, keeping windows of at
// least MinCols active columns.
func (s *searcher) windows(pr int) [][]int {
	row := s.w[pr*s.L : (pr+1)*s.L]
	thr := activeThreshold(row)
	var out [][]int
	var cur []int
	last := -1
	for q, x := range row {
		if !(x > thr) {
			continue
		}
		if last >= 0 && q-last-1 > s.p.Gap {
			if len(cur) >= s.p.MinCols {
				out = append(out, cur)
			}
			cur = nil
		}
		cur = append(cur, q)
		last = q
	}
	if len(cur) >= s.p.MinCols {
		out = append(out, cur)
	}
	return out
}

// activeThreshold splits a row's weights into a low and a high group by
// the two-means (Otsu) criterion and returns the threshold between them;
// a row of equal weights is all active when positive and none otherwise.
func activeThreshold(row []float64) float64 {
	v := slices.Clone(row)
	slices.Sort(v)
	n := len(v)
	if v[0] == v[n-1] {
		if v[0] > 0 {
			return v[0] / 2
		}
		return v[0]
	}
	total := 0.0
	for _, x := range v {
		total += x
	}
	best, thr := -1.0, v[0]
	prefix := 0.0
	for k := 1; k < n; k++ {
		prefix += v[k-1]
		if v[k-1] == v[k] {
			continue
		}
		n0, n1 := float64(k), float64(n-k)
		d := prefix/n0 - (total-prefix)/n1
		if between := n0 * n1 * d * d; between > best {
			best, thr = between, (v[k-1]+v[k])/2
		}
	}
	return thr
}

// covered reports whether a seed is already explained: its row lies in a
// found bicluster that holds at least half of the window's columns.
func (s *searcher) covered(pr int, J []int) bool {
	for _, i := range s.rowIn[pr] {
		in := 0
		for _, q := range J {
			if s.found[i].colSet[q] {
				in++
			}
		}
		if 2*in >= len(J) {
			return true
		}
	}
	return false
}

func (s *searcher) add(f found) {
	i := len(s.found)
	s.found = append(s.found, f)
	for _, pr := range f.rows {
		s.rowIn[pr] = append(s.rowIn[pr], i)
	}
}

// grow runs the local search from seed row pr on columns J: alternately
// the rows near pr (in row order) that fit the bicluster's constant model
// on its columns, then the columns near its column span that fit it on its
// rows, until neither changes (at most four passes). It accepts the result
// when it has MinRows rows, MinCols columns and a score at most δ.
func (s *searcher) grow(pr int, J []int) (found, bool) {
	R := []int{pr}
	mu := s.mean(R, J)
	for range 4 {
		nr := s.growRows(pr, J, mu)
		if len(nr) < s.p.MinRows {
			return found{}, false
		}
		mu = s.mean(nr, J)
		nj := s.growCols(J, nr, mu)
		if len(nj) < s.p.MinCols {
			return found{}, false
		}
		mu = s.mean(nr, nj)
		same := slices.Equal(nr, R) && slices.Equal(nj, J)
		R, J = nr, nj
		if same {
			break
		}
	}
	score := 0.0
	for _, r := range R {
		score += s.rowDiv(r, J, mu)
	}
	score /= float64(len(R))
	if !(score < s.p.Delta) || !s.elevated(R, J, mu) {
		return found{}, false
	}
	f := found{rows: R, cols: J, colSet: make([]bool, s.L), score: score, mu: mu}
	for _, q := range J {
		f.colSet[q] = true
	}
	return f, true
}

// elevated reports whether the bicluster's mean μ is above MinLift times
// the mean of its rows on the other columns: a bicluster is a denser part of the
// weighted graph than the rest of its rows, not a patch of background
// noise that happens to be even (decision in the package doc).
func (s *searcher) elevated(R, J []int, mu float64) bool {
	if len(J) == s.L {
		return true
	}
	in := make([]bool, s.L)
	for _, q := range J {
		in[q] = true
	}
	sum := 0.0
	for _, r := range R {
		row := s.w[r*s.L : (r+1)*s.L]
		for q, x := range row {
			if !in[q] {
				sum += x
			}
		}
	}
	return mu-s.eps() > s.p.MinLift*sum/float64(len(R)*(s.L-len(J)))
}

// mean is μ, the constant model of R × J: the mean smoothed weight.
func (s *searcher) mean(R, J []int) float64 {
	sum := 0.0
	for _, r := range R {
		row := s.w[r*s.L:]
		for _, q := range J {
			sum += row[q]
		}
	}
	return sum/float64(len(R)*len(J)) + s.eps()
}

// eps is the smoothing added to every weight and mean: ε for
// Itakura–Saito, 0 for the I-divergence.
func (s *searcher) eps() float64 {
	if s.p.Divergence == ItakuraSaito {
		return s.p.Epsilon
	}
	return 0
}

// rowDiv is the mean divergence of row position r's cells on J from μ.
func (s *searcher) rowDiv(r int, J []int, mu float64) float64 {
	row := s.w[r*s.L:]
	d := 0.0
	for _, q := range J {
		d += s.p.Divergence.cell(row[q]+s.eps(), mu)
	}
	return d / float64(len(J))
}

// colDiv is the mean divergence of column position q's cells on R from μ.
func (s *searcher) colDiv(q int, R []int, mu float64) float64 {
	d := 0.0
	for _, r := range R {
		d += s.p.Divergence.cell(s.w[r*s.L+q]+s.eps(), mu)
	}
	return d / float64(len(R))
}

// growRows keeps the seed row if it fits, then scans away from it in both
// directions, adding every fitting row and stopping after more than Reach
// consecutive misfits.
func (s *searcher) growRows(pr int, J []int, mu float64) []int {
	if !(s.rowDiv(pr, J, mu) < s.p.Delta) {
		return nil
	}
	R := []int{pr}
	for _, dir := range []int{-1, 1} {
		miss := 0
		for r := pr + dir; r >= 0 && r < s.M && miss <= s.p.Reach; r += dir {
			if s.rowDiv(r, J, mu) < s.p.Delta {
				R = append(R, r)
				miss = 0
			} else {
				miss++
			}
		}
	}
	slices.Sort(R)
	return R
}

// growCols keeps the fitting columns of J's span, then extends the span in
// both directions like growRows.
func (s *searcher) growCols(J, R []int, mu float64) []int {
	var out []int
	lo, hi := J[0], J[len(J)-1]
	for q := lo; q <= hi; q++ {
		if s.colDiv(q, R, mu) < s.p.Delta {
			out = append(out, q)
		}
	}
	for _, dir := range []int{-1, 1} {
		miss := 0
		start := lo - 1
		if dir > 0 {
			start = hi + 1
		}
		for q := start; q >= 0 && q < s.L && miss <= s.p.Reach; q += dir {
			if s.colDiv(q, R, mu) < s.p.Delta {
				out = append(out, q)
				miss = 0
			} else {
				miss++
			}
		}
	}
	slices.Sort(out)
	return out
}

// result drops biclusters mostly inside a larger one, lets a larger one
// absorb a fragment (see absorb), and maps the rest back to the matrix's
// indices, largest first (ties by first row, then first column:
// deterministic).
func (s *searcher) result(rowOrder, colOrder []int) []Bicluster {
	idx := make([]int, len(s.found))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		fa, fb := s.found[a], s.found[b]
		return cmp.Or(
			cmp.Compare(len(fb.rows)*len(fb.cols), len(fa.rows)*len(fa.cols)),
			cmp.Compare(fa.rows[0], fb.rows[0]),
			cmp.Compare(fa.cols[0], fb.cols[0]))
	})
	var kept []*found
	for _, i := range idx {
		f := s.found[i]
		cells := len(f.rows) * len(f.cols)
		drop := false
		for _, g := range kept {
			if float64(Common(f.rows, g.rows)*Common(f.cols, g.cols)) > s.p.MaxOverlap*float64(cells) {
				drop = true
				break
			}
		}
		for _, g := range kept {
			if drop {
				break
			}
			drop = s.absorb(g, f)
		}
		if !drop {
			kept = append(kept, &f)
		}
	}
	out := make([]Bicluster, len(kept))
	for k, f := range kept {
		b := Bicluster{Rows: make([]int, len(f.rows)), Cols: make([]int, len(f.cols)), Score: f.score, Mean: f.mu - s.eps()}
		for k, pr := range f.rows {
			b.Rows[k] = rowOrder[pr]
		}
		for k, q := range f.cols {
			b.Cols[k] = colOrder[q]
		}
		slices.Sort(b.Rows)
		slices.Sort(b.Cols)
		out[k] = b
	}
	slices.SortStableFunc(out, func(a, b Bicluster) int {
		return cmp.Or(cmp.Compare(b.Cells(), a.Cells()), cmp.Compare(a.Rows[0], b.Rows[0]), cmp.Compare(a.Cols[0], b.Cols[0]))
	})
	return out
}

// absorb lets the larger bicluster g take in fragment f: when their
// columns mostly coincide (Jaccard ≥ 1/2) and at least half of f's rows
// fit g's model on g's columns, those rows join g, provided g's score
// stays below δ. Crossing minimisation on large noisy data leaves some of
// a bicluster's rows outside its contiguous run; they come back here as
// fragments with the same columns. It reports whether f was absorbed.
func (s *searcher) absorb(g *found, f found) bool {
	in := Common(f.cols, g.cols)
	if 2*in < len(f.cols)+len(g.cols)-in {
		return false
	}
	var fit []int
	for _, r := range f.rows {
		if s.rowDiv(r, g.cols, g.mu) < s.p.Delta {
			fit = append(fit, r)
		}
	}
	if 2*len(fit) < len(f.rows) {
		return false
	}
	rows := slices.Concat(g.rows, fit)
	slices.Sort(rows)
	rows = slices.Compact(rows)
	mu := s.mean(rows, g.cols)
	score := 0.0
	for _, r := range rows {
		score += s.rowDiv(r, g.cols, mu)
	}
	if score /= float64(len(rows)); !(score < s.p.Delta) {
		return false
	}
	g.rows, g.mu, g.score = rows, mu, score
	return true
}

// Common counts the elements two ascending slices share: the overlap of
// two biclusters' rows or columns (package score uses it too).
func Common(a, b []int) int { return sorted.CountIntersect(a, b) }
