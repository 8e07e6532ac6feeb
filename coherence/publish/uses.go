package publish

import (
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Uses declares what a coherence job discloses of its party's data
// (job.Discloser): the transactions' items, published to every member
// through the log with whole items suppressed so that whoever knows up to p
// public items of a person finds at least k transactions (the items
// generalised, with k); the transaction ids never leave the node (the
// publication numbers transactions 1, 2, ... in order).
func (Kind) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	prm, err := parseParams(spec)
	if err != nil {
		return nil, err
	}
	ps, ok := spec.Party(party)
	if !ok {
		return nil, nil
	}
	var out []job.Use
	for _, t := range ps.Tables {
		out = append(out, job.Use{Table: t.Name, Column: "item", Role: job.RoleAttribute, Form: wire.DiscloseGeneralised, K: prm.K})
	}
	return out, nil
}
