package onetable

import (
	"github.com/cohortdm/cohort/anonymize"
)

// samarati is the step under algorithm samarati: Samarati's binary search
// on the lattice's height (anonymize.Samarati) under every requirement and
// the sensitive model, publishing the least-NCP vector of the lowest
// height at which one satisfies.
func (s *session) samarati(ds *anonymize.Dataset, sens *anonymize.Coded, o *output) (*anonymize.Generalisation, error) {
	res, err := anonymize.Samarati(ds, s.prm.Requirements, sens)
	if err != nil {
		return nil, err
	}
	o.NCP, o.Levels, o.Checked, o.Lattice = res.NCP, res.Levels, res.Checked, res.Lattice
	o.Height, o.Probes = res.Height, res.Probes
	return res.Gen, latticeFigures(ds, res.Gen, o)
}

// latticeFigures fills the full-domain algorithms' lattice figures: the
// number of generalisation strategies (Sun's Theorem 2.1) and the weighted
// discernibility of the publication with equal priorities.
func latticeFigures(ds *anonymize.Dataset, g *anonymize.Generalisation, o *output) error {
	steps := make([]int, len(ds.Attrs))
	for a, at := range ds.Attrs {
		steps[a] = at.Tax.MaxLevel()
	}
	n, err := anonymize.StrategyCount(steps)
	if err != nil {
		return err
	}
	o.Strategies = n.String()
	o.WDM, _, err = ds.WeightedDiscernibility(g, nil, 0)
	return err
}
