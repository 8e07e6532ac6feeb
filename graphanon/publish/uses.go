package publish

import (
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Uses declares what publishing the graph discloses (job.Discloser):
// every column the job reads, in the anonymised-graph form with the job's
// k. Node ids never leave but name the pseudonyms' nodes, and the edge
// type column carries the sensitive type, which shapes the figures, so
// they are declared too.
func (Kind) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	p, err := parseParams(spec)
	if err != nil {
		return nil, err
	}
	use := func(t, c string) job.Use {
		return job.Use{Table: t, Column: c, Role: job.RoleAttribute, Form: wire.DiscloseAnonymisedGraph, K: p.K}
	}
	out := []job.Use{use(p.Tables.Nodes, p.Columns.ID)}
	for _, q := range p.Quasi {
		out = append(out, use(p.Tables.Nodes, q))
	}
	for _, c := range []string{p.Columns.Source, p.Columns.Target, p.Columns.Type} {
		out = append(out, use(p.Tables.Edges, c))
	}
	return out, nil
}
