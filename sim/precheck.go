package sim

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/table"
)

// checkTable is sim's check of one party's table before any node starts.
// A file or an SQLite database is checked as Open would read it (every
// row). A database server's table (PostgreSQL, ClickHouse) is checked by
// its header only: its columns and their types, from a query that reads
// no row, so that the check costs milliseconds rather than a scan of the
// whole table on top of the job's own (issue 35: 1.1 to 1.3 s per 3
// million PostgreSQL rows). A missing table, a missing column or a column
// of the wrong type fails here as before, with the same message; a row
// Open would refuse (a NULL, a NaN) fails the job instead, where the
// party's pushed-down query counts such rows in the same scan as its
// aggregate (or where it loads the table).
func checkTable(ctx context.Context, src table.Source, schema map[string]table.Kind) error {
	if err := src.Validate(); err != nil {
		return err
	}
	switch src.Type() {
	case table.Postgres, table.ClickHouse:
		return table.Check(ctx, headerProbe(src, schema), schema, table.ReadOptions{Label: src.String()})
	}
	return table.Check(ctx, src, schema, table.ReadOptions{})
}

// headerProbe returns src reading what it reads, with LIMIT 0: the table's
// schema columns as Open selects them, or the source's own query. The
// database plans it, so a missing table or column fails as it would, but
// executes no scan. src must be valid (one table or one SELECT).
func headerProbe(src table.Source, schema map[string]table.Kind) table.Source {
	probe := src
	probe.Table = ""
	if src.Query != "" {
		q := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(src.Query), ";"))
		probe.Query = "SELECT * FROM (" + q + ") AS cohort_probe LIMIT 0"
		return probe
	}
	cols := "*"
	if schema != nil {
		names := slices.Sorted(maps.Keys(schema))
		for i, c := range names {
			names[i] = quoteIdent(c)
		}
		cols = strings.Join(names, ", ")
	}
	parts := strings.Split(src.Table, ".")
	for i, p := range parts {
		parts[i] = quoteIdent(p)
	}
	probe.Query = "SELECT " + cols + " FROM " + strings.Join(parts, ".") + " LIMIT 0"
	return probe
}

// quoteIdent quotes an SQL identifier as package table does.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
