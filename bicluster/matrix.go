package bicluster

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/cohortdm/cohort/table"
)

// Errors that callers may tell apart with errors.Is.
var (
	// ErrEmpty is returned for a matrix (or a party's table) without rows or columns.
	ErrEmpty = errors.New("bicluster: empty matrix")
	// ErrValue is returned for a value that is not a finite number.
	ErrValue = errors.New("bicluster: bad value")
	// ErrColumns is returned when tables do not have the same numeric columns
	// in the same order, or a table has columns a bicluster table may not have.
	ErrColumns = errors.New("bicluster: column mismatch")
	// ErrParams is returned for invalid parameters.
	ErrParams = errors.New("bicluster: bad parameters")
)

// MaxAbs bounds every value, so that the sums over all rows and columns
// (barycenters, means) cannot overflow float64.
const MaxAbs = 1e100

// Matrix is one party's data: Rows × Cols finite values, row-major.
// ColNames and RowIDs are optional labels (a table's numeric columns and
// its id column).
type Matrix struct {
	Rows, Cols int
	Data       []float64
	ColNames   []string
	RowIDs     []string
}

// NewMatrix wraps row-major data as a rows × cols matrix, checking its shape
// and that every value is finite and within ±MaxAbs.
func NewMatrix(rows, cols int, data []float64) (*Matrix, error) {
	m := &Matrix{Rows: rows, Cols: cols, Data: data}
	if err := m.Check(); err != nil {
		return nil, err
	}
	return m, nil
}

// Check verifies the matrix's shape, labels and values.
func (m *Matrix) Check() error {
	if m == nil || m.Rows <= 0 || m.Cols <= 0 {
		return fmt.Errorf("%w: need at least one row and one column", ErrEmpty)
	}
	if len(m.Data) != m.Rows*m.Cols {
		return fmt.Errorf("%w: %d values for %d×%d", ErrParams, len(m.Data), m.Rows, m.Cols)
	}
	if m.ColNames != nil && len(m.ColNames) != m.Cols {
		return fmt.Errorf("%w: %d column names for %d columns", ErrColumns, len(m.ColNames), m.Cols)
	}
	if m.RowIDs != nil && len(m.RowIDs) != m.Rows {
		return fmt.Errorf("%w: %d row ids for %d rows", ErrParams, len(m.RowIDs), m.Rows)
	}
	for i, v := range m.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > MaxAbs {
			return fmt.Errorf("%w: row %d column %d is %v (want a finite number within ±%g)", ErrValue, i/m.Cols, i%m.Cols, v, MaxAbs)
		}
	}
	return nil
}

// At returns the value in row r and column c.
func (m *Matrix) At(r, c int) float64 { return m.Data[r*m.Cols+c] }

// Row returns row r (a view, not a copy).
func (m *Matrix) Row(r int) []float64 { return m.Data[r*m.Cols : (r+1)*m.Cols] }

// weight is the edge weight of a value in the bipartite graph: the value
// itself when positive, else no edge (decision 2 in the package doc).
func weight(x float64) float64 {
	if x > 0 {
		return x
	}
	return 0
}

// FromTable turns a bicluster table (one id column and numeric
// columns, nothing else) into a matrix labelled with its column names and
// row ids. Load the file with table.Load and a nil schema (kinds inferred)
// or a schema naming the id and numeric columns; a column that is not
// numeric is refused here, naming it.
func FromTable(t *table.Table) (*Matrix, error) {
	if t == nil {
		return nil, fmt.Errorf("%w: no table", ErrEmpty)
	}
	var id *table.Column
	var nums []*table.Column
	for _, c := range t.Columns {
		switch {
		case c.Kind == table.ID || (c.Name == "id" && id == nil):
			if id != nil {
				return nil, fmt.Errorf("%w: table %q has two id columns (%q, %q)", ErrColumns, t.Name, id.Name, c.Name)
			}
			id = c
		case c.Kind == table.Numeric:
			nums = append(nums, c)
		default:
			return nil, fmt.Errorf("%w: table %q column %q is %s, want numeric (non-numeric values?)", ErrColumns, t.Name, c.Name, c.Kind)
		}
	}
	if id == nil {
		return nil, fmt.Errorf("%w: table %q has no id column", ErrColumns, t.Name)
	}
	if len(nums) == 0 {
		return nil, fmt.Errorf("%w: table %q has no numeric column", ErrEmpty, t.Name)
	}
	rows := t.NumRows()
	if rows == 0 {
		return nil, fmt.Errorf("%w: table %q has no rows", ErrEmpty, t.Name)
	}
	m := &Matrix{Rows: rows, Cols: len(nums), Data: make([]float64, rows*len(nums)),
		ColNames: make([]string, len(nums)), RowIDs: slices.Clone(id.Str)}
	for j, c := range nums {
		m.ColNames[j] = c.Name
		for r, v := range c.Num {
			m.Data[r*m.Cols+j] = v
		}
	}
	if err := m.Check(); err != nil {
		return nil, fmt.Errorf("table %q: %w", t.Name, err)
	}
	return m, nil
}

// CheckColumns verifies that every party's matrix has the same column names
// in the same order (the horizontal partition's common schema: Ahmad and
// Khokhar, "Phoenix", §3.1). names[i] belongs to parties[i].
func CheckColumns(parties []string, names [][]string) error {
	if len(parties) != len(names) {
		return fmt.Errorf("%w: %d parties, %d column lists", ErrParams, len(parties), len(names))
	}
	if len(names) == 0 {
		return fmt.Errorf("%w: no party", ErrEmpty)
	}
	for i := 1; i < len(names); i++ {
		if !slices.Equal(names[0], names[i]) {
			return fmt.Errorf("%w: party %q has columns %v, party %q has %v", ErrColumns, parties[i], names[i], parties[0], names[0])
		}
	}
	return nil
}
