package onetable

import (
	"slices"

	"github.com/cohortdm/cohort/anonymize"
)

// purpose runs algorithm purpose: the priorities (given, or from the VI
// matrix of the quasi-identifiers for the purpose), the degree (asked, or
// from the trust), its decomposition into full-domain levels, raised on the
// least useful attributes until every class has k records.
func (s *session) purpose(ds *anonymize.Dataset, k int, o *output) (*anonymize.Generalisation, error) {
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
	target := 0.0
	if s.prm.Degree != nil {
		target = *s.prm.Degree
	} else {
		target = anonymize.TrustDegree(*s.prm.Trust)
	}
	h := make([]int, len(ds.Attrs))
	for a, at := range ds.Attrs {
		h[a] = at.Tax.MaxLevel() + 1
	}
	steps := anonymize.Decompose(target, prio, h, s.prm.Invert)
	levels, err := anonymize.Raise(ds, steps, prio, k)
	if err != nil {
		return nil, err
	}
	deg := make([]float64, len(ds.Attrs))
	o.Priorities = map[string]float64{}
	for a, at := range ds.Attrs {
		deg[a] = anonymize.AttributeDegree(h[a], levels[a], s.prm.Beta)
		o.Priorities[at.Name] = prio[a]
	}
	g := ds.FullDomain(levels)
	o.Levels, o.DegreeAsked, o.Degree, o.Raised = levels, target, anonymize.TupleDegree(deg, prio), !slices.Equal(levels, steps)
	o.NCP = ds.NCP(g)
	return g, nil
}
