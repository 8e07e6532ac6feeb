package publish

import (
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/querylog"
)

// Params are the job's params.
type Params struct {
	// K is the fewest results a published query has (§4.2); at least 2.
	K int `yaml:"k"`
	// Method is the greedy heuristic's score (§6.2); degree/freq, the
	// paper's best at keeping volume, by default.
	Method  string  `yaml:"method"`
	Columns Columns `yaml:"columns"`
	// TimeoutMS is the step's timeout (0: the node's).
	TimeoutMS int64 `yaml:"timeout_ms"`
}

// Columns name the log's columns; Results (the engine's result-set size)
// is optional.
type Columns struct {
	User    string `yaml:"user"`
	Query   string `yaml:"query"`
	Time    string `yaml:"time"`
	Rank    string `yaml:"rank"`
	Click   string `yaml:"click"`
	Results string `yaml:"results"`
}

// list is the columns the job reads, Results last when named.
func (c Columns) list() []string {
	out := []string{c.User, c.Query, c.Time, c.Rank, c.Click}
	if c.Results != "" {
		out = append(out, c.Results)
	}
	return out
}

func parseParams(spec *job.Spec) (*Params, error) {
	p := &Params{Method: string(querylog.ByDegreeFreq),
		Columns: Columns{User: "user", Query: "query", Time: "time", Rank: "rank", Click: "click"}}
	if err := spec.DecodeParams(p); err != nil {
		return nil, err
	}
	if len(spec.Parties) != 1 || len(spec.Parties[0].Tables) != 1 {
		return nil, spec.Errorf("parties", "querylog runs on one party with one table: its own log")
	}
	if p.K < 2 {
		return nil, spec.Errorf("params.k", "must be at least 2, not %d: a query with one result discloses it", p.K)
	}
	if !slices.Contains(querylog.Methods(), querylog.Method(p.Method)) {
		return nil, spec.Errorf("params.method", "must be one of %v, not %q", querylog.Methods(), p.Method)
	}
	cols := p.Columns.list()
	for i, c := range cols {
		if c == "" || slices.Contains(cols[:i], c) {
			return nil, spec.Errorf("params.columns", "every column needs its own name (user, query, time, rank, click)")
		}
	}
	if err := spec.CheckTimeoutMS(p.TimeoutMS); err != nil {
		return nil, err
	}
	return p, nil
}
