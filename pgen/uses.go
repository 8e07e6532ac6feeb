package pgen

import (
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Uses declares what a pgen job discloses of a party's data
// (job.Discloser): its published tree, to every member through the log,
// whose paths name its attributes' split values (thresholds between two
// of its values, categories it holds) and count its rows of each class,
// every path at least release_k rows: each attribute and the class column
// generalised with k = release_k, the class with l = release_l when the
// paths must be (c, l)-diverse.
func (Kind) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	cfg, err := parse(spec)
	if err != nil {
		return nil, err
	}
	t, ok := cfg.tables[party]
	if !ok {
		return nil, nil
	}
	k := int(min(cfg.p.ReleaseK, uint64(1<<31-1)))
	var out []job.Use
	for _, a := range cfg.schema.attrNames() {
		out = append(out, job.Use{Table: t, Column: a, Role: job.RoleAttribute, Form: wire.DiscloseGeneralised, K: k})
	}
	out = append(out, job.Use{Table: t, Column: cfg.schema.ClassColumn, Role: job.RoleClass, Form: wire.DiscloseGeneralised, K: k, L: cfg.p.ReleaseL})
	return out, nil
}
