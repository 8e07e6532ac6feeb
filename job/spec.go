package job

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/cohortdm/cohort/internal/strictyaml"
	"github.com/cohortdm/cohort/table"

	"gopkg.in/yaml.v3"
)

// Spec is a job spec as written in YAML (the README's "Job specs" documents it).
type Spec struct {
	Kind       string                       `yaml:"kind" msgpack:"kind"`
	Parties    []PartySpec                  `yaml:"parties" msgpack:"parties"`
	Schema     map[string]map[string]string `yaml:"schema,omitempty" msgpack:"schema"`
	Join       []string                     `yaml:"join,omitempty" msgpack:"join"`
	Params     map[string]any               `yaml:"params,omitempty" msgpack:"params"`
	Test       map[string]string            `yaml:"test,omitempty" msgpack:"test"`
	Taxonomies map[string]string            `yaml:"taxonomies,omitempty" msgpack:"taxonomies"`
	// Source is the spec file, for error messages; Dir resolves relative paths
	// in sim mode. Neither is part of the YAML.
	Source string `yaml:"-" msgpack:"-"`
	Dir    string `yaml:"-" msgpack:"-"`
}

// PartySpec names a party and its tables.
type PartySpec struct {
	Name   string      `yaml:"name" msgpack:"name"`
	Tables []TableSpec `yaml:"tables,omitempty" msgpack:"tables"`
}

// TableSpec names one table and, optionally, where it lives: Path is a CSV
// file (Parquet when it ends in .parquet) relative to the spec file, or to
// the node's tables_dir on a running node; Source is any table.Source
// (SQLite, PostgreSQL, files), honoured by simulations only. With neither,
// each node must map the name to a source in its node.yaml (tables:), so the
// spec that travels names tables and columns only.
type TableSpec struct {
	Name   string        `yaml:"name" msgpack:"name"`
	Path   string        `yaml:"path,omitempty" msgpack:"path"`
	Source *table.Source `yaml:"source,omitempty" msgpack:"source"`
}

// ErrSpec wraps every spec problem.
var ErrSpec = errors.New("invalid job spec")

// LoadSpec reads and parses a spec file.
func LoadSpec(path string) (*Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read job spec: %w", err)
	}
	s, err := ParseSpec(b, path)
	if err != nil {
		return nil, err
	}
	s.Dir = filepath.Dir(path)
	return s, nil
}

// ParseSpec parses spec YAML strictly (unknown fields are errors) and checks
// the fields every kind shares. source names the file in errors.
func ParseSpec(b []byte, source string) (*Spec, error) {
	var s Spec
	if err := strictyaml.Decode(bytes.NewReader(b), &s); err != nil {
		if errors.Is(err, io.EOF) { // no YAML document at all, not a truncated one
			return nil, fmt.Errorf("%w: %s: the spec is empty", ErrSpec, source)
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrSpec, source, err)
	}
	s.Source = source
	if err := s.check(); err != nil {
		return nil, err
	}
	return &s, nil
}

func (s *Spec) errorf(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s: field %s: %s", ErrSpec, s.Source, field, fmt.Sprintf(format, args...))
}

func (s *Spec) check() error {
	if s.Kind == "" {
		return s.errorf("kind", "missing")
	}
	if len(s.Parties) == 0 {
		return s.errorf("parties", "no parties")
	}
	seen := map[string]bool{}
	for i, p := range s.Parties {
		if p.Name == "" {
			return s.errorf(fmt.Sprintf("parties[%d].name", i), "missing")
		}
		if seen[p.Name] {
			return s.errorf(fmt.Sprintf("parties[%d].name", i), "duplicate party %q", p.Name)
		}
		seen[p.Name] = true
		for j, t := range p.Tables {
			field := fmt.Sprintf("parties[%d].tables[%d]", i, j)
			if t.Name == "" {
				return s.errorf(field+".name", "missing")
			}
			if t.Path != "" && t.Source != nil {
				return s.errorf(field, "give path or source, not both")
			}
			if t.Path != "" && !filepath.IsLocal(t.Path) {
				return s.errorf(field+".path", "%q must be a relative path that stays inside the tables directory", t.Path)
			}
			if t.Source != nil {
				if err := t.Source.Validate(); err != nil {
					return s.errorf(field+".source", "%v", err)
				}
				for _, f := range []string{t.Source.Path, t.Source.SQLite, t.Source.PostgresFile} {
					if f != "" && !filepath.IsLocal(f) {
						return s.errorf(field+".source", "%q must be a relative path that stays inside the spec's directory", f)
					}
				}
			}
		}
	}
	return nil
}

// Errorf builds an error that names the spec file and field, for kinds'
// Validate methods.
func (s *Spec) Errorf(field, format string, args ...any) error {
	return s.errorf(field, format, args...)
}

// MaxStepTimeout bounds a kind's params.timeout_ms: a day.
const MaxStepTimeout = 24 * time.Hour

// CheckTimeoutMS checks a kind's params.timeout_ms, the time its steps
// get: 0 (the node's step timeout) up to MaxStepTimeout.
func (s *Spec) CheckTimeoutMS(ms int64) error {
	if ms < 0 || ms > MaxStepTimeout.Milliseconds() {
		return s.errorf("params.timeout_ms", "must be in [0, %d] (0: the node's step timeout; at most a day), not %d", MaxStepTimeout.Milliseconds(), ms)
	}
	return nil
}

// TimeoutMS is params.timeout_ms as a number of milliseconds, or 0 when
// the spec sets none (or sets it to something that is not a whole
// number, which the kind's Validate refuses).
func (s *Spec) TimeoutMS() int64 {
	switch v := s.Params["timeout_ms"].(type) {
	case int:
		return int64(v)
	case int64:
		return v
	case uint64:
		if v <= uint64(MaxStepTimeout.Milliseconds()) {
			return int64(v)
		}
	case float64:
		if v == float64(int64(v)) {
			return int64(v)
		}
	}
	return 0
}

// PartyNames returns the parties' names, sorted.
func (s *Spec) PartyNames() []string {
	names := make([]string, len(s.Parties))
	for i, p := range s.Parties {
		names[i] = p.Name
	}
	sort.Strings(names)
	return names
}

// Party returns the named party's spec.
func (s *Spec) Party(name string) (PartySpec, bool) {
	for _, p := range s.Parties {
		if p.Name == name {
			return p, true
		}
	}
	return PartySpec{}, false
}

// Param returns params[name], or def when absent.
func (s *Spec) Param(name string, def any) any {
	if v, ok := s.Params[name]; ok {
		return v
	}
	return def
}

// Marshal returns the spec as YAML, the form committed to the log.
func (s *Spec) Marshal() ([]byte, error) {
	b, err := yaml.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("marshal job spec: %w", err)
	}
	return b, nil
}

// Horizontal checks a spec whose parties each hold one table of the same
// schema (rows split by party, as pgen and kde take them) and returns each
// party's table name, the common schema, and the first table's name (the
// field to name for that schema). kind names the job in the errors.
func (s *Spec) Horizontal(kind string) (tables map[string]string, schema map[string]string, first string, err error) {
	tables = map[string]string{}
	for i, ps := range s.Parties {
		if len(ps.Tables) != 1 {
			return nil, nil, "", s.Errorf(fmt.Sprintf("parties[%d].tables", i), "%s takes one table per party (its rows of the horizontal partition)", kind)
		}
		name := ps.Tables[0].Name
		tables[ps.Name] = name
		sch, ok := s.Schema[name]
		if !ok {
			return nil, nil, "", s.Errorf("schema."+name, "missing: %s needs every table's schema", kind)
		}
		if schema == nil {
			schema, first = sch, name
			continue
		}
		if len(sch) != len(schema) {
			return nil, nil, "", s.Errorf("schema."+name, "differs from the first table's: a horizontal partition has one schema")
		}
		for col, k := range sch {
			if schema[col] != k {
				return nil, nil, "", s.Errorf("schema."+name+"."+col, "differs from the first table's: a horizontal partition has one schema")
			}
		}
	}
	return tables, schema, first, nil
}
