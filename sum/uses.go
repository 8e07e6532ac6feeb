package sum

import "github.com/cohortdm/cohort/job"

// Uses declares what a sum discloses of a party's data: its column, from
// every table of the party, as a ciphertext into an aggregate of every
// party whose total every member learns (job.Discloser).
func (Kind) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	p, err := parseParams(spec)
	if err != nil {
		return nil, err
	}
	if p.Noise != nil {
		return job.AggregateUses(spec, party, p.Column, p.Noise.Epsilon, p.Noise.Delta), nil
	}
	return job.AggregateUses(spec, party, p.Column, 0, 0), nil
}
