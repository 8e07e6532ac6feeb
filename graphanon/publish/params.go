package publish

import (
	"slices"

	"github.com/cohortdm/cohort/graphanon"
	"github.com/cohortdm/cohort/job"
)

// Params are the job's params.
type Params struct {
	// K is the fewest nodes in an equivalence class (§4.1); at least 2.
	K int `yaml:"k"`
	// Strategy is one of §4.2's five: intact, partial, cluster,
	// cluster-constrained, removed.
	Strategy string `yaml:"strategy"`
	// Remove is partial's share of each observed type removed (0.5 in the
	// paper's experiments).
	Remove float64 `yaml:"remove"`
	// Sensitive is the edge type always removed (friends in the paper).
	Sensitive string `yaml:"sensitive"`
	// Quasi names the node table's quasi-identifying columns; none puts
	// the nodes in classes at random, as §8.2 does.
	Quasi     []string  `yaml:"quasi"`
	Adversary Adversary `yaml:"adversary"`
	// Rho are the thresholds the adversary's predictions are counted
	// above (§6.2).
	Rho     []float64 `yaml:"rho"`
	Tables  Tables    `yaml:"tables"`
	Columns Columns   `yaml:"columns"`
	// TimeoutMS is the step's timeout (0: the node's).
	TimeoutMS int64 `yaml:"timeout_ms"`
}

// Adversary is the noisy-or the release is evaluated against (§6.1): the
// leak and a noise per observed edge type.
type Adversary struct {
	Leak   float64            `yaml:"leak"`
	Lambda map[string]float64 `yaml:"lambda"`
}

// Tables name the party's two tables in the spec.
type Tables struct {
	Nodes string `yaml:"nodes"`
	Edges string `yaml:"edges"`
}

// Columns name the node table's id column and the edge table's columns.
type Columns struct {
	ID     string `yaml:"id"`
	Source string `yaml:"source"`
	Target string `yaml:"target"`
	Type   string `yaml:"type"`
}

func parseParams(spec *job.Spec) (*Params, error) {
	p := &Params{Rho: []float64{0.2, 0.4, 0.6, 0.8}, Tables: Tables{Nodes: "nodes", Edges: "edges"},
		Columns: Columns{ID: "id", Source: "source", Target: "target", Type: "type"}}
	if err := spec.DecodeParams(p); err != nil {
		return nil, err
	}
	if len(spec.Parties) != 1 || len(spec.Parties[0].Tables) != 2 {
		return nil, spec.Errorf("parties", "graph runs on one party with two tables: its nodes and its edges")
	}
	var names []string
	for _, t := range spec.Parties[0].Tables {
		names = append(names, t.Name)
	}
	if p.Tables.Nodes == p.Tables.Edges || !slices.Contains(names, p.Tables.Nodes) || !slices.Contains(names, p.Tables.Edges) {
		return nil, spec.Errorf("params.tables", "must name the party's two tables, nodes and edges")
	}
	if p.K < 2 {
		return nil, spec.Errorf("params.k", "must be at least 2, not %d: a class of one node is the node", p.K)
	}
	s := graphanon.Strategy(p.Strategy)
	if !slices.Contains(graphanon.Strategies(), s) {
		return nil, spec.Errorf("params.strategy", "must be one of %v", graphanon.Strategies())
	}
	if (s == graphanon.Partial) != (p.Remove != 0) || s == graphanon.Partial && !(p.Remove > 0 && p.Remove < 1) {
		return nil, spec.Errorf("params.remove", "is partial's share removed, in (0, 1), and given only with it")
	}
	if p.Sensitive == "" {
		return nil, spec.Errorf("params.sensitive", "must name the edge type that is always removed")
	}
	if err := p.model().Check(nil); err != nil {
		return nil, spec.Errorf("params.adversary", "%v", err)
	}
	if _, ok := p.Adversary.Lambda[p.Sensitive]; ok {
		return nil, spec.Errorf("params.adversary.lambda", "gives a noise to the sensitive type, which is never observed")
	}
	for _, r := range p.Rho {
		if !(r >= 0 && r < 1) {
			return nil, spec.Errorf("params.rho", "every threshold must lie in [0, 1)")
		}
	}
	if len(p.Rho) == 0 {
		return nil, spec.Errorf("params.rho", "needs at least one threshold")
	}
	cols := append([]string{p.Columns.ID}, p.Quasi...)
	for i, c := range cols {
		if c == "" || slices.Contains(cols[:i], c) {
			return nil, spec.Errorf("params.quasi", "every node column needs its own name (the id and each quasi-identifier)")
		}
	}
	ecols := []string{p.Columns.Source, p.Columns.Target, p.Columns.Type}
	for i, c := range ecols {
		if c == "" || slices.Contains(ecols[:i], c) {
			return nil, spec.Errorf("params.columns", "every edge column needs its own name (source, target, type)")
		}
	}
	if err := spec.CheckTimeoutMS(p.TimeoutMS); err != nil {
		return nil, err
	}
	return p, nil
}

// model is the adversary's noisy-or.
func (p *Params) model() graphanon.Model {
	return graphanon.Model{Leak: p.Adversary.Leak, Lambda: p.Adversary.Lambda}
}

// options are the anonymisation's.
func (p *Params) options() graphanon.Options {
	return graphanon.Options{K: p.K, Strategy: graphanon.Strategy(p.Strategy), Remove: p.Remove}
}
