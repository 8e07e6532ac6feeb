package sjc

import (
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/wire"
)

// Uses declares what an sjc job discloses of a party's data, from the
// spec's join graph (job.Discloser): its join keys into a PSI with each
// neighbouring party, and the class and split summaries per shared join
// value sent to them; its attributes as split candidates (a gain to the
// coordinator, the party and table of a winning split in the public
// skeleton, the predicate kept at home) and as split summaries; its class
// column's counts. With a test set, the test tables disclose the same.
func (Kind) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	g, err := NewGraph(spec)
	if err != nil {
		return nil, err
	}
	return graphUses(g, party, true), nil
}

// Uses declares what predicting with an sjc model discloses of a party's
// data: the same as training, without new split choices (job.Discloser).
func (PredictKind) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	g, err := NewGraph(spec)
	if err != nil {
		return nil, err
	}
	return graphUses(g, party, false), nil
}

// graphUses lists the uses of a party's tables in a join graph; train adds
// the split candidates' gains and choice.
func graphUses(g *Graph, party string, train bool) []job.Use {
	var out []job.Use
	for i, t := range g.Tables {
		if t.Party != party {
			continue
		}
		peers := g.NeighbourParties(i)
		for _, c := range t.Columns {
			switch {
			case c.Kind == table.Key:
				out = append(out,
					job.Use{Table: t.Name, Column: c.Name, Role: job.RoleKey, Form: wire.DisclosePSIBlinded, To: peers},
					job.Use{Table: t.Name, Column: c.Name, Role: job.RoleKey, Form: wire.DiscloseClassSummary, To: peers},
					job.Use{Table: t.Name, Column: c.Name, Role: job.RoleKey, Form: wire.DiscloseSplitSummary, To: peers})
			case c.Kind == table.Class:
				out = append(out,
					job.Use{Table: t.Name, Column: c.Name, Role: job.RoleClass, Form: wire.DiscloseClassSummary, To: peers},
					job.Use{Table: t.Name, Column: c.Name, Role: job.RoleClass, Form: wire.DiscloseSplitSummary, To: peers})
			case c.Kind == table.Numeric || c.Kind == table.Categorical:
				out = append(out, job.Use{Table: t.Name, Column: c.Name, Role: job.RoleAttribute, Form: wire.DiscloseSplitSummary, To: peers})
				if train {
					out = append(out,
						job.Use{Table: t.Name, Column: c.Name, Role: job.RoleAttribute, Form: wire.DiscloseSplitAttribute},
						job.Use{Table: t.Name, Column: c.Name, Role: job.RoleAttribute, Form: wire.DiscloseScore})
				}
			}
		}
	}
	return out
}
