package hamdist

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/psi"
	"github.com/cohortdm/cohort/table"
)

// Alignments of the two parties' rows.
const (
	AlignPSI      = "psi"      // by the id column, through a private set intersection
	AlignPosition = "position" // row i of one table is row i of the other
)

// Side is one party of a two-party comparison job as its spec gives it:
// its one table, its id column ("" without one) and its other columns by
// kind, names sorted.
type Side struct {
	Party, Table string
	ID           string
	Columns      map[table.Kind][]string
}

// ParsePair reads a spec of two parties with one table each, every table
// with a schema of at most one id column; with align psi each table needs
// its id column. Errors name the field.
func ParsePair(spec *job.Spec, kind, align string) ([2]Side, error) {
	var out [2]Side
	if len(spec.Parties) != 2 {
		return out, spec.Errorf("parties", "%s compares two parties' columns: exactly two parties", kind)
	}
	if align != AlignPSI && align != AlignPosition {
		return out, spec.Errorf("params.align", "must be psi or position")
	}
	for i, ps := range spec.Parties {
		if len(ps.Tables) != 1 {
			return out, spec.Errorf(fmt.Sprintf("parties[%d].tables", i), "%s takes one table per party", kind)
		}
		s := Side{Party: ps.Name, Table: ps.Tables[0].Name, Columns: map[table.Kind][]string{}}
		sch, ok := spec.Schema[s.Table]
		if !ok {
			return out, spec.Errorf("schema."+s.Table, "missing: %s needs every table's schema", kind)
		}
		for _, col := range slices.Sorted(maps.Keys(sch)) {
			field := "schema." + s.Table + "." + col
			k, err := table.ParseKind(sch[col])
			switch {
			case err != nil:
				return out, spec.Errorf(field, "unknown kind")
			case k == table.ID && s.ID != "":
				return out, spec.Errorf(field, "a second id column")
			case k == table.ID:
				s.ID = col
			case k == table.Key:
				return out, spec.Errorf(field, "%s aligns rows by an id column, not a join key", kind)
			default:
				s.Columns[k] = append(s.Columns[k], col)
			}
		}
		if align == AlignPSI && s.ID == "" {
			return out, spec.Errorf("schema."+s.Table, "no id column: params.align psi aligns rows by it")
		}
		out[i] = s
	}
	return out, nil
}

// Rows loads the party's one table and aligns its rows with peer's: by
// PSI on the id column (the holder is the PSI's receiver), or all rows in
// order. It returns the table and the aligned rows.
func Rows(ctx context.Context, p job.Participant, step job.Step, s Side, peer, align string, holder bool) (*table.Table, []int, error) {
	tables, err := job.LoadTables(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	t := tables[0]
	if align == AlignPosition {
		return t, AllRows(t), nil
	}
	role := psi.Sender
	if holder {
		role = psi.Receiver
	}
	rows, err := AlignByID(ctx, p, step, peer, role, t, s.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("party %s: align: %w", p.Self(), err)
	}
	return t, rows, nil
}
