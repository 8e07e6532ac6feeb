package quantile

import (
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
)

// Uses declares what a quantile job discloses of a party's data: counts
// of its column's values at thresholds, as ciphertexts into aggregates of
// every party whose totals every member learns (job.Discloser).
func (Kind) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	p, err := parseParams(spec)
	if err != nil {
		return nil, err
	}
	ps, _ := spec.Party(party)
	var out []job.Use
	for _, t := range ps.Tables {
		out = append(out, job.Use{Table: t.Name, Column: p.Column, Role: job.RoleAttribute,
			Form: protocol.DiscloseCiphertext, Parties: spec.PartyNames()})
	}
	return out, nil
}
