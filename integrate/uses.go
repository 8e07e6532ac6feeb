package integrate

import (
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Uses declares what an integrate job discloses of a party's data
// (job.Discloser): its record ids into a PSI (with the hub, or, for the
// hub, with every party); its quasi-identifiers (columns of its one table,
// which the spec need not list) as candidate scores to the coordinator,
// as the partition of records a winning split makes, and generalised in the
// published table with the requirements' smallest k; its class column in
// the published table (and in the scores), with l when it is the
// sensitive column.
func (Kind) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	p, err := parseParams(spec)
	if err != nil {
		return nil, err
	}
	k := p.Requirements[0].K
	for _, r := range p.Requirements {
		k = min(k, r.K)
	}
	ps, _ := spec.Party(party)
	t := ps.Tables[0].Name
	psiPeers := []string{p.Hub}
	if party == p.Hub {
		psiPeers = nil
		for _, q := range spec.PartyNames() {
			if q != party {
				psiPeers = append(psiPeers, q)
			}
		}
	}
	out := []job.Use{
		{Table: t, Column: p.ID, Role: job.RoleID, Form: wire.DisclosePSIBlinded, To: psiPeers},
		{Table: t, Role: job.RoleAttribute, Form: wire.DiscloseScore},
		{Table: t, Role: job.RoleAttribute, Form: wire.DiscloseSplitSummary},
		{Table: t, Role: job.RoleAttribute, Form: wire.DiscloseGeneralised, K: k},
		{Table: t, Column: p.Class, Role: job.RoleClass, Form: wire.DiscloseScore},
	}
	if p.Sensitive == "" {
		return append(out, job.Use{Table: t, Column: p.Class, Role: job.RoleClass, Form: wire.DiscloseGeneralised, K: k}), nil
	}
	// The sensitive column (the class, or one party's column): published
	// with the diversity its model guarantees; its owner answers one bit
	// per candidate cut.
	l := p.model().Diversity()
	if p.Sensitive != p.Class {
		out = append(out, job.Use{Table: t, Column: p.Class, Role: job.RoleClass, Form: wire.DiscloseGeneralised, K: k})
	}
	return append(out,
		job.Use{Table: t, Column: p.Sensitive, Role: job.RoleSensitive, Form: wire.DiscloseGeneralised, K: k, L: l},
		job.Use{Table: t, Column: p.Sensitive, Role: job.RoleSensitive, Form: wire.DiscloseScore}), nil
}
