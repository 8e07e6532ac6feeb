package pgen

import (
	"math"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// Params are a pgen spec's params.
type Params struct {
	// ReleaseK is the path k-anonymity every published tree must have:
	// each party prunes its tree by ATP (tree.ReleasePrune) until every
	// leaf holds at least ReleaseK rows. Required.
	ReleaseK uint64 `yaml:"release_k"`
	// ReleaseL and ReleaseC, when ReleaseL is at least 2, add recursive
	// (ReleaseC, ReleaseL)-diversity of every path's class counts to the
	// requirement ATP prunes for (tree.Requirement).
	ReleaseL int     `yaml:"release_l"`
	ReleaseC float64 `yaml:"release_c"`
	// MaxDepth, MinSplit and Prune grow the local trees and the global one
	// (tree.GrowParams).
	MaxDepth  int    `yaml:"max_depth"`
	MinSplit  uint64 `yaml:"min_split"`
	Prune     bool   `yaml:"prune"`
	TimeoutMS int64  `yaml:"timeout_ms"`
	// Multiway grows C4.5's trees, as the paper's experiments did (one
	// branch per value of a categorical attribute, by gain ratio;
	// tree.GrowParams.Multiway), the local ones and the global one, and
	// ATP then merges a failing branch with siblings rather than making
	// its parent a leaf. Off by default: every tree reader of the other
	// kinds and of result.json's users takes binary trees.
	Multiway bool `yaml:"multiway"`
	// NaiveBayes adds a second global model, a naive Bayes classifier
	// learnt from the same pseudo-rows (GlobalBayes), to the result.
	NaiveBayes bool `yaml:"naive_bayes"`
	// RandomForest, when set, adds a random forest learnt from the same
	// pseudo-rows (GlobalForest), its draws from the joint seed.
	RandomForest *ForestParams `yaml:"random_forest"`
	// DecisionTable adds a decision table majority learnt from the same
	// pseudo-rows (GlobalTable).
	DecisionTable bool `yaml:"decision_table"`
	// ConjunctiveRule adds a single conjunctive rule learnt from the same
	// pseudo-rows (GlobalRule), its folds drawn from the joint seed.
	ConjunctiveRule bool `yaml:"conjunctive_rule"`
	// Ranges and Values give attributes' domains (numeric [min, max],
	// categorical values), public knowledge PGEN draws from (Generate).
	Ranges map[string][]float64 `yaml:"ranges"`
	Values map[string][]string  `yaml:"values"`
}

// release is the requirement every published path meets.
func (p Params) release() tree.Requirement {
	return tree.Requirement{K: p.ReleaseK, C: p.ReleaseC, L: p.ReleaseL}
}

func (p Params) grow() tree.GrowParams {
	return tree.GrowParams{MaxDepth: p.MaxDepth, MinSplit: p.MinSplit, Prune: p.Prune, Multiway: p.Multiway}
}

// config is a checked spec: params, the common schema and each party's
// one table.
type config struct {
	p      Params
	schema *Schema
	tables map[string]string // party -> table name
}

// parse checks a spec: params in range; one table per party; a schema for
// every table, the same for all (a horizontal partition), of numeric and
// categorical attributes and exactly one class column. Errors name the
// field.
func parse(spec *job.Spec) (*config, error) {
	p := Params{MaxDepth: 10, MinSplit: 2, Prune: true}
	if err := spec.DecodeParams(&p); err != nil {
		return nil, err
	}
	switch {
	case p.ReleaseK < 1:
		return nil, spec.Errorf("params.release_k", "required: the path k-anonymity of every published tree, at least 1")
	case p.MaxDepth < 0 || p.MaxDepth > 64:
		return nil, spec.Errorf("params.max_depth", "must be in [0, 64]")
	case len(spec.Parties) == 0:
		return nil, spec.Errorf("parties", "no party")
	case len(spec.Test) > 0:
		return nil, spec.Errorf("test", "pgen evaluates no test set: the global tree is public, classify with it")
	}
	if err := spec.CheckTimeoutMS(p.TimeoutMS); err != nil {
		return nil, err
	}
	if f := p.RandomForest; f != nil && (f.Trees < 1 || f.Trees > maxForestTrees) {
		return nil, spec.Errorf("params.random_forest.trees", "required: the number of trees, in [1, %d]", maxForestTrees)
	}
	if f, why := p.release().Check(); f != "" {
		return nil, spec.Errorf("params."+f, "%s", why)
	}
	tables, first, firstName, err := spec.Horizontal("pgen")
	if err != nil {
		return nil, err
	}
	cfg := &config{p: p, tables: tables}
	s := &Schema{Numeric: map[string]bool{}}
	for col, ks := range first {
		field := "schema." + firstName + "." + col
		k, err := table.ParseKind(ks)
		if err != nil {
			return nil, spec.Errorf(field, "unknown kind")
		}
		switch k {
		case table.Numeric, table.Categorical:
			s.Numeric[col] = k == table.Numeric
		case table.Class:
			if s.ClassColumn != "" {
				return nil, spec.Errorf(field, "a second class column")
			}
			s.ClassColumn = col
		default:
			return nil, spec.Errorf(field, "pgen takes numeric, categorical and one class column")
		}
	}
	if s.ClassColumn == "" {
		return nil, spec.Errorf("schema."+spec.Parties[0].Tables[0].Name, "no class column")
	}
	if f := p.RandomForest; f != nil && (f.Features < 0 || f.Features > len(s.Numeric)) {
		return nil, spec.Errorf("params.random_forest.features", "must be in [0, the number of attributes] (0: log2 of it, plus 1)")
	}
	if err := domains(spec, p, s); err != nil {
		return nil, err
	}
	cfg.schema = s
	return cfg, nil
}

// domains checks params.ranges and params.values against the schema and
// puts them in it.
func domains(spec *job.Spec, p Params, s *Schema) error {
	s.Ranges, s.Values = map[string][2]float64{}, map[string][]string{}
	for a, r := range p.Ranges {
		field := "params.ranges." + a
		switch num, ok := s.Numeric[a]; {
		case !ok || !num:
			return spec.Errorf(field, "not a numeric attribute of the schema")
		case len(r) != 2 || !(r[0] < r[1]) || math.IsInf(r[0], 0) || math.IsInf(r[1], 0):
			return spec.Errorf(field, "want [min, max], finite, min below max")
		}
		s.Ranges[a] = [2]float64{r[0], r[1]}
	}
	for a, v := range p.Values {
		field := "params.values." + a
		switch num, ok := s.Numeric[a]; {
		case !ok || num:
			return spec.Errorf(field, "not a categorical attribute of the schema")
		case len(v) == 0:
			return spec.Errorf(field, "no value")
		}
		s.Values[a] = v
	}
	return nil
}

// SchemaOf checks a pgen spec and returns its common schema (with the
// domains it gives) and its params.
func SchemaOf(spec *job.Spec) (*Schema, Params, error) {
	cfg, err := parse(spec)
	if err != nil {
		return nil, Params{}, err
	}
	return cfg.schema, cfg.p, nil
}
