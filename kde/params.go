package kde

import (
	"math"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// Params are a kde spec's params.
type Params struct {
	// MinRows is the fewest rows of one class a party resamples from: a
	// party with fewer rows of a class it holds refuses the job. A density
	// of few rows keeps them close (the paper's Example 2); it is the k
	// the policy's min_k floor holds the sample to. Default 10.
	MinRows int `yaml:"min_rows"`
	// SampleRatio is M_l/N_l, the rows a party draws per row it holds, of
	// each class (the paper draws M_l = N_l and reports M_l = N_l/2 about
	// as accurate, Remark 1). In (0, 1]; default 1.
	SampleRatio float64 `yaml:"sample_ratio"`
	// MaxDepth, MinSplit and Prune grow the trees `cohort sim` compares
	// (tree.GrowParams).
	MaxDepth  int    `yaml:"max_depth"`
	MinSplit  uint64 `yaml:"min_split"`
	Prune     bool   `yaml:"prune"`
	TimeoutMS int64  `yaml:"timeout_ms"`
}

func (p Params) grow() tree.GrowParams {
	return tree.GrowParams{MaxDepth: p.MaxDepth, MinSplit: p.MinSplit, Prune: p.Prune}
}

// sampleRows is how many rows a party draws of a class it holds n of:
// round(SampleRatio·n), at least one (Sanitise).
func (p Params) sampleRows(n int) int {
	return max(1, int(math.Round(p.SampleRatio*float64(n))))
}

// config is a checked spec: params, the common attributes (numeric, in
// name order), the class column and each party's one table.
type config struct {
	p      Params
	attrs  []string
	class  string
	tables map[string]string // party -> table name
	test   string            // the test set's path, "" without one
}

// parse checks a spec: params in range; one table per party; a schema for
// every table, the same for all (a horizontal partition), of numeric
// attributes and exactly one class column; at most one test set. Errors
// name the field.
func parse(spec *job.Spec) (*config, error) {
	p := Params{MinRows: 10, SampleRatio: 1, MaxDepth: 10, MinSplit: 2, Prune: true}
	if err := spec.DecodeParams(&p); err != nil {
		return nil, err
	}
	switch {
	case p.MinRows < 2:
		return nil, spec.Errorf("params.min_rows", "must be at least 2: a bandwidth needs a standard deviation")
	case !(p.SampleRatio > 0 && p.SampleRatio <= 1):
		return nil, spec.Errorf("params.sample_ratio", "must be in (0, 1]")
	case p.MaxDepth < 0 || p.MaxDepth > 64:
		return nil, spec.Errorf("params.max_depth", "must be in [0, 64]")
	case len(spec.Parties) == 0:
		return nil, spec.Errorf("parties", "no party")
	case len(spec.Test) > 1:
		return nil, spec.Errorf("test", "kde takes one test set, in the common schema")
	}
	if err := spec.CheckTimeoutMS(p.TimeoutMS); err != nil {
		return nil, err
	}
	tables, first, firstName, err := spec.Horizontal("kde")
	if err != nil {
		return nil, err
	}
	cfg := &config{p: p, tables: tables}
	for col, ks := range first {
		field := "schema." + firstName + "." + col
		switch k, err := table.ParseKind(ks); {
		case err != nil:
			return nil, spec.Errorf(field, "unknown kind")
		case k == table.Numeric:
			cfg.attrs = append(cfg.attrs, col)
		case k == table.Class && cfg.class != "":
			return nil, spec.Errorf(field, "a second class column")
		case k == table.Class:
			cfg.class = col
		default:
			return nil, spec.Errorf(field, "kde resamples numeric columns: numeric attributes and one class column")
		}
	}
	switch {
	case cfg.class == "":
		return nil, spec.Errorf("schema."+firstName, "no class column")
	case len(cfg.attrs) == 0:
		return nil, spec.Errorf("schema."+firstName, "no numeric attribute")
	}
	slices.Sort(cfg.attrs)
	for name, path := range spec.Test {
		if _, ok := spec.Schema[name]; !ok || !slices.Contains(partyTables(cfg), name) {
			return nil, spec.Errorf("test."+name, "names no table of the job: key the test set by a table whose schema it has")
		}
		cfg.test = path
	}
	return cfg, nil
}

func partyTables(cfg *config) []string {
	var out []string
	for _, t := range cfg.tables {
		out = append(out, t)
	}
	return out
}

// schema is the common schema as the table loader takes it.
func (cfg *config) schema() map[string]table.Kind {
	s := map[string]table.Kind{cfg.class: table.Class}
	for _, a := range cfg.attrs {
		s[a] = table.Numeric
	}
	return s
}
