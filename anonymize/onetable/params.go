package onetable

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
)

// Algorithms the job runs (params.algorithm).
var algorithms = []string{"optimal", "samarati", "mondrian", "local", "mdav", "datafly", "ogf", "purpose", "onedim"}

// untaxed are the algorithms that need no taxonomies: mdav publishes
// centroids, datafly and ogf a value or "*", onedim ranges.
var untaxed = []string{"mdav", "datafly", "ogf", "onedim"}

// Params are the job's params.
type Params struct {
	Algorithm    string                  `yaml:"algorithm"`
	Requirements []anonymize.Requirement `yaml:"requirements"`
	// Sensitive is published as it is; a model below must protect it.
	Sensitive string `yaml:"sensitive"`
	// L is distinct l-diversity, or entropy l-diversity with Entropy.
	L       float64 `yaml:"l"`
	Entropy bool    `yaml:"entropy"`
	// P is p-sensitivity (at least P distinct values per class, Sun Def. 3.1).
	P int `yaml:"p"`
	// RecursiveC, RecursiveL: recursive (c, l)-diversity.
	RecursiveC float64 `yaml:"recursive_c"`
	RecursiveL int     `yaml:"recursive_l"`
	// PPlus, Alpha and Categories: p⁺-, (p, α)- and (p⁺, α)-sensitivity
	// (Sun Defs. 3.2–3.4), categories most sensitive first.
	PPlus      int        `yaml:"p_plus"`
	Alpha      float64    `yaml:"alpha"`
	Categories [][]string `yaml:"categories"`
	// MDAV (algorithm mdav, numeric quasi-identifiers, no taxonomies):
	// variant standard or thesis, and approximate: group on the key
	// attributes of the dependency tree only (Sun's AMA).
	MDAV        string `yaml:"mdav"`
	Approximate bool   `yaml:"approximate"`
	// Seed seeds OGF's genetic algorithm (algorithm ogf).
	Seed uint64 `yaml:"seed"`
	// OneDim is algorithm onedim's method: dp (Lodha and Thomas's dynamic
	// programme, the default) or quantile (their Def. 9).
	OneDim string `yaml:"onedim"`
	// Algorithm purpose (Sun ch. 4): the attribute priorities, given
	// (priorities: {col: p}) or derived for a purpose from the VI matrix
	// (purpose: {first: most useful col, last: least useful col}); the
	// degree of anonymisation asked for, or the requester's trust (degree
	// (1 − trust)²); beta the utility weights' exponent of the degree
	// reported (0: uniform); invert generalises the useful attributes least.
	Purpose    *Purpose           `yaml:"purpose"`
	Priorities map[string]float64 `yaml:"priorities"`
	Trust      *float64           `yaml:"trust"`
	Degree     *float64           `yaml:"degree"`
	Beta       float64            `yaml:"beta"`
	Invert     bool               `yaml:"invert"`
	TimeoutMS  int64              `yaml:"timeout_ms"`
}

// Model is the sensitive model the params ask for.
func (p *Params) Model() anonymize.SensitiveModel {
	m := anonymize.SensitiveModel{L: p.P, RecursiveC: p.RecursiveC, RecursiveL: p.RecursiveL, PPlus: p.PPlus, Alpha: p.Alpha, Categories: p.Categories}
	if p.Entropy {
		m.EntropyL = p.L
	} else {
		m.L = max(m.L, int(p.L))
	}
	return m
}

func parseParams(spec *job.Spec) (*Params, []string, error) {
	p := &Params{Algorithm: "optimal"}
	if err := spec.DecodeParams(p); err != nil {
		return nil, nil, err
	}
	if len(spec.Parties) != 1 || len(spec.Parties[0].Tables) != 1 {
		return nil, nil, spec.Errorf("parties", "anonymize runs on one party with one table (use kind integrate for several parties)")
	}
	if !slices.Contains(algorithms, p.Algorithm) {
		return nil, nil, spec.Errorf("params.algorithm", "must be one of %v, not %q", algorithms, p.Algorithm)
	}
	if p.MDAV == "" {
		p.MDAV = "standard"
	}
	switch {
	case p.MDAV != "standard" && p.MDAV != "thesis":
		return nil, nil, spec.Errorf("params.mdav", "must be standard or thesis, not %q", p.MDAV)
	case p.Algorithm != "mdav" && (p.Approximate || p.MDAV != "standard"):
		return nil, nil, spec.Errorf("params.mdav", "mdav and approximate are for algorithm mdav")
	case slices.Contains(untaxed, p.Algorithm) && p.Sensitive != "":
		return nil, nil, spec.Errorf("params.sensitive", "algorithm %s takes no sensitive model", p.Algorithm)
	case p.Seed != 0 && p.Algorithm != "ogf":
		return nil, nil, spec.Errorf("params.seed", "seeds algorithm ogf only")
	}
	qid, err := checkRequirements(spec, p.Requirements, !slices.Contains(untaxed, p.Algorithm))
	if err != nil {
		return nil, nil, err
	}
	if err := checkPurpose(spec, p, qid); err != nil {
		return nil, nil, err
	}
	if err := checkOneDim(spec, p, qid); err != nil {
		return nil, nil, err
	}
	if err := checkModel(spec, p, qid); err != nil {
		return nil, nil, err
	}
	if err := spec.CheckTimeoutMS(p.TimeoutMS); err != nil {
		return nil, nil, err
	}
	return p, qid, nil
}

// checkRequirements checks params.requirements and returns the union of
// their QIDs in order.
func checkRequirements(spec *job.Spec, reqs []anonymize.Requirement, needTaxonomy bool) ([]string, error) {
	if len(reqs) == 0 {
		return nil, spec.Errorf("params.requirements", "no requirement: give at least one {qid: [...], k: N}")
	}
	var qid []string
	for i, r := range reqs {
		if r.K < 2 {
			return nil, spec.Errorf(fmt.Sprintf("params.requirements[%d].k", i), "must be at least 2, not %d: classes of at least 1 record hide no one", r.K)
		}
		if len(r.QID) == 0 {
			return nil, spec.Errorf(fmt.Sprintf("params.requirements[%d].qid", i), "no columns")
		}
		for j, q := range r.QID {
			if path := spec.Taxonomies[q]; needTaxonomy && (path == "" || !filepath.IsLocal(path)) {
				return nil, spec.Errorf(fmt.Sprintf("params.requirements[%d].qid[%d]", i, j), "column %q has no taxonomy inside the spec's directory (taxonomies: {%s: PATH})", q, q)
			}
			if !slices.Contains(qid, q) {
				qid = append(qid, q)
			}
		}
	}
	return qid, nil
}

// checkModel checks the sensitive column and its model: a sensitive column
// is published as it is, so it needs a model that protects it, and a model
// needs a sensitive column.
func checkModel(spec *job.Spec, p *Params, qid []string) error {
	m := p.Model()
	var fe *anonymize.FieldError
	if err := m.Validate(); errors.As(err, &fe) {
		field := fe.Field
		if field == "l" && p.P != 0 {
			field = "p"
		}
		return spec.Errorf("params."+field, "%s", fe.Why)
	} else if err != nil {
		return err
	}
	switch {
	case p.P < 0:
		return spec.Errorf("params.p", "must be at least 0, not %d", p.P)
	case p.L < 0:
		return spec.Errorf("params.l", "must be at least 0, not %v", p.L)
	case slices.Contains(qid, p.Sensitive):
		return spec.Errorf("params.sensitive", "%q is a quasi-identifier", p.Sensitive)
	case p.Sensitive != "" && m.IsZero():
		return spec.Errorf("params.sensitive", "%q is published as it is, so it needs a model that protects it: l ≥ 2 (params.l), p ≥ 2, p_plus ≥ 2, alpha > 0 or recursive_c and recursive_l", p.Sensitive)
	case p.Sensitive == "" && (!m.IsZero() || p.L != 0):
		return spec.Errorf("params.sensitive", "a sensitive model (l, p, p_plus, alpha, recursive_c) needs a sensitive column")
	}
	return nil
}

// Purpose names the most and the least useful attribute for a purpose.
type Purpose struct {
	First string `yaml:"first"`
	Last  string `yaml:"last"`
}

// checkPurpose checks the params of algorithm purpose (and that no other
// algorithm gets them).
func checkPurpose(spec *job.Spec, p *Params, qid []string) error {
	given := p.Purpose != nil || p.Priorities != nil || p.Trust != nil || p.Degree != nil || p.Beta != 0 || p.Invert
	if p.Algorithm != "purpose" {
		if given {
			return spec.Errorf("params.purpose", "purpose, priorities, trust, degree, beta and invert are for algorithm purpose")
		}
		return nil
	}
	switch {
	case (p.Trust == nil) == (p.Degree == nil):
		return spec.Errorf("params.degree", "give a degree of anonymisation or the requester's trust, one of them")
	case p.Trust != nil && (*p.Trust < 0 || *p.Trust > 1):
		return spec.Errorf("params.trust", "must be in [0, 1], not %v", *p.Trust)
	case p.Degree != nil && (*p.Degree < 0 || *p.Degree > 1):
		return spec.Errorf("params.degree", "must be in [0, 1], not %v", *p.Degree)
	case (p.Purpose == nil) == (p.Priorities == nil):
		return spec.Errorf("params.purpose", "give a purpose {first: col, last: col} or priorities {col: p}, one of them")
	case p.Beta < 0 || p.Beta > 10:
		return spec.Errorf("params.beta", "must be in [0, 10], not %v", p.Beta)
	case p.Sensitive != "":
		return spec.Errorf("params.sensitive", "algorithm purpose takes no sensitive model")
	}
	if p.Purpose != nil {
		switch {
		case !slices.Contains(qid, p.Purpose.First):
			return spec.Errorf("params.purpose.first", "%q is not a quasi-identifier", p.Purpose.First)
		case !slices.Contains(qid, p.Purpose.Last) || p.Purpose.Last == p.Purpose.First:
			return spec.Errorf("params.purpose.last", "%q is not another quasi-identifier", p.Purpose.Last)
		}
		return nil
	}
	for _, q := range qid {
		if x, ok := p.Priorities[q]; !ok || x < 0 || x > 1 {
			return spec.Errorf("params.priorities."+q, "every quasi-identifier needs a priority in [0, 1]")
		}
	}
	if len(p.Priorities) != len(qid) {
		return spec.Errorf("params.priorities", "gives %d priorities for %d quasi-identifiers", len(p.Priorities), len(qid))
	}
	return nil
}
