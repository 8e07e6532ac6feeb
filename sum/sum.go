// Package sum is the plumbing job: every party sums one numeric column of
// its own tables and the consortium learns the total.
//
// Leakage profile: each party's step output, its local column sum, goes to
// the coordinator in clear ("local-aggregate" in the audit ledger). Only the
// total is published. Secure aggregation removes the local sums from view.
package sum

import (
	"context"
	"fmt"
	"sort"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
)

// Kind is the sum job.
type Kind struct{}

// Validate requires params.column.
func (Kind) Validate(spec *job.Spec) error {
	_, err := column(spec)
	return err
}

func column(spec *job.Spec) (string, error) {
	c, ok := spec.Params["column"].(string)
	if !ok || c == "" {
		return "", spec.Errorf("params.column", "the sum job needs the name of a numeric column")
	}
	return c, nil
}

// Coordinate runs one step in which every party reports its local sum.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	outs, err := c.Run(ctx, job.Step{Phase: "sum"})
	if err != nil {
		return nil, err
	}
	if len(outs.Failed) > 0 {
		return nil, fmt.Errorf("parties failed: %s", describe(outs.Failed))
	}
	total := 0.0
	for _, p := range c.Spec().PartyNames() {
		var v float64
		if err := protocol.Unmarshal(outs.Results[p], &v); err != nil {
			return nil, fmt.Errorf("output of %s: %w", p, err)
		}
		total += v
	}
	return job.Result{"sum": total}, nil
}

// Participate sums the column over the party's tables that have it.
func (Kind) Participate(ctx context.Context, p job.Participant, step job.Step) ([]byte, error) {
	col, err := column(p.Spec())
	if err != nil {
		return nil, err
	}
	tables, err := job.LoadTables(p)
	if err != nil {
		return nil, err
	}
	total, found := 0.0, false
	for _, t := range tables {
		c, err := t.Column(col)
		if err != nil {
			continue
		}
		if c.Num == nil {
			return nil, fmt.Errorf("column %s of table %s is not numeric", col, t.Name)
		}
		found = true
		for _, v := range c.Num {
			total += v
		}
	}
	if !found {
		return nil, fmt.Errorf("party %s has no table with column %q", p.Self(), col)
	}
	return protocol.Marshal(total)
}

// OutputDisclosure: the local sum in clear.
func (Kind) OutputDisclosure(job.Step) protocol.Disclosure { return protocol.DiscloseAggregate }

func describe(failed map[string]string) string {
	names := make([]string, 0, len(failed))
	for p := range failed {
		names = append(names, p)
	}
	sort.Strings(names)
	s := ""
	for i, p := range names {
		if i > 0 {
			s += "; "
		}
		s += p + ": " + failed[p]
	}
	return s
}
