package hamdist

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/psi"
	"github.com/cohortdm/cohort/table"
)

// AlignByID runs the ECDH PSI of package psi with peer on the id column's
// values (as text), on the step's sub-channel "align", and returns the rows
// whose id the peer holds too, ordered by their id's encoding: both parties
// get their shared ids in the same order, so position i of one is position
// i of the other. Ids must not repeat (an id names one row). Each party
// learns which of its ids the peer holds, as psi's profile says.
func AlignByID(ctx context.Context, p job.Party, step job.Step, peer string, role psi.Role, t *table.Table, id string) ([]int, error) {
	keys, err := psi.TableKeys(t, []string{id}, []psi.Type{psi.Text})
	if err != nil {
		return nil, err
	}
	sorted := slices.SortedFunc(slices.Values(keys), bytes.Compare)
	if len(slices.CompactFunc(sorted, bytes.Equal)) != len(keys) {
		return nil, fmt.Errorf("table %s column %s: an id repeats", t.Name, id)
	}
	res, err := psi.ECDH{Config: psi.Config{Edge: "hamming-align"}}.Intersect(ctx, p, step.Sub("align"), peer, role, keys)
	if err != nil {
		return nil, err
	}
	rows := slices.Clone(res.Indices)
	slices.SortFunc(rows, func(a, b int) int { return bytes.Compare(keys[a], keys[b]) })
	return rows, nil
}

// AllRows is the alignment by position: every row, in table order.
func AllRows(t *table.Table) []int {
	rows := make([]int, t.NumRows())
	for i := range rows {
		rows[i] = i
	}
	return rows
}

// ExactValues reads a column's values at rows as exponents for the exact
// comparison: categorical and class columns as text, numeric columns as
// decimals (psi's canonical forms: "1.50" and "1.5" are one value).
// Errors name the table, column and row, never a value.
func ExactValues(t *table.Table, column string, rows []int) ([]Value, error) {
	c, err := t.Column(column)
	if err != nil {
		return nil, fmt.Errorf("table %s has no column %q", t.Name, column)
	}
	out := make([]Value, len(rows))
	for i, r := range rows {
		var v psi.Value
		if c.Kind == table.Numeric {
			v, err = psi.ParseNumber(c.Str[r])
		} else {
			v, err = psi.TextValue(c.Str[r])
		}
		if err != nil {
			return nil, fmt.Errorf("table %s row %d column %s: not a value", t.Name, r+1, column)
		}
		canon, err := psi.EncodeKey(v)
		if err != nil {
			return nil, fmt.Errorf("table %s row %d column %s: not a value", t.Name, r+1, column)
		}
		out[i] = HashValue(canon)
	}
	return out, nil
}

// MaxInt bounds the integers of a thresholded comparison (2^53: exact in
// a float64).
const MaxInt = 1 << 53

// IntValues reads a numeric column's values at rows as integers, for the
// thresholded comparison. Errors name the table, column and row.
func IntValues(t *table.Table, column string, rows []int) ([]int64, error) {
	c, err := t.Column(column)
	if err != nil || c.Num == nil {
		return nil, fmt.Errorf("table %s has no numeric column %q", t.Name, column)
	}
	out := make([]int64, len(rows))
	for i, r := range rows {
		x := c.Num[r]
		if x != math.Trunc(x) || math.Abs(x) > MaxInt {
			return nil, fmt.Errorf("table %s row %d column %s: not an integer within ±2^53 (params.threshold compares integers)", t.Name, r+1, column)
		}
		out[i] = int64(x)
	}
	return out, nil
}

// Ints turns integers into exponents (the holder's side of a thresholded
// comparison).
func Ints(v []int64) []Value {
	out := make([]Value, len(v))
	for i, x := range v {
		out[i] = IntValue(x)
	}
	return out
}
