package onetable

import (
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Uses declares what publishing one party's table discloses (job.
// Discloser): its quasi-identifiers generalised with the requirements'
// smallest k, and its sensitive column beside them with the diversity its
// model guarantees (Validate refuses a sensitive column no model protects).
func (Kind) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	p, qid, err := parseParams(spec)
	if err != nil {
		return nil, err
	}
	k := p.Requirements[0].K
	for _, r := range p.Requirements {
		k = min(k, r.K)
	}
	t := spec.Parties[0].Tables[0].Name
	var out []job.Use
	for _, q := range qid {
		out = append(out, job.Use{Table: t, Column: q, Role: job.RoleAttribute, Form: wire.DiscloseGeneralised, K: k})
	}
	if p.Sensitive != "" {
		out = append(out, job.Use{Table: t, Column: p.Sensitive, Role: job.RoleSensitive, Form: wire.DiscloseGeneralised,
			K: k, L: p.Model().Diversity()})
	}
	return out, nil
}
