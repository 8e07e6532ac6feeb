package anonymize

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/internal/atomicfile"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/wire"
)

// A publication in the form the jobs commit and write: its columns and its
// distinct rows with counts, sorted by value, never in record order (which
// could follow the ids or the source's order).

// Row is one distinct row of a published table and how many records it
// stands for.
type Row struct {
	Values []string `msgpack:"values" json:"values"`
	Count  int      `msgpack:"count" json:"count"`
}

// Published is a published table, compactly: its columns and its distinct
// rows, sorted by their values, each with its count.
type Published struct {
	Columns []string `msgpack:"columns" json:"columns"`
	Rows    []Row    `msgpack:"rows" json:"rows"`
}

// Records is the number of records the table stands for.
func (p *Published) Records() int {
	n := 0
	for _, r := range p.Rows {
		n += r.Count
	}
	return n
}

// Check verifies what Compact guarantees, for a publication read from a peer
// or a log: rows as wide as the columns, positive counts, sorted and distinct.
func (p *Published) Check() error {
	for i, r := range p.Rows {
		if len(r.Values) != len(p.Columns) || r.Count < 1 {
			return fmt.Errorf("%w: published row %d: %d values for %d columns, count %d", wire.ErrMalformed, i, len(r.Values), len(p.Columns), r.Count)
		}
		if i > 0 && slices.Compare(p.Rows[i-1].Values, r.Values) >= 0 {
			return fmt.Errorf("%w: published rows %d and %d out of order", wire.ErrMalformed, i-1, i)
		}
	}
	return nil
}

// Compact turns a published table (one row per record) into its compact
// form.
func Compact(t *table.Table) Published {
	p := Published{}
	for _, c := range t.Columns {
		p.Columns = append(p.Columns, c.Name)
	}
	p.Rows = DistinctRows(t.NumRows(), func(r int) []string {
		vals := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			vals[i] = c.Str[r]
		}
		return vals
	})
	return p
}

// CompactCounts is the compact form of rows that each stand for counts[i]
// records (rows may repeat: their counts add up).
func CompactCounts(columns []string, rows [][]string, counts []int) Published {
	total := map[string]int{}
	first := map[string][]string{}
	for i, vals := range rows {
		key := valuesKey(vals)
		if _, ok := first[key]; !ok {
			first[key] = vals
		}
		total[key] += counts[i]
	}
	out := Published{Columns: columns, Rows: make([]Row, 0, len(first))}
	for key, vals := range first {
		out.Rows = append(out.Rows, Row{Values: vals, Count: total[key]})
	}
	slices.SortFunc(out.Rows, func(a, b Row) int { return slices.Compare(a.Values, b.Values) })
	return out
}

// DistinctRows groups n records' rows (row(r) gives record r's values) into
// distinct rows with counts, sorted by value.
func DistinctRows(n int, row func(r int) []string) []Row {
	counts := map[string]int{}
	rows := map[string][]string{}
	for r := range n {
		vals := row(r)
		key := valuesKey(vals)
		if counts[key] == 0 {
			rows[key] = vals
		}
		counts[key]++
	}
	out := make([]Row, 0, len(rows))
	for k, vals := range rows {
		out = append(out, Row{Values: vals, Count: counts[k]})
	}
	slices.SortFunc(out, func(a, b Row) int { return slices.Compare(a.Values, b.Values) })
	return out
}

func valuesKey(vals []string) string {
	var b strings.Builder
	for _, v := range vals {
		fmt.Fprintf(&b, "%d:%s", len(v), v)
	}
	return b.String()
}

// columnsOf returns the positions of cols in the publication.
func (p *Published) columnsOf(cols []string) ([]int, error) {
	idx := make([]int, len(cols))
	for i, q := range cols {
		j := slices.Index(p.Columns, q)
		if j < 0 {
			return nil, fmt.Errorf("%w: QID column %q is not published", ErrRequirement, q)
		}
		idx[i] = j
	}
	return idx, nil
}

// classesOn groups the publication's rows by their values on the columns idx.
func (p *Published) classesOn(idx []int) map[string][]int {
	groups := map[string][]int{}
	vals := make([]string, len(idx))
	for ri, row := range p.Rows {
		for k, j := range idx {
			vals[k] = row.Values[j]
		}
		key := valuesKey(vals)
		groups[key] = append(groups[key], ri)
	}
	return groups
}

// MinGroups is A(QID_i) of the publication for every requirement: the
// smallest total count over the rows sharing the QID's values.
func (p *Published) MinGroups(reqs []Requirement) ([]int, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	out := make([]int, len(reqs))
	for i, r := range reqs {
		idx, err := p.columnsOf(r.QID)
		if err != nil {
			return nil, err
		}
		m := 0
		for _, rows := range p.classesOn(idx) {
			c := 0
			for _, ri := range rows {
				c += p.Rows[ri].Count
			}
			if m == 0 || c < m {
				m = c
			}
		}
		out[i] = m
	}
	return out, nil
}

// ClassSizes is the sizes of the publication's equivalence classes on the
// columns cols (records sharing their published values), in decreasing
// order: the classes a reader of the table sees, which the utility metrics
// (DM, C_AVG, the class count) are about.
func (p *Published) ClassSizes(cols []string) ([]int, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	idx, err := p.columnsOf(cols)
	if err != nil {
		return nil, err
	}
	var sizes []int
	for _, rows := range p.classesOn(idx) {
		c := 0
		for _, ri := range rows {
			c += p.Rows[ri].Count
		}
		sizes = append(sizes, c)
	}
	slices.SortFunc(sizes, func(a, b int) int { return b - a })
	return sizes, nil
}

// CheckDistinctL checks distinct l-diversity of the publication's column
// sensitive in every class of every requirement's QID.
func (p *Published) CheckDistinctL(reqs []Requirement, sensitive string, l int) error {
	if err := p.Check(); err != nil {
		return err
	}
	s := slices.Index(p.Columns, sensitive)
	if s < 0 {
		return fmt.Errorf("%w: sensitive column %q is not published", ErrRequirement, sensitive)
	}
	for _, r := range reqs {
		idx, err := p.columnsOf(r.QID)
		if err != nil {
			return err
		}
		if slices.Contains(idx, s) {
			return fmt.Errorf("%w: sensitive column %q is a quasi-identifier of %s", ErrRequirement, sensitive, r)
		}
		for _, rows := range p.classesOn(idx) {
			labels := map[string]bool{}
			for _, ri := range rows {
				labels[p.Rows[ri].Values[s]] = true
			}
			if len(labels) < l {
				return fmt.Errorf("%w: a class on %s holds %d distinct values of %q, l = %d", ErrViolation, r, len(labels), sensitive, l)
			}
		}
	}
	return nil
}

// WriteCSV writes the publication as a CSV file, a header and then one line
// per record, rows sorted by value.
func (p *Published) WriteCSV(path string) error {
	if err := p.Check(); err != nil {
		return err
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	err := w.Write(p.Columns)
	for _, r := range p.Rows {
		for i := 0; i < r.Count && err == nil; i++ {
			err = w.Write(r.Values)
		}
	}
	if w.Flush(); err == nil {
		err = w.Error()
	}
	if err == nil {
		err = atomicfile.Write(path, buf.Bytes(), 0o644)
	}
	if err != nil {
		return fmt.Errorf("anonymize: write %s: %w", path, err)
	}
	return nil
}

// CheckModel checks a sensitive model on the publication's column
// sensitive in every class of every requirement's QID.
func (p *Published) CheckModel(reqs []Requirement, sensitive string, m SensitiveModel) error {
	if err := p.Check(); err != nil {
		return err
	}
	s := slices.Index(p.Columns, sensitive)
	if s < 0 {
		return fmt.Errorf("%w: sensitive column %q is not published", ErrRequirement, sensitive)
	}
	vals := make([]string, len(p.Rows))
	for i, row := range p.Rows {
		vals[i] = row.Values[s]
	}
	coded, err := m.Code(vals) // one code per row
	if err != nil {
		return err
	}
	for _, r := range reqs {
		idx, err := p.columnsOf(r.QID)
		if err != nil {
			return err
		}
		for _, rows := range p.classesOn(idx) {
			h := coded.NewHist()
			for _, ri := range rows {
				coded.AddCode(h, coded.Code[ri], int32(p.Rows[ri].Count))
			}
			if !coded.OK(h) {
				return fmt.Errorf("%w: a class on %s does not satisfy %s on %q", ErrViolation, r, m, sensitive)
			}
		}
	}
	return nil
}
