package bicluster

import (
	"context"
	"fmt"
	"math"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
)

// positive is the clamp of a column's sum of weights: Σ max(x, 0).
var positive = [2]float64{0, math.Inf(1)}

// columnWeights is the party's Den for the first iteration: each column's
// Σ max(x, 0) over its rows, asked of table's local-computation layer
// (table.Aggregator.ColumnSums: one query where the table lives, one
// streamed pass over a file), from the source and schema the matrix was
// loaded with, so the node's column rules are the same. The answer is
// checked against the loaded matrix (checkWeights): the two reads are two
// transactions, and a table changed between them would sum other rows
// than the ones ranked. The pushed-down query is in the node's log at
// debug level (never in the Raft log).
func columnWeights(ctx context.Context, p job.Participant, m *Matrix) ([]float64, error) {
	ps, _ := p.Spec().Party(p.Self())
	ts := ps.Tables[0] // loadMatrix refused any other count
	schema, err := p.Spec().TableSchema(ts.Name)
	if err != nil {
		return nil, err
	}
	src, err := p.TableSource(ts)
	if err != nil {
		return nil, fmt.Errorf("party %s: %w", p.Self(), err)
	}
	agg, err := table.NewAggregator(src, schema, table.ReadOptions{Label: table.Label(src), Log: p.Log()})
	if err != nil {
		return nil, fmt.Errorf("party %s: table %s: %w", p.Self(), ts.Name, err)
	}
	defer agg.Close()
	den, rows, err := agg.ColumnSums(ctx, m.ColNames, &positive)
	if err != nil {
		return nil, fmt.Errorf("party %s: table %s: %w", p.Self(), ts.Name, err)
	}
	if err := checkWeights(m, den, rows); err != nil {
		return nil, fmt.Errorf("party %s: table %s: %w", p.Self(), ts.Name, err)
	}
	return den, nil
}

// checkWeights refuses column weights that are not the matrix's: another
// row count, or a column's sum further from the matrix's than summing
// the same non-negative values in another order can put it (each of the
// rows' additions rounds by at most 2^-53 of the running sum, which is at
// most the total). Within that bound a party's Num_j (≤ its Den_j in
// exact arithmetic) stays far below the two bits numBits spares, and a
// column has weight by one sum exactly when it has by the other (a sum
// of non-negative values is 0 only when each is).
func checkWeights(m *Matrix, den []float64, rows int) error {
	if rows != m.Rows || len(den) != m.Cols {
		return fmt.Errorf("%w: the column sums cover other rows than the loaded table (changed between the two reads?)", ErrValue)
	}
	mine := m.weights()
	for j, d := range den {
		tol := math.Ldexp(float64(m.Rows+1)*max(d, mine[j]), -52)
		if math.IsNaN(d) || math.Abs(d-mine[j]) > tol || (d == 0) != (mine[j] == 0) {
			return fmt.Errorf("%w: column %s: its sum of weights differs from the loaded table's (changed between the two reads?)", ErrValue, m.ColNames[j])
		}
	}
	return nil
}

// weights is each column's Σ max(x, 0), as contribution sums it.
func (m *Matrix) weights() []float64 {
	out := make([]float64, m.Cols)
	for r := range m.Rows {
		for j, x := range m.Row(r) {
			out[j] += weight(x)
		}
	}
	return out
}

// withWeights is c with the party's Den taken from den (the layer's):
// Exact sends it as it is; MeanOfMeans, 1 for each column with weight, as
// contribution sets it.
func withWeights(c Contribution, den []float64, mode Mode) Contribution {
	out := Contribution{Num: c.Num, Den: make([]float64, len(den))}
	for j, d := range den {
		switch {
		case mode == Exact:
			out.Den[j] = d
		case d > 0:
			out.Den[j] = 1
		}
	}
	return out
}
