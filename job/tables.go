package job

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
		path, err := p.TablePath(ts)
		if err != nil {
			return nil, fmt.Errorf("party %s: %w", p.Self(), err)
		}
		t, err := table.Load(path, ts.Name, schema)
		if err != nil {
			return nil, fmt.Errorf("party %s: %w", p.Self(), err)
		}
		out = append(out, t)
	}
	return out, nil
}

// NumericColumn returns the values of the numeric column col over every one
// of the participant's tables that has it, in table order. A table with a
// header and no rows adds nothing; a party with no such table at all, or
// whose column is not numeric, gets an error naming it.
func NumericColumn(p Participant, col string) ([]float64, error) {
	tables, err := LoadTables(p)
	if err != nil {
		return nil, err
	}
	var out []float64
	found := false
	for _, t := range tables {
		c, err := t.Column(col)
		if err != nil {
			continue
		}
		found = true
		if t.NumRows() == 0 {
			continue
		}
		if c.Num == nil {
			return nil, fmt.Errorf("party %s: column %s of table %s is not numeric", p.Self(), col, t.Name)
		}
		out = append(out, c.Num...) // finite: the table loader refuses NaN and infinities
	}
	if !found {
		return nil, fmt.Errorf("party %s has no table with column %q", p.Self(), col)
	}
	return out, nil
}

// ErrTablePath means a spec's table path leaves the directory tables must
// live in.
var ErrTablePath = errors.New("table path outside the tables directory")

// ResolveTablePath resolves a spec's table path against root (a node's
// tables_dir, or the spec's directory in simulations) and refuses any path
// that is absolute or leaves root, symlinks included: a spec is written by
// any member and runs on every node, so it must not name other files a node
// can read.
func ResolveTablePath(root, path string) (string, error) {
	if !filepath.IsLocal(path) {
		return "", fmt.Errorf("%w: %q (paths are relative to %s and stay inside it)", ErrTablePath, path, root)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("tables directory: %w", err)
	}
	full := filepath.Join(realRoot, path)
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("table %s: no such file in %s", path, root)
		}
		return "", fmt.Errorf("table %s: %w", path, err)
	}
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%w: %q resolves to %s", ErrTablePath, path, real)
	}
	return real, nil
}
