package job

import (
	"fmt"

	"github.com/cohortdm/cohort/table"
)

// TableSchema returns the schema the spec declares for a table, or nil
// (infer the kinds) when it declares none.
func (s *Spec) TableSchema(name string) (map[string]table.Kind, error) {
	cols, ok := s.Schema[name]
	if !ok {
		return nil, nil
	}
	out := make(map[string]table.Kind, len(cols))
	for col, k := range cols {
		kind, err := table.ParseKind(k)
		if err != nil {
			return nil, s.Errorf(fmt.Sprintf("schema.%s.%s", name, col), "%v", err)
		}
		out[col] = kind
	}
	return out, nil
}

// LoadTables loads every table of the participant's own party.
func LoadTables(p Participant) ([]*table.Table, error) {
	spec := p.Spec()
	ps, ok := spec.Party(p.Self())
	if !ok {
		return nil, fmt.Errorf("party %q is not in the job spec", p.Self())
	}
	var out []*table.Table
	for _, ts := range ps.Tables {
		schema, err := spec.TableSchema(ts.Name)
		if err != nil {
			return nil, err
		}
		t, err := table.Load(p.TablePath(ts), ts.Name, schema)
		if err != nil {
			return nil, fmt.Errorf("party %s: %w", p.Self(), err)
		}
		out = append(out, t)
	}
	return out, nil
}
