package synth

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/cohortdm/cohort/bicluster"
	"github.com/cohortdm/cohort/job"
)

// Part is one party's share of a horizontally partitioned matrix.
type Part struct {
	// Matrix holds the party's rows, with the original row ids.
	Matrix *bicluster.Matrix
	// Rows maps the party's row i to the original matrix's row Rows[i].
	Rows []int
}

// Split deals m's rows over parties uniformly at random (the paper
// does not say how it dealt them): a seeded shuffle dealt round robin, so sizes differ by at most
// one; each party keeps its rows in original order.
func Split(m *bicluster.Matrix, parties int, seed []byte) ([]Part, error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	if parties < 1 || parties > m.Rows {
		return nil, fmt.Errorf("%w: %d parties for %d rows", ErrParams, parties, m.Rows)
	}
	perm := job.Rand(seed, "bicluster/synth/split").Perm(m.Rows)
	rows := make([][]int, parties)
	for i, r := range perm {
		rows[i%parties] = append(rows[i%parties], r)
	}
	out := make([]Part, parties)
	for p, rs := range rows {
		slices.Sort(rs)
		pm := &bicluster.Matrix{Rows: len(rs), Cols: m.Cols, Data: make([]float64, 0, len(rs)*m.Cols),
			ColNames: slices.Clone(m.ColNames)}
		if m.RowIDs != nil {
			pm.RowIDs = make([]string, len(rs))
		}
		for i, r := range rs {
			pm.Data = append(pm.Data, m.Row(r)...)
			if m.RowIDs != nil {
				pm.RowIDs[i] = m.RowIDs[r]
			}
		}
		out[p] = Part{Matrix: pm, Rows: rs}
	}
	return out, nil
}

// WriteCSV writes m as a bicluster table: a header "id" and the column
// names (c0, c1, … when m has none), then one line per row with its id
// (its index when m has none) and its values in the shortest form that
// reads back exactly.
func WriteCSV(w io.Writer, m *bicluster.Matrix) error {
	if err := m.Check(); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	rec := make([]string, m.Cols+1)
	rec[0] = "id"
	for c := range m.Cols {
		rec[c+1] = "c" + strconv.Itoa(c)
		if m.ColNames != nil {
			rec[c+1] = m.ColNames[c]
		}
	}
	if err := cw.Write(rec); err != nil {
		return fmt.Errorf("synth: write csv: %w", err)
	}
	for r := range m.Rows {
		rec[0] = strconv.Itoa(r)
		if m.RowIDs != nil {
			rec[0] = m.RowIDs[r]
		}
		for c, x := range m.Row(r) {
			rec[c+1] = strconv.FormatFloat(x, 'g', -1, 64)
		}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("synth: write csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("synth: write csv: %w", err)
	}
	return nil
}
