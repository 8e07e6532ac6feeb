package bicluster

import "fmt"

// Result is cHawk's output on one matrix.
type Result struct {
	RowOrder, ColOrder []int
	// Iterations is the number of crossing-minimisation iterations run.
	Iterations int
	Biclusters []Bicluster
}

// CrossingMin is cHawk's phase 1 (Ahmad and Khokhar, "Phoenix", §2.2 and
// §3.1: barycenter crossing minimisation) on one matrix,
// built from the same pure steps as Phoenix with one party: from the
// initial column order, rows are sorted by their barycenters, then columns
// by theirs, until the column order stops changing or p.MaxIter
// iterations; the rows are finally sorted under the last column order.
func CrossingMin(m *Matrix, initCols []int, p Params) (rows, cols []int, iters int, err error) {
	if err := m.Check(); err != nil {
		return nil, nil, 0, err
	}
	if err := p.Check(); err != nil {
		return nil, nil, 0, err
	}
	var st PartyState
	cols = initCols
	for iters = 1; ; iters++ {
		var c Contribution
		st, c, err = Round(m, st, cols, Exact)
		if err != nil {
			return nil, nil, 0, err
		}
		next, changed, err := UpdateColumns(c, cols)
		if err != nil {
			return nil, nil, 0, err
		}
		cols = next
		if Done(changed, iters, p.MaxIter) {
			break
		}
	}
	rows, err = SortRows(m, cols, st.RowOrder)
	if err != nil {
		return nil, nil, 0, err
	}
	return rows, cols, iters, nil
}

// CHawk runs cHawk on one party's matrix: crossing minimisation from the
// column order seeded by seed (InitialColumns), then Identify.
func CHawk(m *Matrix, seed []byte, p Params) (*Result, error) {
	if err := m.Check(); err != nil {
		return nil, fmt.Errorf("chawk: %w", err)
	}
	rows, cols, iters, err := CrossingMin(m, InitialColumns(seed, m.Cols), p)
	if err != nil {
		return nil, fmt.Errorf("chawk: %w", err)
	}
	bs, err := Identify(m, rows, cols, p)
	if err != nil {
		return nil, fmt.Errorf("chawk: %w", err)
	}
	return &Result{RowOrder: rows, ColOrder: cols, Iterations: iters, Biclusters: bs}, nil
}
