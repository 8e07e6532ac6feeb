package onetable

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/anonymize"
)

// purpose runs algorithm purpose (Sun ch. 4): the priorities (given, or
// from the VI matrix of the quasi-identifiers for the purpose), the degree
// (asked, or (1 − trust)²), the decomposition reaching it, and the
// least-NCP full-domain generalisation above that which meets every
// requirement. A degree out of reach is refused naming its field.
func (s *session) purpose(ds *anonymize.Dataset, o *output) (*anonymize.Generalisation, error) {
	prio := make([]float64, len(ds.Attrs))
	if s.prm.Purpose != nil {
		cols := make([][]string, len(ds.Attrs))
		for a, at := range ds.Attrs {
			for _, leaf := range at.Leaf {
				cols[a] = append(cols[a], at.Tax.Nodes[leaf].Label)
			}
		}
		vi := anonymize.NormaliseVI(anonymize.VIMatrix(cols))
		chain := anonymize.ChainOrder(vi, ds.Index(s.prm.Purpose.First), ds.Index(s.prm.Purpose.Last))
		var err error
		if prio, err = anonymize.Priorities(vi, chain); err != nil {
			return nil, err
		}
	} else {
		for a, at := range ds.Attrs {
			prio[a] = s.prm.Priorities[at.Name]
		}
	}
	field, target := "params.degree", 0.0
	if s.prm.Degree != nil {
		target = *s.prm.Degree
	} else {
		field, target = "params.trust", anonymize.TrustDegree(*s.prm.Trust)
	}
	w := anonymize.DegreeWeights(prio, s.prm.Invert)
	res, err := anonymize.PurposeAnonymise(ds, s.prm.Requirements, w, target, s.prm.Beta)
	if errors.Is(err, anonymize.ErrDegree) {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	if err != nil {
		return nil, err
	}
	o.Priorities = map[string]float64{}
	for a, at := range ds.Attrs {
		o.Priorities[at.Name] = prio[a]
	}
	o.Levels, o.Decomposed, o.DegreeAsked, o.Degree = res.Levels, res.Decomposed, target, res.Degree
	o.Raised, o.NCP, o.Checked, o.Lattice = !slices.Equal(res.Levels, res.Decomposed), res.NCP, res.Checked, res.Lattice
	return res.Gen, nil
}
