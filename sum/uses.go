package sum

import (
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
)

// Uses declares what a sum discloses of a party's data: its column, from
// every table of the party, as a ciphertext into an aggregate of every
// party whose total every member learns (job.Discloser).
func (Kind) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	p, err := parseParams(spec)
	if err != nil {
		return nil, err
	}
	ps, _ := spec.Party(party)
	var out []job.Use
	for _, t := range ps.Tables {
		u := job.Use{Table: t.Name, Column: p.Column, Role: job.RoleAttribute, Form: protocol.DiscloseCiphertext,
			Parties: spec.PartyNames()}
		if p.Noise != nil {
			u.Epsilon, u.Delta = p.Noise.Epsilon, p.Noise.Delta
		}
		out = append(out, u)
	}
	return out, nil
}
