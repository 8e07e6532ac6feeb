package onetable

import (
	"context"
	"time"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/table"
)

// stepDatafly is the step under algorithms datafly and ogf: Chaytor's
// Datafly with local recoding (single-level hierarchies: a value or "*")
// in Sweeney's column order, or in the order OGF finds; k is the largest
// k_i. Kept is the fraction of cells not suppressed; NCP is the fraction
// suppressed (a "*" costs 1).
func (s *session) stepDatafly(ctx context.Context) (output, error) {
	t, cols, kmax, err := s.rawColumns(ctx)
	if err != nil {
		return output{}, err
	}
	o := output{Algorithm: s.prm.Algorithm}
	start := time.Now()
	var res *anonymize.DataflyResult
	if s.prm.Algorithm == "ogf" {
		g, err := anonymize.OGF(cols, kmax, anonymize.OGFOptions{Seed: s.prm.Seed})
		if err != nil {
			return output{}, err
		}
		res, o.Generations, o.Evaluations = g.Best, g.Generations, g.Evaluations
	} else if res, err = anonymize.Datafly(cols, kmax, anonymize.DataflyOrder(cols)); err != nil {
		return output{}, err
	}
	o.Seconds = time.Since(start).Seconds()
	cells := float64(len(cols) * t.NumRows())
	o.Kept, o.NCP = float64(res.Kept)/cells, 1-float64(res.Kept)/cells
	for _, j := range res.Order {
		o.Order = append(o.Order, s.qid[j])
	}
	pub := &table.Table{Name: "datafly"}
	for j, q := range s.qid {
		pub.Columns = append(pub.Columns, &table.Column{Name: q, Kind: table.Categorical, Str: res.Cells[j]})
	}
	o.Table = anonymize.Compact(pub)
	sizes := make([]int, 0, len(o.Table.Rows))
	for _, r := range o.Table.Rows {
		sizes = append(sizes, r.Count)
	}
	o.Classes, o.DM, o.CAvg = len(sizes), anonymize.Discernibility(sizes), anonymize.AvgClassSize(sizes, kmax)
	return o, nil
}
