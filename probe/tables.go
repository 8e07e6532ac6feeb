package probe

import (
	"context"
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
)

// checkTables checks each of the party's tables where it lives, as a job
// would read it, without loading it: table.Check runs, for a database
// table, one query pushed to the database (its row count and the rows
// table.Open would refuse, after the result's columns are checked against
// the schema), and streams a file with only the result kept. It returns
// the names of the tables checked, in the spec's order, or the first
// failure, named as a job that reads the table would name it. The
// pushed-down query is in the party's own log at debug level
// (job.Participant.Log), nowhere else.
func (s *session) checkTables(ctx context.Context) ([]string, error) {
	ps, ok := s.p.Spec().Party(s.p.Self())
	if !ok {
		return nil, fmt.Errorf("party %q is not in the job spec", s.p.Self())
	}
	checked := []string{}
	for _, ts := range ps.Tables {
		schema, err := s.p.Spec().TableSchema(ts.Name)
		if err != nil {
			return nil, err
		}
		src, err := s.p.TableSource(ts)
		if err != nil {
			return nil, fmt.Errorf("party %s: %w", s.p.Self(), err)
		}
		opts := table.ReadOptions{Label: table.Label(src), Log: s.p.Log()}
		if err := table.Check(ctx, src, schema, opts); err != nil {
			return nil, fmt.Errorf("party %s: table %s: %w", s.p.Self(), ts.Name, err)
		}
		checked = append(checked, ts.Name)
	}
	return checked, nil
}

// specTables is the spec's table names of each party that has tables.
func specTables(spec *job.Spec) map[string][]string {
	out := map[string][]string{}
	for _, p := range spec.Parties {
		for _, t := range p.Tables {
			out[p.Name] = append(out[p.Name], t.Name)
		}
	}
	return out
}

// checkedAll reports whether every party checked exactly the tables the
// spec gives it.
func checkedAll(spec *job.Spec, results map[string]output) error {
	want := specTables(spec)
	for _, name := range spec.PartyNames() {
		out, ok := results[name]
		if !ok {
			continue // missing: the aggregation's verdict names it
		}
		if !slices.Equal(out.Checked, want[name]) {
			return fmt.Errorf("party %s checked tables %v, but the spec gives it %v", name, out.Checked, want[name])
		}
	}
	return nil
}
