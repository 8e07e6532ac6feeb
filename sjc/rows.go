package sjc

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
)

// groupRatio: under GroupAuto a table is grouped when its distinct rows
// are estimated at most 1/groupRatio of its rows. Loading distinct rows
// costs a scan that hashes every row and then about as much per distinct
// row as five rows loaded one by one cost (the server's GROUP BY by value
// and text, its sort, the groups' transfer and check); loading rows costs
// one plain read per row. On PostgreSQL (docs/sources.md, "Distinct rows:
// sjc": 10,000,000 rows in 100,000 groups, 3,000,000 rows all distinct)
// a row read costs about 2.2 µs, a row hashed 1.2 µs and a group 11 µs,
// so grouping pays below about one distinct row in ten; the party's
// memory, the rows' or the groups', falls with the same ratio.
const groupRatio = 10

// ownTables loads the party's training tables with a weight per row.
// Grouped, each table is its distinct rows over the columns the rounds
// read with how many rows hold each: rows alike in every such column are
// alike in every round (Local's weight), so a database groups them where
// they live. Otherwise each row is its own, of weight 1. The choice is
// made per table (grouping) and kept in the job's scratch, so that a
// session reopened after a restart loads each table as its kept state's
// row numbers expect, whatever the table's statistics (under GroupAuto)
// or node.yaml's sjc_group_rows say by then.
func ownTables(ctx context.Context, p job.Participant, mode GroupMode) ([]*table.Distinct, error) {
	spec := p.Spec()
	ps, ok := spec.Party(p.Self())
	if !ok {
		return nil, fmt.Errorf("party %q is not in the job spec", p.Self())
	}
	kept := map[string]bool{}
	if b, err := p.Secrets().ReadSecret(groupedSecret(p.JobID())); err == nil && len(b) > 0 {
		if err := json.Unmarshal(b, &kept); err != nil {
			return nil, fmt.Errorf("party %s: the kept choice of grouped tables: %w", p.Self(), err)
		}
	}
	fresh := false
	var out []*table.Distinct
	for _, ts := range ps.Tables {
		schema, err := spec.TableSchema(ts.Name)
		if err != nil {
			return nil, err
		}
		group, ok := kept[ts.Name]
		if !ok {
			group = grouping(ctx, p, ts, ts.Name, schema, mode)
			kept[ts.Name], fresh = group, true
		}
		d, err := loadTable(ctx, p, ts, ts.Name, schema, group)
		if err != nil {
			return nil, fmt.Errorf("party %s: %w", p.Self(), err)
		}
		out = append(out, d)
	}
	if fresh {
		b, _ := json.Marshal(kept) // a map of bools
		if err := p.Secrets().WriteSecret(groupedSecret(p.JobID()), b); err != nil {
			return nil, fmt.Errorf("party %s: keeping the choice of grouped tables: %w", p.Self(), err)
		}
	}
	return out, nil
}

// groupedSecret is where a party keeps, per training table, whether it
// grouped it (job scratch).
func groupedSecret(id string) string { return "jobs/" + id + "/sjc-grouped" }

// grouping says whether the table ts (read with schema as name) is
// loaded grouped: as the mode fixes it, or, under GroupAuto, when its
// estimated distinct rows over GroupColumns are at most 1/groupRatio of
// its rows (job.EstimateDistinct: the database's statistics, its count
// of a hash sample, or a sketch of a streamed file). An estimate that
// fails loads rows, whose load then names the problem. The choice and
// its estimate are in the party's own log (info), never in a
// message: the tree, every summary and every count sent are the same
// either way.
func grouping(ctx context.Context, p job.Participant, ts job.TableSpec, name string, schema map[string]table.Kind, mode GroupMode) bool {
	switch {
	case mode == GroupOn:
		return true
	case mode == GroupOff || schema == nil:
		return false
	}
	e, err := job.EstimateDistinct(ctx, p, ts, schema, GroupColumns(schema))
	if err != nil {
		p.Log().InfoContext(ctx, "sjc: no estimate of distinct rows; rows loaded one by one", "table", name)
		return false
	}
	group := e.Distinct*groupRatio <= e.Rows
	p.Log().InfoContext(ctx, "sjc: distinct rows estimated", "table", name, "rows", e.Rows, "distinct", e.Distinct, "how", e.How, "grouped", group)
	return group
}

// loadTable loads one table grouped or row by row.
func loadTable(ctx context.Context, p job.Participant, ts job.TableSpec, name string, schema map[string]table.Kind, group bool) (*table.Distinct, error) {
	if group {
		return job.OpenDistinct(ctx, p, ts, name, schema, GroupColumns(schema))
	}
	t, err := job.OpenTable(ctx, p, ts, name, schema)
	if err != nil {
		return nil, err
	}
	return rowByRow(t), nil
}

// testTable loads the test table of the party's table name as ownTables
// loads the training tables (choosing afresh under GroupAuto: the test
// set is read within one step, and no kept state refers to its rows).
func testTable(ctx context.Context, p job.Participant, name string, schema map[string]table.Kind, mode GroupMode) (*table.Distinct, error) {
	ts := p.Spec().TestTable(name)
	group := grouping(ctx, p, ts, name, schema, mode)
	if group {
		return job.OpenTestDistinct(ctx, p, name, GroupColumns(schema))
	}
	t, err := job.OpenTestTable(ctx, p, name)
	if err != nil {
		return nil, err
	}
	return rowByRow(t), nil
}

// rowByRow is t with each row its own, of weight 1.
func rowByRow(t *table.Table) *table.Distinct {
	counts := make([]int, t.NumRows())
	for i := range counts {
		counts[i] = 1
	}
	return &table.Distinct{Table: t, Counts: counts}
}
