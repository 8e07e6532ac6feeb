package quantile

import "github.com/cohortdm/cohort/job"

// Uses declares what a quantile job discloses of a party's data: counts
// of its column's values at thresholds, as ciphertexts into aggregates of
// every party whose totals every member learns (job.Discloser).
func (Kind) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	p, err := parseParams(spec)
	if err != nil {
		return nil, err
	}
	return job.AggregateUses(spec, party, p.Column, 0, 0), nil
}
