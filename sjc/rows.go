package sjc

import (
	"context"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
)

// ownTables loads the party's training tables with a weight per row. When
// the node groups rows (Kind.GroupRows), each table is its distinct rows
// over the columns the rounds read with how many rows hold each: rows
// alike in every such column are alike in every round (Local's weight),
// so a database groups them where they live. Otherwise each row is its
// own, of weight 1.
func ownTables(ctx context.Context, p job.Participant, group bool) ([]*table.Distinct, error) {
	if group {
		return job.LoadDistinct(ctx, p, func(_ string, schema map[string]table.Kind) []string { return GroupColumns(schema) })
	}
	tables, err := job.LoadTables(ctx, p)
	if err != nil {
		return nil, err
	}
	out := make([]*table.Distinct, len(tables))
	for i, t := range tables {
		out[i] = rowByRow(t)
	}
	return out, nil
}

// testTable loads the test table of the party's table name as ownTables
// loads the training tables.
func testTable(ctx context.Context, p job.Participant, name string, schema map[string]table.Kind, group bool) (*table.Distinct, error) {
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
