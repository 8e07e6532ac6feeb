package bicluster

import (
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Uses declares what a bicluster job discloses of a party's data (its
// one table, whose columns the spec need not name): its numeric columns'
// statistics and representatives as ciphertexts into aggregates of every
// party, and its rows' ids in the published biclusters (job.Discloser).
// The local biclusters' column sets and sizes are committed too; they are
// summaries of the same columns, granted with them.
func (Kind) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	cfg, err := parseJobParams(spec)
	if err != nil {
		return nil, err
	}
	ps, _ := spec.Party(party)
	var out []job.Use
	for _, t := range ps.Tables {
		out = append(out,
			job.Use{Table: t.Name, Role: job.RoleAttribute, Form: wire.DiscloseCiphertext, Parties: spec.PartyNames(),
				LeastParties: cfg.minGroupParties, LeastField: "params.min_group_parties"},
			job.Use{Table: t.Name, Role: job.RoleID, Form: wire.DiscloseMembership})
	}
	return out, nil
}
