package publish

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/cohortdm/cohort/coherence"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
)

// precheck refuses, before any transaction is loaded, a job Theorem 3
// rules out (coherence.Eligible: fewer than k transactions, or a private
// item in more than a fraction h of them), with the error the algorithms
// give after the load. The counts come from where the table lives
// (supports); when they cannot be had, or the check cannot tell, it
// answers nil and the load decides, as before: the algorithms test the
// loaded database again, so the counts only refuse earlier what would be
// refused, and are not fed to them (their supports are over the labelled
// database, whose thesis items no count here holds, and recounting the
// loaded transactions is one pass beside the search). An error of the
// counts is left for the load to report with the table named. An
// eligible job pays the counts' pass on top of its load.
func precheck(ctx context.Context, p job.Participant, prm *Params, draw uint64) error {
	s := supports(ctx, p)
	if s == nil {
		return nil
	}
	return mapEligibility(coherence.Eligible(s, prm.roles(draw), prm.privacy()))
}

// supports are the party's table's transactions and item supports: a
// file counted with coherence's own parser (memory its items, and a
// CSV's transaction ids), any other source asked of table's layer
// (Aggregator.DistinctCounts: a database counts them where they live,
// with two queries in the node's log at debug level; Parquet is streamed),
// read with the same schema as the load, tid and item alone. Nil when
// they cannot be counted.
func supports(ctx context.Context, p job.Participant) *coherence.Supports {
	_, src, err := source(p)
	if err != nil {
		return nil
	}
	if src.Type() == table.CSV {
		f, err := os.Open(src.Path)
		if err != nil {
			return nil
		}
		defer f.Close()
		count := coherence.CountFIMI
		if strings.EqualFold(filepath.Ext(src.Path), ".csv") {
			count = coherence.CountCSV
		}
		s, err := count(f)
		if err != nil {
			return nil
		}
		return s
	}
	agg, err := table.NewAggregator(src, pairsSchema, table.ReadOptions{Label: table.Label(src), Log: p.Log()})
	if err != nil {
		return nil
	}
	defer agg.Close()
	n, groups, err := agg.DistinctCounts(ctx, "tid", "item")
	if err != nil {
		return nil
	}
	s := &coherence.Supports{N: n, Items: make(map[string]int, len(groups))}
	for _, g := range groups {
		if g.Values[0] != "" { // a row without an item only declares its transaction
			s.Items[g.Values[0]] = g.Count
		}
	}
	return s
}
