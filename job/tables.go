package job

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// LoadTables loads every table of the participant's own party, each from
// the source the participant resolves for it (Participant.TableSource). ctx
// bounds database connections and queries.
func LoadTables(ctx context.Context, p Participant) ([]*table.Table, error) {
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
		t, err := OpenTable(ctx, p, ts, ts.Name, schema)
		if err != nil {
			return nil, fmt.Errorf("party %s: %w", p.Self(), err)
		}
		out = append(out, t)
	}
	return out, nil
}

// LoadDistinct is LoadTables for a kind whose local work needs only each
// table's distinct rows over some of its columns and how many rows hold
// each (table.OpenDistinct), cols(name, schema) naming them: a database
// groups the rows where they live, a file is streamed, and memory is the
// distinct rows', which max_table_rows bounds. Each pushed-down query is
// in the participant's log at debug level.
func LoadDistinct(ctx context.Context, p Participant, cols func(name string, schema map[string]table.Kind) []string) ([]*table.Distinct, error) {
	spec := p.Spec()
	ps, ok := spec.Party(p.Self())
	if !ok {
		return nil, fmt.Errorf("party %q is not in the job spec", p.Self())
	}
	var out []*table.Distinct
	for _, ts := range ps.Tables {
		schema, err := spec.TableSchema(ts.Name)
		if err != nil {
			return nil, err
		}
		d, err := openDistinct(ctx, p, ts, ts.Name, schema, cols(ts.Name, schema), "table "+ts.Name)
		if err != nil {
			return nil, fmt.Errorf("party %s: %w", p.Self(), err)
		}
		out = append(out, d)
	}
	return out, nil
}

// OpenTestDistinct is OpenTestTable's distinct rows over cols with their
// multiplicities (LoadDistinct).
func OpenTestDistinct(ctx context.Context, p Participant, name string, cols []string) (*table.Distinct, error) {
	spec := p.Spec()
	schema, err := spec.TableSchema(name)
	if err != nil {
		return nil, err
	}
	return openDistinct(ctx, p, spec.TestTable(name), name, schema, cols, "test table "+name)
}

// TestTable is the table spec of the test set for the table name: named
// "test:NAME", with the spec's test path, so that a node may map it in
// node.yaml like any other table.
func (s *Spec) TestTable(name string) TableSpec {
	return TableSpec{Name: "test:" + name, Path: s.Test[name]}
}

// OpenDistinct is LoadDistinct for one table of the participant's (ts,
// read with schema as table name): a kind that chooses per table
// between rows and distinct rows loads each with OpenTable or this.
func OpenDistinct(ctx context.Context, p Participant, ts TableSpec, name string, schema map[string]table.Kind, cols []string) (*table.Distinct, error) {
	return openDistinct(ctx, p, ts, name, schema, cols, "table "+ts.Name)
}

// EstimateDistinct is table.EstimateDistinct of one table of the
// participant's, from the source it resolves for ts: a cheap estimate of
// its rows and of its distinct rows over cols, for choosing how to load
// it. Its queries are in the participant's log at debug level.
func EstimateDistinct(ctx context.Context, p Participant, ts TableSpec, schema map[string]table.Kind, cols []string) (table.DistinctEstimate, error) {
	src, err := p.TableSource(ts)
	if err != nil {
		return table.DistinctEstimate{}, err
	}
	return table.EstimateDistinct(ctx, src, schema, cols, table.ReadOptions{Label: table.Label(src), Log: p.Log()})
}

// openDistinct is openTable for distinct rows.
func openDistinct(ctx context.Context, p Participant, ts TableSpec, name string, schema map[string]table.Kind, cols []string, subject string) (*table.Distinct, error) {
	src, err := p.TableSource(ts)
	if err != nil {
		return nil, err
	}
	d, err := table.OpenDistinct(ctx, src, name, schema, cols, table.ReadOptions{Label: table.Label(src), Log: p.Log()})
	if errors.Is(err, table.ErrTooLarge) {
		return nil, fmt.Errorf("%s: kind %s loads a table's distinct rows into memory: %w", subject, p.Spec().Kind, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", subject, err)
	}
	return d, nil
}

// OpenTable loads one of the participant's own files (a table, a
// taxonomy, a test set) as table name. Its errors name the file by its
// base name, never by the directories it sits in: a session may report
// them to the coordinator, and every member's log keeps what it commits.
func OpenTable(ctx context.Context, p Participant, ts TableSpec, name string, schema map[string]table.Kind) (*table.Table, error) {
	return openTable(ctx, p, ts, name, schema, "table "+ts.Name)
}

// openTable is OpenTable with its errors' subject given ("table t", "test
// table t").
func openTable(ctx context.Context, p Participant, ts TableSpec, name string, schema map[string]table.Kind, subject string) (*table.Table, error) {
	src, err := p.TableSource(ts)
	if err != nil {
		return nil, err
	}
	t, err := table.Open(ctx, src, name, schema, table.ReadOptions{Label: table.Label(src)})
	if errors.Is(err, table.ErrTooLarge) {
		return nil, fmt.Errorf("%s: kind %s loads whole tables into memory: %w", subject, p.Spec().Kind, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", subject, err)
	}
	return t, nil
}

// OpenOwnTable loads the participant's own table of the spec named name,
// read with the spec's schema less the columns in drop (new data to
// classify need not carry the class column).
func OpenOwnTable(ctx context.Context, p Participant, name string, drop ...string) (*table.Table, error) {
	spec := p.Spec()
	ps, _ := spec.Party(p.Self())
	at := slices.IndexFunc(ps.Tables, func(t TableSpec) bool { return t.Name == name })
	if at < 0 {
		return nil, fmt.Errorf("party %s has no table %q", p.Self(), name)
	}
	schema, err := spec.TableSchema(name)
	if err != nil {
		return nil, err
	}
	for _, c := range drop {
		delete(schema, c)
	}
	return OpenTable(ctx, p, ps.Tables[at], name, schema)
}

// OpenTestTable loads the participant's test set for the table name: a
// table named "test:NAME" with the spec's test path, read with NAME's
// schema, so that a node may map it in node.yaml like any other table.
func OpenTestTable(ctx context.Context, p Participant, name string) (*table.Table, error) {
	spec := p.Spec()
	schema, err := spec.TableSchema(name)
	if err != nil {
		return nil, err
	}
	return openTable(ctx, p, spec.TestTable(name), name, schema, "test table "+name)
}

// NumericColumn returns the values of the numeric column col over every one
// of the participant's tables that has it, in table order. A table with a
// header and no rows adds nothing; a party with no such table at all, or
// whose column is not numeric, gets an error naming it.
func NumericColumn(ctx context.Context, p Participant, col string) ([]float64, error) {
	tables, err := LoadTables(ctx, p)
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

// ErrTableSource means a spec's table cannot be given a source on this
// node: it is not mapped and names no path, or it names a source (database,
// query) that only simulations honour.
var ErrTableSource = errors.New("no usable table source")

// ResolveSource decides where a party's table t is read from. mapped is the
// party's own mapping from logical table names to sources (node.yaml's
// tables:, or in a simulation the spec's party sources) and wins; otherwise
// the spec's source is used when specSources is set (simulations and tests),
// and otherwise the spec's path (CSV, or Parquet by extension). A running
// node passes specSources false: a spec is written by any member, so it may
// not point a node at a database or a query.
//
// Every file the result names (a CSV or Parquet path, an SQLite database)
// is resolved inside root with ResolveTablePath, so it cannot leave root
// (tables_dir, or the spec's directory in simulations). The one exception is
// an absolute postgres_file from the node's own mapping: node.yaml is the
// operator's, and the credential does not belong among the tables.
func ResolveSource(root string, t TableSpec, mapped map[string]table.Source, specSources bool) (table.Source, error) {
	var src table.Source
	own := false
	switch m, ok := mapped[t.Name]; {
	case ok:
		src, own = m, true
	case t.Source != nil && specSources:
		src = *t.Source
	case t.Source != nil:
		return table.Source{}, fmt.Errorf("%w: table %s: the spec names a source, which only simulations read; map the table in node.yaml (tables:) or give a path under tables_dir", ErrTableSource, t.Name)
	case t.Path != "":
		src = table.Source{Path: t.Path}
	default:
		return table.Source{}, fmt.Errorf("%w: table %s is not mapped in this node's tables: and the spec gives no path", ErrTableSource, t.Name)
	}
	if err := src.Validate(); err != nil {
		return table.Source{}, fmt.Errorf("table %s: %w", t.Name, err)
	}
	for _, f := range []*string{&src.Path, &src.SQLite, &src.PostgresFile} {
		if *f == "" || (own && f == &src.PostgresFile && filepath.IsAbs(*f)) {
			continue
		}
		real, err := ResolveTablePath(root, *f)
		if err != nil {
			return table.Source{}, err
		}
		*f = real
	}
	return src, nil
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
	// No message names root: a node's tables_dir is where its
	// organisation keeps its files, and a job may report the error.
	if !filepath.IsLocal(path) {
		return "", fmt.Errorf("%w: %q (paths are relative to the tables directory and stay inside it)", ErrTablePath, path)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("tables directory: %w", table.WithoutPath(err))
	}
	full := filepath.Join(realRoot, path)
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("table %s: no such file in the node's tables_dir", path)
		}
		return "", fmt.Errorf("table %s: %w", path, table.WithoutPath(err))
	}
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%w: %q leaves it through a symbolic link", ErrTablePath, path)
	}
	return real, nil
}
