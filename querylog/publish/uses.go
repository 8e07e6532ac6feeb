package publish

import (
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Uses declares what publishing the log discloses (job.Discloser): every
// column the job reads, in the sanitised-log form with the job's k. Ranks
// and result counts are not published, but they decide which queries are
// removed, so they are declared too.
func (Kind) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	p, err := parseParams(spec)
	if err != nil {
		return nil, err
	}
	t := spec.Parties[0].Tables[0].Name
	var out []job.Use
	for _, c := range p.Columns.list() {
		out = append(out, job.Use{Table: t, Column: c, Role: job.RoleAttribute, Form: wire.DiscloseSanitisedLog, K: p.K})
	}
	return out, nil
}
