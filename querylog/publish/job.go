// Package publish is the `querylog` job: one search engine publishes its
// own query log, sanitised by package querylog (B. Poblete, M.
// Spiliopoulou and R. Baeza-Yates, "Website Privacy Preservation for Query
// Log Publishing", PinKDD 2007, §§4–6), so that no website can be found in
// it by the intersection attack of §4.2.
//
// Spec: one party with one table, its log;
//
//	params: {k: N,                                   # fewest results a published query has, ≥ 2
//	         method: degree | degree/freq | degree/clicks,   # §6.2's score; degree/freq by default
//	         columns: {user, query, time, rank, click, results},  # names; results optional
//	         timeout_ms: T}
//
// The publication (querylog.csv from `cohort sim`) has the columns user
// (a pseudonym), query, time and click (an id "uN.sM", sM shared by the
// site's URLs); ranks are hidden. The result reports the queries removed
// as navigational, with fewer than k results, and by the greedy heuristic,
// the density after every removal, and the nodes, query volume and clicked
// documents before and after.
//
// # Leakage profile
//
// One step, one party, round 0 (the party refuses any other). The party's
// output, sent to the coordinator and disclosed as sanitised-log (the form
// Uses declares, held to the node's min_k by k), is the publication and
// the figures above: no raw user id, no URL or host, no rank, no result
// count, no removed query (the steps carry densities and counts, not the
// queries removed), and rows sorted by value, never in log order. The ids
// and pseudonyms are numbered by a generator seeded from a secret the
// party keeps for the job, so a re-run publishes the same bytes. The query
// column is published value by value, so the node's guard refuses it when
// most rows hold a query no other row holds. The coordinator runs the
// intersection attack on the publication and commits it only if the attack
// finds no pair; every member then receives it through the log. Time is
// published as the paper publishes it. TestLeakage checks every message
// and log entry, TestSim the party's audit ledger.
package publish

import (
	"context"
	"fmt"
	"regexp"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/querylog"
	"github.com/cohortdm/cohort/wire"
)

// Kind is `kind: querylog`.
type Kind struct{}

// publishRound is the job's one step: the party publishes its sanitised
// log, the coordinator commits it once the attack finds nothing on it.
var publishRound = job.Round[none, output, output]{Phase: "querylog"}

// none is the args of the step, which takes none.
type none struct{}

// output is the publication and its figures.
type output struct {
	Rows         []querylog.Row `msgpack:"rows"`
	Records      int            `msgpack:"records"`
	Queries      int            `msgpack:"queries"`
	Navigational int            `msgpack:"navigational"`
	FewResults   int            `msgpack:"few_results"`
	Start        querylog.Step  `msgpack:"start"` // the graph after the filters
	Final        querylog.Step  `msgpack:"final"`
	Removed      int            `msgpack:"removed"` // by the greedy heuristic
	Density      []float64      `msgpack:"density"` // after every removal
}

// Validate checks the spec.
func (Kind) Validate(spec *job.Spec) error {
	_, err := parseParams(spec)
	return err
}

// OutputDisclosure: the output is the sanitised log, the form Uses
// declares.
func (Kind) OutputDisclosure(job.Step) wire.Disclosure { return wire.DiscloseSanitisedLog }

// Coordinate runs the one step and commits the publication once the
// intersection attack finds nothing on it.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	prm, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	party := c.Spec().Parties[0].Name
	call := job.Call[none]{Parties: []string{party}, TimeoutMS: prm.TimeoutMS}
	done, err := publishRound.Run(ctx, c, call, func(o *job.Outcome[output]) (output, error) {
		return decide(o, party)
	})
	if err != nil {
		return nil, err
	}
	o := done.Decision
	return job.Result{
		"k": prm.K, "method": prm.Method, "records": o.Records, "queries": o.Queries,
		"navigational": o.Navigational, "few_results": o.FewResults, "removed": o.Removed,
		"graph_before": o.Start, "graph_after": o.Final, "density": o.Density,
		"published": o.Rows, "published_rows": len(o.Rows),
	}, nil
}

// idForm is a published click: a URL number and its site's suffix.
var idForm = regexp.MustCompile(`^u[0-9]+\.s[0-9]+$`)

// decide checks the publication: ids only, density zero, and no pair of
// queries for the attack of §4.2.
func decide(o *job.Outcome[output], party string) (output, error) {
	if err := o.Err(); err != nil {
		return output{}, err
	}
	out, ok := o.Results[party]
	if !ok {
		return output{}, fmt.Errorf("party %s sent no output", party)
	}
	for i, r := range out.Rows {
		if r.Click != "" && !idForm.MatchString(r.Click) {
			return output{}, fmt.Errorf("party %s: published row %d clicks something that is not an id", party, i)
		}
	}
	if out.Final.Edges != 0 || out.Final.Density != 0 {
		return output{}, fmt.Errorf("party %s: the published graph keeps %d edges", party, out.Final.Edges)
	}
	if pairs := querylog.Attack(querylog.PublishedClicks(out.Rows)); len(pairs) > 0 {
		return output{}, fmt.Errorf("party %s: the intersection attack finds %d pairs of queries in the publication", party, len(pairs))
	}
	return out, nil
}

// Open opens the party's session; it keeps nothing between steps (there
// is one) but the seed of its ids, kept in its Secrets.
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

// publish loads the log, sanitises it and checks the query column with
// the node's guard. Errors name the table and column, never a value.
func (s *session) publish(ctx context.Context, step job.Step) (output, error) {
	log, table, err := s.load(ctx)
	if err != nil {
		return output{}, err
	}
	seed, err := s.seed()
	if err != nil {
		return output{}, err
	}
	rows, rep, err := querylog.Sanitise(ctx, log, s.prm.K, querylog.Method(s.prm.Method), job.Rand(seed, "querylog/ids"))
	if err != nil {
		return output{}, err
	}
	queries := make([]string, len(rows))
	for i, r := range rows {
		queries[i] = r.Query
	}
	pub := job.Publication{Table: table, Column: s.prm.Columns.Query, Rows: len(rows), Unique: job.UniqueValues(queries)}
	if err := s.p.Guard().Publish(step, pub); err != nil {
		return output{}, err
	}
	o := output{Rows: rows, Records: rep.Records, Queries: rep.Queries, Navigational: rep.Navigational,
		FewResults: rep.FewResults, Start: rep.Graph.Start, Final: rep.Graph.Start, Removed: len(rep.Graph.Steps)}
	for _, st := range rep.Graph.Steps {
		o.Density = append(o.Density, st.Density)
	}
	if n := len(rep.Graph.Steps); n > 0 {
		o.Final = rep.Graph.Steps[n-1]
	}
	o.Start.Removed, o.Final.Removed = "", "" // a removed query is what must not leave
	return o, nil
}

// seed is the party's secret for numbering ids and pseudonyms, drawn at
// its first attempt and kept for the job, so that a re-run of the step
// publishes the same bytes and no member sees two numberings.
func (s *session) seed() ([]byte, error) {
	c, err := job.KeptRandom(s.p.Secrets(), "jobs/"+s.p.JobID()+"/querylog-ids-seed", true)
	if err != nil {
		return nil, fmt.Errorf("querylog: party %s: %w", s.p.Self(), err)
	}
	return c[:], nil
}

var (
	_ job.Assembler = Kind{}
	_ job.Discloser = Kind{}
)
