package onetable

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
)

// checkOneDim checks params.onedim (algorithm onedim only: dp or
// quantile) and that algorithm onedim has one quasi-identifier.
func checkOneDim(spec *job.Spec, p *Params, qid []string) error {
	if p.Algorithm != "onedim" {
		if p.OneDim != "" {
			return spec.Errorf("params.onedim", "is for algorithm onedim")
		}
		return nil
	}
	if p.OneDim == "" {
		p.OneDim = "dp"
	}
	switch {
	case p.OneDim != "dp" && p.OneDim != "quantile":
		return spec.Errorf("params.onedim", "must be dp or quantile")
	case len(qid) != 1:
		return spec.Errorf("params.requirements", "algorithm onedim generalises one numeric column: the requirements name %d", len(qid))
	}
	return nil
}

// stepOneDim is the step under algorithm onedim: Lodha and Thomas's
// optimal one-dimensional k-anonymity (§4.1) of the one numeric
// quasi-identifier, k the largest k_i: its values, sorted, cut into
// contiguous clusters of at least k (dp: least k-median cost, clusters of
// k to 2k−1; quantile: Def. 9, least rank difference), each value
// published as its cluster's range [lo-hi] (the value itself when the
// cluster holds one value). NCP is the mean range width over the column's
// range in the data.
func (s *session) stepOneDim(ctx context.Context) (output, error) {
	t, cols, kmax, err := s.rawColumns(ctx)
	if err != nil {
		return output{}, err
	}
	xs := make([]float64, len(cols[0]))
	bad := 0
	for i, v := range cols[0] {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			bad++
		}
		xs[i] = x
	}
	if bad > 0 {
		return output{}, fmt.Errorf("%w: table %s column %q: %d of %d rows hold no finite number (algorithm onedim needs a numeric column)", anonymize.ErrRequirement, t.Name, s.qid[0], bad, len(xs))
	}
	o := output{Algorithm: s.prm.Algorithm}
	start := time.Now()
	var clusters [][]int
	if s.prm.OneDim == "quantile" {
		clusters, _, err = anonymize.QuantileTransform(xs, kmax)
	} else {
		clusters, _, err = anonymize.OneDimK(xs, kmax)
	}
	if err != nil {
		return output{}, err
	}
	o.Seconds = time.Since(start).Seconds()
	if o.RankDiff, err = anonymize.RankDifference(xs, clusters); err != nil {
		return output{}, err
	}
	lo, hi := slices.Min(xs), slices.Max(xs)
	labels := make([]string, len(xs))
	for _, c := range clusters {
		vals := make([]float64, len(c))
		for i, j := range c {
			vals[i] = xs[j]
		}
		slices.Sort(vals)
		a, b, med := vals[0], vals[len(vals)-1], vals[(len(vals)-1)/2]
		label := strconv.FormatFloat(a, 'g', -1, 64)
		if b > a {
			label = "[" + label + "-" + strconv.FormatFloat(b, 'g', -1, 64) + "]"
		}
		for _, j := range c {
			labels[j] = label
			o.KMedian += math.Abs(xs[j] - med)
			if hi > lo {
				o.NCP += (b - a) / (hi - lo) / float64(len(xs))
			}
		}
	}
	pub := &table.Table{Name: "onedim", Columns: []*table.Column{{Name: s.qid[0], Kind: table.Categorical, Str: labels}}}
	o.Table = anonymize.Compact(pub)
	sizes := make([]int, 0, len(o.Table.Rows))
	for _, r := range o.Table.Rows {
		sizes = append(sizes, r.Count)
	}
	o.Classes, o.DM, o.CAvg = len(sizes), anonymize.Discernibility(sizes), anonymize.AvgClassSize(sizes, kmax)
	return o, nil
}
