package onetable

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
)

// stepMDAV is the step under algorithm mdav: the quasi-identifiers (all
// numeric) grouped by MDAV on standardised values (on the dependency
// tree's key attributes with approximate), every record's quasi-identifiers
// replaced by its group's centroid (in the original units, six significant
// digits), the groups at least the largest k. SSE and SST are on the
// standardised values, SSERaw and SSTRaw in the original units.
func (s *session) stepMDAV(ctx context.Context) (output, error) {
	t, raw, kmax, err := s.rawColumns(ctx)
	if err != nil {
		return output{}, err
	}
	x := make([][]float64, t.NumRows())
	for j, q := range s.qid {
		bad := 0
		for r, v := range raw[j] {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				bad++
			}
			if j == 0 {
				x[r] = make([]float64, len(s.qid))
			}
			x[r][j] = f
		}
		if bad > 0 {
			return output{}, fmt.Errorf("%w: table %s column %q: %d of %d rows are not numbers (algorithm mdav needs numeric quasi-identifiers; the values stay on this node)", anonymize.ErrRequirement, t.Name, q, bad, t.NumRows())
		}
	}
	o := output{Algorithm: "mdav"}
	start := time.Now()
	z := anonymize.Standardise(x)
	keys := make([]int, len(s.qid))
	for j := range keys {
		keys[j] = j
	}
	if s.prm.Approximate && len(s.qid) > 2 {
		keys = anonymize.KeyAttributes(anonymize.DependencyTree(anonymize.VIMatrix(raw)), len(s.qid))
	}
	proj := make([][]float64, len(z))
	for r, row := range z {
		proj[r] = make([]float64, len(keys))
		for i, j := range keys {
			proj[r][i] = row[j]
		}
	}
	variant := anonymize.MDAVStandard
	if s.prm.MDAV == "thesis" {
		variant = anonymize.MDAVThesis
	}
	groups, err := anonymize.MDAV(proj, kmax, variant)
	if err != nil {
		return output{}, err
	}
	// The loss is on z-scores (Sun's scale; in raw units a column like
	// Adult's fnlwgt outweighs all others), raw units second.
	if _, o.SSE, o.SST, err = anonymize.Microaggregate(z, groups); err != nil {
		return output{}, err
	}
	out, sseRaw, sstRaw, err := anonymize.Microaggregate(x, groups)
	if err != nil {
		return output{}, err
	}
	o.Seconds = time.Since(start).Seconds()
	o.SSERaw, o.SSTRaw = sseRaw, sstRaw
	for _, j := range keys {
		o.Keys = append(o.Keys, s.qid[j])
	}
	pub := &table.Table{Name: "mdav"}
	for j, q := range s.qid {
		col := &table.Column{Name: q, Kind: table.Categorical, Str: make([]string, len(out))}
		for r := range out {
			col.Str[r] = strconv.FormatFloat(out[r][j], 'g', 6, 64)
		}
		pub.Columns = append(pub.Columns, col)
	}
	o.Table = anonymize.Compact(pub)
	// Groups of tied records publish the same centroid: a reader sees
	// one class where MDAV made several.
	sizes, err := o.Table.ClassSizes(s.qid)
	if err != nil {
		return output{}, err
	}
	o.Classes, o.DM, o.CAvg = len(sizes), anonymize.Discernibility(sizes), anonymize.AvgClassSize(sizes, kmax)
	return o, nil
}

// rawColumns loads the table for the algorithms that need no taxonomies:
// the table, its QID columns' values (in s.qid's order) and the largest k.
func (s *session) rawColumns(ctx context.Context) (*table.Table, [][]string, int, error) {
	tables, err := job.LoadTables(ctx, s.p)
	if err != nil {
		return nil, nil, 0, err
	}
	t := tables[0]
	kmax := 0
	for _, r := range s.prm.Requirements {
		kmax = max(kmax, r.K)
	}
	if kmax > t.NumRows() {
		return nil, nil, 0, fmt.Errorf("%w: k = %d is larger than table %s's %d rows", anonymize.ErrRequirement, kmax, t.Name, t.NumRows())
	}
	cols := make([][]string, len(s.qid))
	for j, q := range s.qid {
		c, err := t.Column(q)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("%w: table %s has no QID column %q", anonymize.ErrRequirement, t.Name, q)
		}
		cols[j] = c.Str
	}
	return t, cols, kmax, nil
}
