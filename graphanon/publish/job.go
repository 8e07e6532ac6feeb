// Package publish is the `graph` job: one party publishes its own graph
// anonymised by package graphanon (E. Zheleva and L. Getoor, "Preserving
// the Privacy of Sensitive Relationships in Graph Data", PinKDD 2007,
// §§4–7): its nodes in equivalence classes of at least k, its sensitive
// edge type removed, its other edges released by one of the five
// strategies, and the release scored by the paper's noisy-or adversary.
//
// Spec: one party with two tables, its nodes and its edges (CSV: one row
// per node with an id column and any attribute columns; one row per edge
// with source and target node ids and a type, a pair joined by several
// edges of one type given as several rows);
//
//	params: {k: N,                    # fewest nodes in a class, ≥ 2
//	         strategy: intact | partial | cluster | cluster-constrained | removed,
//	         remove: 0.5,             # partial only: share of each type removed
//	         sensitive: TYPE,         # the edge type always removed
//	         quasi: [COL, …],         # node columns k-anonymised; none: random classes
//	         adversary: {leak: λ₀, lambda: {TYPE: λ, …}},  # a noise per observed type
//	         rho: [0.2, 0.4, 0.6, 0.8],
//	         tables: {nodes: nodes, edges: edges},
//	         columns: {id: id, source: source, target: target, type: type},
//	         timeout_ms: T}
//
// `cohort sim` writes the release as graph-classes.csv (class, size, each
// quasi-identifier's values joined by "|"), graph-nodes.csv (pseudonym,
// class; not for the clustered strategies, whose nodes are the classes)
// and graph-edges.csv (a, b, type, count). The result reports, per ρ, the
// pairs the adversary predicts above ρ, how many are sensitive, δ (their
// share of |V|²), precision and the share of sensitive pairs disclosed,
// against the observations removed. Node columns that params.quasi does
// not name are not read. The adversary is evaluated on every pair of
// nodes, |V|(|V|−1)/2 of them, which suits graphs of up to some ten
// thousand nodes.
//
// # Leakage profile
//
// One step, one party, round 0 (the party refuses any other). The party's
// output, sent to the coordinator and disclosed as anonymised-graph (the
// form Uses declares, held to the node's min_k by k), is the release and
// its figures:
//
//   - the classes: an id c1 … cm in quasi-identifier order, the size (at
//     least k), and per quasi-identifier the set of values its nodes hold;
//   - for intact, partial and removed, every node under a pseudonym n1 …
//     nN drawn at random, and its class; listed by pseudonym;
//   - the released edges by pseudonym or class, type and count, sorted;
//     for the clustered strategies, per observed type the most edges
//     between any two nodes and the type's number of edges (the
//     constraints the paper's adversary knows);
//   - the numbers of nodes, observed edges, observations removed and
//     sensitive pairs, and per ρ the pairs predicted and how many of them
//     are sensitive: aggregates of the sensitive edges, which are the
//     paper's measure of the release.
//
// No node id, no sensitive edge, no partial removal's choice, and no
// node's class by its id leaves. Pseudonyms, classes and removals are
// drawn from a secret the party keeps for the job, so a re-run publishes
// the same bytes. Each quasi-identifier is published through the node's
// guard as a generalised column. The coordinator commits the release only
// when no edge of the sensitive type is in it, every class holds at least
// k nodes, and the adversary run on the release alone predicts the counts
// the party reports; every member then receives it through the log.
// TestLeakage checks every message and log entry, TestErrorsNameNoValue
// the error texts, TestSim the party's audit ledger over real nodes.
package publish

import (
	"context"
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/graphanon"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Kind is `kind: graph`.
type Kind struct{}

// publishRound is the job's one step: the party publishes its anonymised
// graph, the coordinator commits it once it has checked it.
var publishRound = job.Round[none, output, output]{Phase: "graph"}

// none is the args of the step, which takes none.
type none struct{}

// output is the release and its figures.
type output struct {
	Release graphanon.Release `msgpack:"release"`
	Report  graphanon.Report  `msgpack:"report"`
}

// Validate checks the spec.
func (Kind) Validate(spec *job.Spec) error {
	_, err := parseParams(spec)
	return err
}

// OutputDisclosure: the output is the anonymised graph, the form Uses
// declares.
func (Kind) OutputDisclosure(job.Step) wire.Disclosure { return wire.DiscloseAnonymisedGraph }

// Coordinate runs the one step and commits the release once it has
// checked it.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	prm, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	party := c.Spec().Parties[0].Name
	call := job.Call[none]{Parties: []string{party}, TimeoutMS: prm.TimeoutMS}
	done, err := publishRound.Run(ctx, c, call, func(o *job.Outcome[output]) (output, error) {
		return decide(ctx, o, party, prm)
	})
	if err != nil {
		return nil, err
	}
	r := done.Decision.Report
	return job.Result{
		"k": prm.K, "strategy": prm.Strategy, "nodes": r.Nodes, "classes": len(done.Decision.Release.Classes),
		"observations": r.Observations, "removed": r.Removed, "removed_share": r.RemovedShare,
		"sensitive_pairs": r.Sensitive, "thresholds": r.Thresholds, "release": done.Decision.Release,
	}, nil
}

// decide checks the release: the spec's strategy, no sensitive edge,
// classes of at least k, and the party's predicted counts those of the
// adversary run on the release alone.
func decide(ctx context.Context, o *job.Outcome[output], party string, prm *Params) (output, error) {
	if err := o.Err(); err != nil {
		return output{}, err
	}
	out, ok := o.Results[party]
	if !ok {
		return output{}, fmt.Errorf("party %s sent no output", party)
	}
	rel := out.Release
	if rel.Strategy != graphanon.Strategy(prm.Strategy) {
		return output{}, fmt.Errorf("party %s: the release is not of the spec's strategy", party)
	}
	nodes := 0
	for i, c := range rel.Classes {
		if c.Size < prm.K {
			return output{}, fmt.Errorf("party %s: class %d holds fewer than k nodes", party, i+1)
		}
		nodes += c.Size
	}
	if nodes != out.Report.Nodes {
		return output{}, fmt.Errorf("party %s: the classes hold %d nodes, the report %d", party, nodes, out.Report.Nodes)
	}
	if slices.ContainsFunc(rel.Edges, func(e graphanon.ReleasedEdge) bool { return e.Type == prm.Sensitive }) {
		return output{}, fmt.Errorf("party %s: the release holds an edge of the sensitive type", party)
	}
	pred, err := graphanon.Predicted(ctx, &rel, prm.model(), prm.Rho)
	if err != nil {
		return output{}, fmt.Errorf("party %s: %w", party, err)
	}
	if len(out.Report.Thresholds) != len(prm.Rho) {
		return output{}, fmt.Errorf("party %s: the report has %d thresholds, the spec %d", party, len(out.Report.Thresholds), len(prm.Rho))
	}
	for i, th := range out.Report.Thresholds {
		if th.Rho != prm.Rho[i] || th.Predicted != pred[i] || th.Correct > th.Predicted {
			return output{}, fmt.Errorf("party %s: at threshold %d the report's predictions are not the release's", party, i+1)
		}
	}
	return out, nil
}

// Open opens the party's session; it keeps nothing between steps (there
// is one) but the seed of its draws, kept in its Secrets.
func (Kind) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	prm, err := parseParams(p.Spec())
	if err != nil {
		return nil, err
	}
	return &session{p: p, prm: prm}, nil
}

type session struct {
	p   job.Participant
	prm *Params
}

func (s *session) Close() {}

// Step runs the job's one step on the party alone.
func (s *session) Step(ctx context.Context, step job.Step) ([]byte, error) {
	if err := step.CheckAlone(s.p.Self()); err != nil {
		return nil, err
	}
	return publishRound.Serve(step, func(none) (output, error) { return s.publish(ctx, step) })
}

// publish loads the graph, anonymises it, scores the release and passes
// each quasi-identifier, generalised, through the node's guard.
func (s *session) publish(ctx context.Context, step job.Step) (output, error) {
	g, err := s.load(ctx)
	if err != nil {
		return output{}, err
	}
	if err := s.prm.model().Check(g.Types()); err != nil {
		return output{}, fmt.Errorf("graph: party %s: params.adversary.lambda: %w", s.p.Self(), err)
	}
	seed, err := job.KeptRandom(s.p.Secrets(), "jobs/"+s.p.JobID()+"/graph-seed", true)
	if err != nil {
		return output{}, fmt.Errorf("graph: party %s: %w", s.p.Self(), err)
	}
	an, err := graphanon.Anonymise(ctx, g, s.prm.options(), job.Rand(seed[:], "graph/anonymise"))
	if err != nil {
		return output{}, fmt.Errorf("graph: party %s: %w", s.p.Self(), err)
	}
	rep, err := graphanon.Evaluate(ctx, g, an, s.prm.model(), s.prm.Rho)
	if err != nil {
		return output{}, fmt.Errorf("graph: party %s: %w", s.p.Self(), err)
	}
	for q, col := range s.prm.Quasi {
		values := make([]string, 0, len(g.Nodes))
		for _, c := range an.Release.Classes {
			v := joined(c.Attrs[q])
			for range c.Size {
				values = append(values, v)
			}
		}
		pub := job.Publication{Table: s.prm.Tables.Nodes, Column: col, Rows: len(values), Unique: job.UniqueValues(values), Generalised: true}
		if err := s.p.Guard().Publish(step, pub); err != nil {
			return output{}, err
		}
	}
	return output{Release: an.Release, Report: rep}, nil
}

var (
	_ job.Assembler = Kind{}
	_ job.Discloser = Kind{}
)
