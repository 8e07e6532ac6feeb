package quantile

import "github.com/cohortdm/cohort/job"

// Uses declares what a quantile job discloses of a party's data: counts
// of its column's values at thresholds, as ciphertexts into aggregates of
// every party whose totals every member learns, and one exact value of the
// pooled column per quantile, which counts against each dataset's
// allowance of exact releases (job.Discloser); with params.noise, no exact
// value, and the job's ε and δ from each dataset's budget instead.
func (Kind) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	p, err := parseParams(spec)
	if err != nil {
		return nil, err
	}
	if p.exponential() {
		return emUses(spec, party, p.Column, p.Noise.Epsilon), nil
	}
	if n := p.Noise; n != nil {
		// A noised quantile is no exact release: it spends the budget.
		return job.AggregateUses(spec, party, p.Column, n.Epsilon, n.Delta), nil
	}
	uses := job.AggregateUses(spec, party, p.Column, 0, 0)
	for i := range uses {
		uses[i].Releases = len(p.Quantiles)
	}
	return uses, nil
}
