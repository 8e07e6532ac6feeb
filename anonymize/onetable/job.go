// Package onetable is the `anonymize` job: one organisation anonymises one
// of its tables with a chosen algorithm of package anonymize and publishes
// it (issue 13, "one organisation alone"): the optimal full-domain
// generalisation (lattice search, least NCP, global recoding) or strict
// multidimensional Mondrian (local recoding, optionally distinct or entropy
// l-diverse).
//
// Start reading at Kind.Coordinate, then session.Step.
//
// Spec: one party with one table; `taxonomies: {column: path}` for every
// quasi-identifier (ARX hierarchy CSV or YAML, as for integrate);
//
//	params: {algorithm: optimal | mondrian, requirements: [{qid: [...], k: N}],
//	         sensitive: col, l: L, entropy: false, id: col}
//
// The published table holds the union of the requirements' QID columns,
// generalised, then the sensitive column as it is when one is named; every
// other column (the id among them) is left out. `optimal` honours every
// requirement exactly (OptimalFullDomainReqs) and does not support l;
// `mondrian` partitions on the union of the QIDs with k the largest k_i
// (each QID's classes are unions of Mondrian's classes, so each has at
// least that many records) and, with sensitive and l, keeps every class
// l-diverse (MondrianDiverse).
//
// # Leakage profile
//
// One step, one party. The party's output, sent to the coordinator, is the
// published table itself (distinct rows with counts, sorted by value, never
// in table order), its NCP, and the algorithm's counters; the coordinator
// checks k (and l) on it and commits it: the publication is the job's public
// result, and every member of the consortium receives it through the log.
// Nothing else leaves the party: no raw value of a quasi-identifier that the
// publication does not show, no id, no row order. The coordinator learns
// nothing more than the members. A test checks every message and log entry.
package onetable

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
	"github.com/cohortdm/cohort/table"
)

// Kind is `kind: anonymize`.
type Kind struct{}

const phaseAnonymize = "anonymize"

// Params are the job's params.
type Params struct {
	Algorithm    string                  `yaml:"algorithm"`
	Requirements []anonymize.Requirement `yaml:"requirements"`
	Sensitive    string                  `yaml:"sensitive"`
	L            float64                 `yaml:"l"`
	Entropy      bool                    `yaml:"entropy"`
	TimeoutMS    int64                   `yaml:"timeout_ms"`
}

func parseParams(spec *job.Spec) (*Params, []string, error) {
	p := &Params{Algorithm: "optimal"}
	if err := spec.DecodeParams(p); err != nil {
		return nil, nil, err
	}
	if len(spec.Parties) != 1 || len(spec.Parties[0].Tables) != 1 {
		return nil, nil, spec.Errorf("parties", "anonymize runs on one party with one table (use kind integrate for several parties)")
	}
	if p.Algorithm != "optimal" && p.Algorithm != "mondrian" {
		return nil, nil, spec.Errorf("params.algorithm", "must be optimal or mondrian, not %q", p.Algorithm)
	}
	if len(p.Requirements) == 0 {
		return nil, nil, spec.Errorf("params.requirements", "no requirement: give at least one {qid: [...], k: N}")
	}
	var qid []string
	for i, r := range p.Requirements {
		if r.K < 2 {
			return nil, nil, spec.Errorf(fmt.Sprintf("params.requirements[%d].k", i), "must be at least 2, not %d: classes of at least 1 record hide no one", r.K)
		}
		if len(r.QID) == 0 {
			return nil, nil, spec.Errorf(fmt.Sprintf("params.requirements[%d].qid", i), "no columns")
		}
		for j, q := range r.QID {
			if path := spec.Taxonomies[q]; path == "" || !filepath.IsLocal(path) {
				return nil, nil, spec.Errorf(fmt.Sprintf("params.requirements[%d].qid[%d]", i, j), "column %q has no taxonomy inside the spec's directory (taxonomies: {%s: PATH})", q, q)
			}
			if !slices.Contains(qid, q) {
				qid = append(qid, q)
			}
		}
	}
	switch {
	case slices.Contains(qid, p.Sensitive):
		return nil, nil, spec.Errorf("params.sensitive", "%q is a quasi-identifier", p.Sensitive)
	case p.L != 0 && p.Sensitive == "":
		return nil, nil, spec.Errorf("params.l", "l needs a sensitive column")
	case p.Sensitive != "" && p.L < 2:
		return nil, nil, spec.Errorf("params.sensitive", "%q is published as it is, so it needs a model that protects it: l ≥ 2 (params.l, not %v)", p.Sensitive, p.L)
	case p.L > 1 && p.Algorithm != "mondrian":
		return nil, nil, spec.Errorf("params.l", "l-diversity is supported by algorithm mondrian only")
	case p.TimeoutMS < 0 || p.TimeoutMS > (24*time.Hour).Milliseconds():
		return nil, nil, spec.Errorf("params.timeout_ms", "must be in [0, a day], not %d", p.TimeoutMS)
	}
	return p, qid, nil
}

// Validate checks the spec.
func (Kind) Validate(spec *job.Spec) error {
	_, _, err := parseParams(spec)
	return err
}

// OutputDisclosure: the output is the publication, a public result.
func (Kind) OutputDisclosure(job.Step) protocol.Disclosure { return protocol.DisclosePublicResult }

// output is the party's publication and the algorithm's figures.
type output struct {
	Table     anonymize.Published `msgpack:"table"`
	NCP       float64             `msgpack:"ncp"`
	Classes   int                 `msgpack:"classes"`
	Levels    []int               `msgpack:"levels"`  // optimal: the generalisation level per QID
	Checked   int                 `msgpack:"checked"` // optimal: transformations counted
	Lattice   int                 `msgpack:"lattice"`
	Seconds   float64             `msgpack:"seconds"` // the algorithm's time at the party
	Algorithm string              `msgpack:"algorithm"`
}

// Coordinate runs the one step and checks the publication.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	prm, qid, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	party := c.Spec().Parties[0].Name
	st := job.Step{Phase: phaseAnonymize, Parties: []string{party}, TimeoutMS: prm.TimeoutMS}
	o, _, err := job.Run(ctx, c, st, func(outs *job.Outputs) (output, error) {
		var o output
		if why, ok := outs.Failed[party]; ok {
			return o, fmt.Errorf("anonymize: party %s: %s", party, strings.TrimPrefix(why, "party "+party+": "))
		}
		if err := protocol.Unmarshal(outs.Results[party], &o); err != nil {
			return o, fmt.Errorf("anonymize: output of party %s: %w", party, err)
		}
		want := slices.Clone(qid)
		if prm.Sensitive != "" {
			want = append(want, prm.Sensitive)
		}
		if !slices.Equal(o.Table.Columns, want) {
			return o, fmt.Errorf("anonymize: party %s published columns %v, not %v", party, o.Table.Columns, want)
		}
		return o, nil
	})
	if err != nil {
		return nil, err
	}
	groups, err := o.Table.MinGroups(prm.Requirements)
	if err != nil {
		return nil, err
	}
	reqs := make([]map[string]any, len(prm.Requirements))
	minGroup := 0
	for i, r := range prm.Requirements {
		if groups[i] < r.K {
			return nil, fmt.Errorf("%w: the publication's smallest class on %s has %d records", anonymize.ErrViolation, r, groups[i])
		}
		reqs[i] = map[string]any{"qid": r.QID, "k": r.K, "min_group": groups[i]}
		if i == 0 || groups[i] < minGroup {
			minGroup = groups[i]
		}
	}
	if prm.L > 1 && !prm.Entropy {
		if err := o.Table.CheckDistinctL(prm.Requirements, prm.Sensitive, int(prm.L)); err != nil {
			return nil, err
		}
	}
	res := job.Result{
		"algorithm": prm.Algorithm, "records": o.Table.Records(), "ncp": o.NCP, "classes": o.Classes,
		"min_group": minGroup, "requirements": reqs, "published": o.Table, "seconds": o.Seconds,
	}
	if prm.Algorithm == "optimal" {
		res["levels"], res["checked"], res["lattice"] = o.Levels, o.Checked, o.Lattice
	}
	return res, nil
}

// Open opens the party's session; it keeps nothing between steps (there is
// one), so a restart simply runs the step again.
func (Kind) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	prm, qid, err := parseParams(p.Spec())
	if err != nil {
		return nil, err
	}
	return &session{p: p, prm: prm, qid: qid}, nil
}

type session struct {
	p   job.Participant
	prm *Params
	qid []string
}

func (s *session) Close() {}

// Step loads the table and the taxonomies, runs the algorithm and returns
// the publication. Errors name the table and column, never a value.
func (s *session) Step(ctx context.Context, step job.Step) ([]byte, error) {
	if step.Phase != phaseAnonymize {
		return nil, fmt.Errorf("anonymize: unknown phase %q", step.Phase)
	}
	tables, err := job.LoadTables(ctx, s.p)
	if err != nil {
		return nil, err
	}
	t := tables[0]
	tax := map[string]*anonymize.Taxonomy{}
	for _, q := range s.qid {
		src, err := s.p.TableSource(job.TableSpec{Name: "taxonomy " + q, Path: s.p.Spec().Taxonomies[q]})
		if err != nil {
			return nil, fmt.Errorf("taxonomy of column %q: %w", q, err)
		}
		if tax[q], err = anonymize.LoadTaxonomy(src.Path, q); err != nil {
			return nil, err
		}
		c, err := t.Column(q)
		if err != nil {
			return nil, fmt.Errorf("%w: table %s has no QID column %q", anonymize.ErrRequirement, t.Name, q)
		}
		bad := 0
		for _, v := range c.Str {
			if _, err := tax[q].Leaf(v); err != nil {
				bad++
			}
		}
		if bad > 0 {
			return nil, fmt.Errorf("%w: table %s column %q: %d of %d rows hold a value its taxonomy does not cover (the values stay on this node)", anonymize.ErrNotCovered, t.Name, q, bad, t.NumRows())
		}
	}
	var sens []string
	if s.prm.Sensitive != "" {
		c, err := t.Column(s.prm.Sensitive)
		if err != nil {
			return nil, fmt.Errorf("%w: table %s has no sensitive column %q", anonymize.ErrRequirement, t.Name, s.prm.Sensitive)
		}
		sens = c.Str
	}
	for _, r := range s.prm.Requirements {
		if r.K > t.NumRows() {
			return nil, fmt.Errorf("%w: %s: k = %d is larger than table %s's %d rows", anonymize.ErrRequirement, r, r.K, t.Name, t.NumRows())
		}
	}
	ds, err := anonymize.Encode(t, s.qid, tax)
	if err != nil {
		return nil, fmt.Errorf("%w: table %s", anonymize.ErrNotCovered, t.Name)
	}
	o := output{Algorithm: s.prm.Algorithm}
	start := time.Now()
	var pub *table.Table
	switch s.prm.Algorithm {
	case "optimal":
		res, err := anonymize.OptimalFullDomainReqs(ds, s.prm.Requirements)
		if err != nil {
			return nil, err
		}
		o.Seconds = time.Since(start).Seconds()
		pub = ds.Publish(res.Gen)
		o.NCP, o.Classes, o.Levels, o.Checked, o.Lattice = res.NCP, res.Classes, res.Levels, res.Checked, res.Lattice
	case "mondrian":
		k := 0
		for _, r := range s.prm.Requirements {
			k = max(k, r.K)
		}
		var div *anonymize.Diversity
		if s.prm.L > 1 {
			div = &anonymize.Diversity{Sensitive: sens, L: s.prm.L, Entropy: s.prm.Entropy}
		}
		res, err := anonymize.MondrianDiverse(ds, k, div)
		if err != nil {
			return nil, err
		}
		o.Seconds = time.Since(start).Seconds()
		pub = res.Publish(ds)
		o.NCP, o.Classes = res.NCP, len(res.Classes)
	}
	if sens != nil {
		pub.Columns = append(pub.Columns, &table.Column{Name: s.prm.Sensitive, Kind: table.Categorical, Str: sens})
	}
	o.Table = anonymize.Compact(pub)
	return protocol.Marshal(&o)
}

// Assemble writes DIR/anonymized.csv from the committed publication.
func (Kind) Assemble(_ context.Context, _ *job.Spec, result []byte, _ map[string]job.Secrets, dir string) ([]byte, error) {
	var res map[string]json.RawMessage
	if err := json.Unmarshal(result, &res); err != nil {
		return nil, fmt.Errorf("anonymize: result: %w", err)
	}
	var pub anonymize.Published
	if err := json.Unmarshal(res["published"], &pub); err != nil {
		return nil, fmt.Errorf("anonymize: result field published: %w", err)
	}
	if err := pub.WriteCSV(filepath.Join(dir, File)); err != nil {
		return nil, err
	}
	res["anonymized"], _ = json.Marshal(File)
	return json.MarshalIndent(res, "", "  ")
}

// File is the published table `cohort sim` writes.
const File = "anonymized.csv"
