package integrate

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/psi"
)

// Params are the job's spec params (docs/integrate.md has a spec).
type Params struct {
	// Algorithm is tds (the default: top-down specialisation, which chooses
	// specialisations for classifying the class) or mondrian (n-party
	// Mondrian: groups cut on the widest attribute, for analysts).
	Algorithm string `yaml:"algorithm"`
	// Requirements is the joint anonymity requirement {⟨QID_i, k_i⟩}.
	Requirements []anonymize.Requirement `yaml:"requirements"`
	// ID is the record id column every party's table has (default "id").
	ID string `yaml:"id"`
	// Class is the class label column every party's table has (default
	// "class"): TDS scores by information gain on it and, as in TDS2P
	// (Wang, Fung and Dong), every party holds it.
	Class string `yaml:"class"`
	// Sensitive is the column the sensitive model protects. With algorithm
	// tds it must be the shared class; with mondrian it may also be a
	// column one party holds, which is published as it is and whose owner
	// checks every cut at home (one bit per cut).
	Sensitive string `yaml:"sensitive"`
	// The sensitive model, named as kind anonymize names it (any
	// conjunction): L is distinct l-diversity, or entropy l-diversity with
	// Entropy; P p-sensitivity (at least P distinct values per class, Sun
	// Def. 3.1); RecursiveC and RecursiveL recursive (c, l)-diversity;
	// PPlus, Alpha and Categories p⁺-, (p, α)- and (p⁺, α)-sensitivity
	// (Sun Defs. 3.2–3.4), categories most sensitive first.
	L          float64    `yaml:"l"`
	Entropy    bool       `yaml:"entropy"`
	P          int        `yaml:"p"`
	RecursiveC float64    `yaml:"recursive_c"`
	RecursiveL int        `yaml:"recursive_l"`
	PPlus      int        `yaml:"p_plus"`
	Alpha      float64    `yaml:"alpha"`
	Categories [][]string `yaml:"categories"`
	// Model is the same model in the form issue 23 gave it (entropy_l,
	// recursive_c and recursive_l, p_plus, alpha with categories, l), kept
	// for the specs that use it; it and the fields above do not mix.
	Model anonymize.SensitiveModel `yaml:"model"`
	// Hub is the party that runs the PSI star of the id alignment (default
	// the first party by name); it learns the pairwise intersections.
	Hub string `yaml:"hub"`
	// PSI is the id alignment's protocol: "auto" (the default: ECDH for
	// small id sets, the OT-extension PSI from 1024 ids per hub–spoke pair
	// in all), "ot", "vole" (the VOLE-based PSI) or "ecdh" (package psi).
	PSI string `yaml:"psi"`
	// TimeoutMS is each step's timeout (0: the node's default).
	TimeoutMS int64 `yaml:"timeout_ms"`

	psiMode psi.Mode
}

// model is the sensitive model asked for: the top-level fields, or
// params.model with params.l.
func (p *Params) model() anonymize.SensitiveModel {
	if given(p.Model) {
		m := p.Model
		m.L = max(m.L, int(p.L))
		return m
	}
	m := p.topModel()
	if p.Entropy {
		m.EntropyL = p.L
	} else {
		m.L = max(m.L, int(p.L))
	}
	return m
}

// topModel is the model of the top-level fields other than l.
func (p *Params) topModel() anonymize.SensitiveModel {
	return anonymize.SensitiveModel{L: p.P, RecursiveC: p.RecursiveC, RecursiveL: p.RecursiveL, PPlus: p.PPlus, Alpha: p.Alpha, Categories: p.Categories}
}

// private reports whether the sensitive column is one party's (not the
// shared class).
func (p *Params) private() bool { return p.Sensitive != "" && p.Sensitive != p.Class }

// The algorithms (params.algorithm).
const (
	algTDS      = "tds"
	algMondrian = "mondrian"
)

// parseParams decodes and checks the params against the spec.
func parseParams(spec *job.Spec) (*Params, error) {
	p := &Params{Algorithm: algTDS, ID: "id", Class: "class", PSI: "auto"}
	if err := spec.DecodeParams(p); err != nil {
		return nil, err
	}
	if p.Algorithm != algTDS && p.Algorithm != algMondrian {
		return nil, spec.Errorf("params.algorithm", "must be tds or mondrian, not %q", p.Algorithm)
	}
	mode, err := psi.ParseMode(p.PSI)
	if err != nil {
		return nil, spec.Errorf("params.psi", "%q: want auto, ot, vole or ecdh", p.PSI)
	}
	p.psiMode = mode
	if len(spec.Parties) < 2 {
		return nil, spec.Errorf("parties", "integrate needs at least two parties, not %d", len(spec.Parties))
	}
	for i, ps := range spec.Parties {
		if len(ps.Tables) != 1 {
			return nil, spec.Errorf(fmt.Sprintf("parties[%d].tables", i), "party %q has %d tables; integrate reads exactly one per party", ps.Name, len(ps.Tables))
		}
	}
	if p.ID == "" {
		return nil, spec.Errorf("params.id", "must name the record id column")
	}
	if p.Class == "" || p.Class == p.ID {
		return nil, spec.Errorf("params.class", "must name the class column (not the id column)")
	}
	if len(p.Requirements) == 0 {
		return nil, spec.Errorf("params.requirements", "no requirement: give at least one {qid: [...], k: N}")
	}
	for i, r := range p.Requirements {
		field := fmt.Sprintf("params.requirements[%d]", i)
		if r.K < 2 {
			return nil, spec.Errorf(field+".k", "must be at least 2, not %d: classes of at least 1 record hide no one", r.K)
		}
		if len(r.QID) == 0 {
			return nil, spec.Errorf(field+".qid", "no columns")
		}
		for j, q := range r.QID {
			switch {
			case q == p.ID || q == p.Class:
				return nil, spec.Errorf(fmt.Sprintf("%s.qid[%d]", field, j), "%q is the id or class column, not a quasi-identifier", q)
			case spec.Taxonomies[q] == "":
				return nil, spec.Errorf(fmt.Sprintf("%s.qid[%d]", field, j), "column %q has no taxonomy (taxonomies: {%s: PATH})", q, q)
			case slices.Contains(r.QID[:j], q):
				return nil, spec.Errorf(fmt.Sprintf("%s.qid[%d]", field, j), "column %q given twice", q)
			}
		}
	}
	for col, path := range spec.Taxonomies {
		if col == p.ID || col == p.Class {
			return nil, spec.Errorf("taxonomies."+col, "the id and class columns are published as they are and take no taxonomy")
		}
		if path == "" || !filepath.IsLocal(path) {
			return nil, spec.Errorf("taxonomies."+col, "%q must be a relative path inside the spec's (or tables) directory", path)
		}
	}
	if p.Sensitive != "" && p.Sensitive != p.Class && p.Algorithm != algMondrian {
		return nil, spec.Errorf("params.sensitive", "with algorithm tds only the shared class column %q can be the sensitive column, not %q (algorithm mondrian accepts a column one party holds)", p.Class, p.Sensitive)
	}
	if p.Sensitive == p.ID || spec.Taxonomies[p.Sensitive] != "" && p.Sensitive != "" {
		return nil, spec.Errorf("params.sensitive", "%q is the id column or a quasi-identifier (it has a taxonomy), not a sensitive column", p.Sensitive)
	}
	if err := checkModel(spec, p); err != nil {
		return nil, err
	}
	if p.Hub == "" {
		p.Hub = spec.PartyNames()[0]
	} else if _, ok := spec.Party(p.Hub); !ok {
		return nil, spec.Errorf("params.hub", "%q is not a party of the job", p.Hub)
	}
	if err := spec.CheckTimeoutMS(p.TimeoutMS); err != nil {
		return nil, err
	}
	return p, nil
}

// given reports whether any field of m is set.
func given(m anonymize.SensitiveModel) bool {
	return m.L != 0 || m.EntropyL != 0 || m.RecursiveC != 0 || m.RecursiveL != 0 || m.PPlus != 0 || m.Alpha != 0 || len(m.Categories) > 0
}

// checkModel checks the sensitive model's fields, naming the one at fault.
func checkModel(spec *job.Spec, p *Params) error {
	nested := given(p.Model)
	switch {
	case p.L < 0 || p.L > 64 || math.IsNaN(p.L):
		return spec.Errorf("params.l", "must be a number from 0 to 64")
	case !p.Entropy && p.L != math.Trunc(p.L):
		return spec.Errorf("params.l", "distinct l-diversity takes a whole number (entropy: true for entropy l-diversity)")
	case p.Entropy && nested:
		return spec.Errorf("params.entropy", "with params.model give entropy_l there")
	case p.P < 0:
		return spec.Errorf("params.p", "must be at least 0, not %d", p.P)
	case nested && given(p.topModel()):
		return spec.Errorf("params.model", "give the sensitive model either at the top level (l, entropy, p, p_plus, alpha, categories, recursive_c, recursive_l, as kind anonymize names them) or under params.model, not both")
	}
	var fe *anonymize.FieldError
	if err := p.model().Validate(); errors.As(err, &fe) {
		field := fe.Field
		switch {
		case nested:
			field = "model." + field
		case field == "entropy_l":
			field = "l"
		case field == "l" && p.P != 0:
			field = "p"
		}
		return spec.Errorf("params."+field, "%s", fe.Why)
	} else if err != nil {
		return err
	}
	if p.Sensitive != "" && p.model().IsZero() {
		return spec.Errorf("params.sensitive", "%q needs a model that protects it: l ≥ 2 (params.l), p ≥ 2, p_plus ≥ 2, alpha > 0 or recursive_c and recursive_l", p.Sensitive)
	}
	if p.Sensitive == "" && (!p.model().IsZero() || p.L != 0 || p.Entropy) {
		field := "params.sensitive"
		if nested {
			field = "params.model"
		}
		return spec.Errorf(field, "a sensitive model (l, p, p_plus, alpha, recursive_c) needs params.sensitive")
	}
	return nil
}

// taxonomyDigest is a SHA-256 of the taxonomies' shape (columns in order,
// every node's label, parent and range): parties compare it to make sure
// they all generalise with the same trees.
func taxonomyDigest(cols []string, tax map[string]*anonymize.Taxonomy) []byte {
	h := sha256.New()
	var buf [8]byte
	str := func(s string) {
		binary.BigEndian.PutUint64(buf[:], uint64(len(s)))
		h.Write(buf[:])
		h.Write([]byte(s))
	}
	num := func(x float64) {
		binary.BigEndian.PutUint64(buf[:], math.Float64bits(x))
		h.Write(buf[:])
	}
	for _, c := range cols {
		t := tax[c]
		str(c)
		num(float64(len(t.Nodes)))
		if t.Numeric {
			str("numeric")
		}
		for _, n := range t.Nodes {
			str(n.Label)
			num(float64(n.Parent))
			num(n.Lo)
			num(n.Hi)
		}
	}
	return h.Sum(nil)
}
