package onetable

import (
	"context"
	"fmt"
	"time"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
)

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

// Step runs the job's one step: the publication, on the party alone.
func (s *session) Step(ctx context.Context, step job.Step) ([]byte, error) {
	if err := step.CheckAlone(s.p.Self()); err != nil {
		return nil, err
	}
	return anonymizeRound.Serve(step, func(none) (output, error) { return s.publish(ctx, step) })
}

// publish loads the table and the taxonomies, runs the algorithm and
// returns the publication. Errors name the table and column, never a value.
func (s *session) publish(ctx context.Context, step job.Step) (output, error) {
	switch s.prm.Algorithm {
	case "mdav":
		return s.stepMDAV(ctx)
	case "datafly", "ogf":
		return s.stepDatafly(ctx)
	case "onedim":
		return s.stepOneDim(ctx)
	}
	t, ds, err := s.load(ctx)
	if err != nil {
		return output{}, err
	}
	var sensCol []string
	var sens *anonymize.Coded
	if s.prm.Sensitive != "" {
		c, err := t.Column(s.prm.Sensitive)
		if err != nil {
			return output{}, fmt.Errorf("%w: table %s has no sensitive column %q", anonymize.ErrRequirement, t.Name, s.prm.Sensitive)
		}
		sensCol = c.Str
		// Published value by value: the policy refuses a column that
		// singles out its rows (a unique id named as the sensitive column).
		pub := job.Publication{Table: t.Name, Column: s.prm.Sensitive, Rows: len(sensCol), Unique: job.UniqueValues(sensCol)}
		if err := s.p.Guard().Publish(step, pub); err != nil {
			return output{}, err
		}
		if sens, err = s.prm.Model().Code(sensCol); err != nil {
			return output{}, fmt.Errorf("table %s column %q: %w", t.Name, s.prm.Sensitive, err)
		}
	}
	o := output{Algorithm: s.prm.Algorithm}
	start := time.Now()
	g, err := s.run(ds, sens, &o)
	if err != nil {
		return output{}, err
	}
	o.Seconds = time.Since(start).Seconds()
	kmax := 0
	for _, r := range s.prm.Requirements {
		kmax = max(kmax, r.K)
	}
	var pub *table.Table
	if s.prm.Algorithm == "mondrian" {
		pub = o.mondrian.Publish(ds) // numeric ranges as [lo-hi], not taxonomy nodes
	} else {
		pub = ds.Publish(g)
	}
	if sensCol != nil {
		pub.Columns = append(pub.Columns, &table.Column{Name: s.prm.Sensitive, Kind: table.Categorical, Str: sensCol})
	}
	o.Table = anonymize.Compact(pub)
	// The class metrics are the published table's: Mondrian's classes with
	// different ranges can share taxonomy nodes, so g would merge them.
	sizes, err := o.Table.ClassSizes(s.qid)
	if err != nil {
		return output{}, err
	}
	o.Classes, o.DM, o.CAvg = len(sizes), anonymize.Discernibility(sizes), anonymize.AvgClassSize(sizes, kmax)
	o.Distortion = ds.DistortionRatio(g) // per cell: the node covering each published value
	return o, nil
}

// run runs the chosen algorithm and returns its generalisation (the nodes
// of every record), filling the algorithm's own figures into o.
func (s *session) run(ds *anonymize.Dataset, sens *anonymize.Coded, o *output) (*anonymize.Generalisation, error) {
	kmax := 0
	for _, r := range s.prm.Requirements {
		kmax = max(kmax, r.K)
	}
	switch s.prm.Algorithm {
	case "optimal":
		res, err := anonymize.OptimalFullDomainModel(ds, s.prm.Requirements, sens)
		if err != nil {
			return nil, err
		}
		o.NCP, o.Levels, o.Checked, o.Lattice = res.NCP, res.Levels, res.Checked, res.Lattice
		return res.Gen, latticeFigures(ds, res.Gen, o)
	case "samarati":
		return s.samarati(ds, sens, o)
	case "mondrian":
		res, err := anonymize.MondrianModel(ds, kmax, sens)
		if err != nil {
			return nil, err
		}
		o.NCP, o.mondrian = res.NCP, res
		return res.Generalisation(ds), nil
	case "purpose":
		return s.purpose(ds, o)
	case "local":
		res, err := anonymize.LocalRecoding(ds, kmax, sens)
		if err != nil {
			return nil, err
		}
		o.NCP = ds.NCP(res.Gen)
		return res.Gen, nil
	}
	return nil, fmt.Errorf("anonymize: unknown algorithm %q", s.prm.Algorithm)
}

// load reads the table and the QIDs' taxonomies and encodes the QIDs.
func (s *session) load(ctx context.Context) (*table.Table, *anonymize.Dataset, error) {
	tables, err := job.LoadTables(ctx, s.p)
	if err != nil {
		return nil, nil, err
	}
	t := tables[0]
	tax := map[string]*anonymize.Taxonomy{}
	for _, q := range s.qid {
		src, err := s.p.TableSource(job.TableSpec{Name: "taxonomy " + q, Path: s.p.Spec().Taxonomies[q]})
		if err != nil {
			return nil, nil, fmt.Errorf("taxonomy of column %q: %w", q, err)
		}
		if tax[q], err = anonymize.LoadTaxonomy(src.Path, q); err != nil {
			return nil, nil, err
		}
		c, err := t.Column(q)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: table %s has no QID column %q", anonymize.ErrRequirement, t.Name, q)
		}
		bad := 0
		for _, v := range c.Str {
			if _, err := tax[q].Leaf(v); err != nil {
				bad++
			}
		}
		if bad > 0 {
			return nil, nil, fmt.Errorf("%w: table %s column %q: %d of %d rows hold a value its taxonomy does not cover (the values stay on this node)", anonymize.ErrNotCovered, t.Name, q, bad, t.NumRows())
		}
	}
	for _, r := range s.prm.Requirements {
		if r.K > t.NumRows() {
			return nil, nil, fmt.Errorf("%w: %s: k = %d is larger than table %s's %d rows", anonymize.ErrRequirement, r, r.K, t.Name, t.NumRows())
		}
	}
	ds, err := anonymize.Encode(t, s.qid, tax)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: table %s", anonymize.ErrNotCovered, t.Name)
	}
	return t, ds, nil
}
