package hamming

import (
	"github.com/cohortdm/cohort/hamdist"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
)

// Params are a hamming spec's params.
type Params struct {
	// KeyHolder is the party that holds the run's ElGamal key (the paper's
	// Alice): it learns the distance first and reports it. Default: the
	// first party of the spec.
	KeyHolder string `yaml:"keyholder"`
	// Threshold t makes the distance generalised over numbers: an id
	// counts when its two values differ by more than t (integers; 0, the
	// default, counts every difference, the paper's distance). The comparer
	// sends 2t+1 ciphertexts per id.
	Threshold int `yaml:"threshold"`
	// Align is psi (by the id columns; the default) or position.
	Align string `yaml:"align"`
	// MinIDs is the fewest ids compared: below it both parties refuse (a
	// distance over one id is that id's comparison). Default 10.
	MinIDs    int   `yaml:"min_ids"`
	TimeoutMS int64 `yaml:"timeout_ms"`
}

// MaxThreshold bounds params.threshold (257 ciphertexts per id).
const MaxThreshold = 128

// config is a checked spec.
type config struct {
	p       Params
	sides   [2]hamdist.Side
	columns [2]string // the compared column of each side
	numeric bool
}

// parse checks a spec: two parties, one table each, each with its id
// column (align psi) and exactly one other column, both numeric or both
// text (categorical or class); params in range. Errors name the field.
func parse(spec *job.Spec) (*config, error) {
	p := Params{Align: hamdist.AlignPSI, MinIDs: 10}
	if err := spec.DecodeParams(&p); err != nil {
		return nil, err
	}
	if err := spec.CheckTimeoutMS(p.TimeoutMS); err != nil {
		return nil, err
	}
	sides, err := hamdist.ParsePair(spec, "hamming", p.Align)
	if err != nil {
		return nil, err
	}
	if p.KeyHolder == "" {
		p.KeyHolder = sides[0].Party
	}
	switch {
	case p.KeyHolder != sides[0].Party && p.KeyHolder != sides[1].Party:
		return nil, spec.Errorf("params.keyholder", "names no party of the job")
	case p.Threshold < 0 || p.Threshold > MaxThreshold:
		return nil, spec.Errorf("params.threshold", "must be in [0, %d]", MaxThreshold)
	case p.MinIDs < 1:
		return nil, spec.Errorf("params.min_ids", "must be at least 1")
	}
	cfg := &config{p: p, sides: sides}
	var kinds [2]bool
	for i, s := range sides {
		var cols []string
		for k, cs := range s.Columns {
			if k != table.Numeric && k != table.Categorical && k != table.Class {
				return nil, spec.Errorf("schema."+s.Table, "hamming compares numeric, categorical or class columns")
			}
			cols = append(cols, cs...)
			kinds[i] = k == table.Numeric
		}
		if len(cols) != 1 {
			return nil, spec.Errorf("schema."+s.Table, "exactly one column besides the id: the one compared")
		}
		cfg.columns[i] = cols[0]
	}
	switch {
	case kinds[0] != kinds[1]:
		return nil, spec.Errorf("schema."+sides[1].Table, "the compared columns must both be numeric or both text (categorical, class)")
	case p.Threshold > 0 && !kinds[0]:
		return nil, spec.Errorf("params.threshold", "compares numbers: both columns numeric")
	}
	cfg.numeric = kinds[0]
	return cfg, nil
}

// side returns the party's side and its peer's.
func (c *config) side(party string) (me, peer int, ok bool) {
	for i, s := range c.sides {
		if s.Party == party {
			return i, 1 - i, true
		}
	}
	return 0, 0, false
}

// holder reports whether side i holds the key.
func (c *config) holder(i int) bool { return c.sides[i].Party == c.p.KeyHolder }
