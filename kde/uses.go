package kde

import (
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Uses declares what a kde job discloses of a party's data
// (job.Discloser): its synthetic sample, to every member through the log:
// each attribute as kernel draws around rows picked at random, and the
// class column as the labels of the sample (each class's row count, times
// params.sample_ratio), every class drawn from at least params.min_rows
// rows, which is the k the policy's min_k holds it to.
func (Kind) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	cfg, err := parse(spec)
	if err != nil {
		return nil, err
	}
	t, ok := cfg.tables[party]
	if !ok {
		return nil, nil
	}
	var out []job.Use
	for _, a := range cfg.attrs {
		out = append(out, job.Use{Table: t, Column: a, Role: job.RoleAttribute, Form: wire.DiscloseSynthetic, K: cfg.p.MinRows})
	}
	return append(out, job.Use{Table: t, Column: cfg.class, Role: job.RoleClass, Form: wire.DiscloseSynthetic, K: cfg.p.MinRows}), nil
}
