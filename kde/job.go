package kde

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/wire"
)

// Kind is `kind: kde`.
type Kind struct{}

// publishRound is the job's one step: every party publishes its synthetic
// sample; the decision is the samples, pooled in party order.
var publishRound = job.Round[publishArgs, publishOutput, publishDecision]{Phase: "publish"}

// publishArgs carries nothing: a party takes everything from the spec.
type publishArgs struct{}

// publishOutput is a party's synthetic sample, one entry per class it
// holds, in label order.
type publishOutput struct {
	Classes []classSample `msgpack:"classes"`
}

// classSample is one class's synthetic rows (encodeRows: the common
// attributes in name order).
type classSample struct {
	Label string `msgpack:"label"`
	Rows  []byte `msgpack:"rows"`
}

// publishDecision is every party's sample, in party order.
type publishDecision struct {
	Samples []published `msgpack:"samples"`
}

type published struct {
	Party   string        `msgpack:"party"`
	Classes []classSample `msgpack:"classes"`
}

// Validate checks the spec (parse), naming the bad field.
func (Kind) Validate(spec *job.Spec) error {
	_, err := parse(spec)
	return err
}

// OutputDisclosure: a party's one output is its synthetic sample; the log
// gives it to every member.
func (Kind) OutputDisclosure(job.Step) wire.Disclosure { return wire.DiscloseSynthetic }

// Coordinate runs the publish step, checks every sample and pools them.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	cfg, err := parse(c.Spec())
	if err != nil {
		return nil, err
	}
	parties := c.Spec().PartyNames()
	call := job.Call[publishArgs]{Parties: parties, TimeoutMS: cfg.p.TimeoutMS}
	done, err := publishRound.Run(ctx, c, call, func(o *job.Outcome[publishOutput]) (publishDecision, error) {
		var d publishDecision
		if err := o.Err(); err != nil {
			return d, err
		}
		for _, p := range parties {
			out, ok := o.Results[p]
			if !ok {
				return d, fmt.Errorf("kde: party %s published no sample", p)
			}
			if _, err := checkSample(out.Classes, cfg, p); err != nil {
				return d, err
			}
			d.Samples = append(d.Samples, published{Party: p, Classes: out.Classes})
		}
		return d, nil
	})
	if err != nil {
		return nil, err
	}
	return result(done.Decision, cfg)
}

// checkSample decodes a party's sample and checks it against the spec:
// labels in order, each once; every class's rows whole rows of the
// attributes, finite, at least as many as a class of params.min_rows rows
// gives. Errors name the party, never a value.
func checkSample(classes []classSample, cfg *config, party string) (map[string][][]float64, error) {
	out := map[string][][]float64{}
	least := cfg.p.sampleRows(cfg.p.MinRows)
	for i, cs := range classes {
		if i > 0 && classes[i-1].Label >= cs.Label {
			return nil, fmt.Errorf("kde: party %s's sample: classes not in label order, each once", party)
		}
		rows, err := decodeRows(cs.Rows, len(cfg.attrs))
		if err != nil {
			return nil, fmt.Errorf("kde: party %s's sample: %w", party, err)
		}
		if len(rows) < least {
			return nil, fmt.Errorf("kde: party %s's sample: a class of fewer rows than params.min_rows gives", party)
		}
		out[cs.Label] = rows
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("kde: party %s's sample holds no class", party)
	}
	return out, nil
}

// pooled is the pooled sample by class, each class's rows in party order.
func pooled(d publishDecision, cfg *config) (map[string][][]float64, error) {
	pool := map[string][][]float64{}
	for _, s := range d.Samples {
		byClass, err := checkSample(s.Classes, cfg, s.Party)
		if err != nil {
			return nil, err
		}
		for _, cs := range s.Classes {
			pool[cs.Label] = append(pool[cs.Label], byClass[cs.Label]...)
		}
	}
	return pool, nil
}

// result is the job's public result: the pooled sample, and each party's
// rows drawn per class.
func result(d publishDecision, cfg *config) (job.Result, error) {
	pool, err := pooled(d, cfg)
	if err != nil {
		return nil, err
	}
	pub := map[string]any{}
	for _, s := range d.Samples {
		counts := map[string]int{}
		for _, cs := range s.Classes {
			counts[cs.Label] = len(cs.Rows) / (8 * len(cfg.attrs))
		}
		pub[s.Party] = counts
	}
	total := 0
	for _, rows := range pool {
		total += len(rows)
	}
	return job.Result{
		"attributes": cfg.attrs, "class": cfg.class, "rows": total, "published": pub,
		"sample": pool, "sample_ratio": cfg.p.SampleRatio, "min_rows": cfg.p.MinRows,
	}, nil
}

// Open opens a party's session; its publish step reads the table and
// draws the sample.
func (Kind) Open(_ context.Context, p job.Participant) (job.Session, error) {
	cfg, err := parse(p.Spec())
	if err != nil {
		return nil, err
	}
	return &session{p: p, cfg: cfg}, nil
}

type session struct {
	p   job.Participant
	cfg *config
}

func (s *session) Close() {}

// Step publishes the party's sample, once: kde has one step, publish
// round 0, and a party refuses any other, and refuses once the log holds
// its sample published (a second independent sample would tell more of
// the rows than one).
func (s *session) Step(ctx context.Context, step job.Step) ([]byte, error) {
	if step.Phase != publishRound.Phase || step.Round != 0 {
		return nil, fmt.Errorf("kde: party %s refuses step %s/%d of coordinator %s: kde has one step, publish round 0", s.p.Self(), step.Phase, step.Round, step.Coordinator)
	}
	if slices.ContainsFunc(publishRound.History(s.p.History()), func(r *job.Record) bool { return r.Error == "" }) {
		return nil, fmt.Errorf("kde: party %s refuses coordinator %s: the log holds its sample published already", s.p.Self(), step.Coordinator)
	}
	return publishRound.Serve(step, func(publishArgs) (publishOutput, error) {
		if err := s.p.Guard().Synthetic(step, s.cfg.tables[s.p.Self()]); err != nil {
			return publishOutput{}, fmt.Errorf("kde: party %s: %w", s.p.Self(), err)
		}
		tables, err := job.LoadTables(ctx, s.p)
		if err != nil {
			return publishOutput{}, err
		}
		seed, err := s.seed()
		if err != nil {
			return publishOutput{}, err
		}
		return draw(tables[0], s.cfg, seed, s.p.Self())
	})
}

// seed is the party's own seed for its sample, drawn from crypto/rand at
// its first attempt and kept in its Secrets for the job, so that a re-run
// of the step (a new leader, a restart) publishes the same sample, not a
// second one. No other member knows it: with it, a member could take the
// kernel noise off each synthetic row and find the row it was drawn from.
func (s *session) seed() ([]byte, error) {
	c, err := job.KeptRandom(s.p.Secrets(), "jobs/"+s.p.JobID()+"/kde-sample-seed", true)
	if err != nil {
		return nil, fmt.Errorf("kde: party %s: %w", s.p.Self(), err)
	}
	return c[:], nil
}

// draw is a party's sample of its table (Sanitise over its rows by
// class), encoded for the coordinator.
func draw(t *table.Table, cfg *config, seed []byte, party string) (publishOutput, error) {
	byClass, err := rowsByClass(t, cfg)
	if err != nil {
		return publishOutput{}, fmt.Errorf("kde: party %s: %w", party, err)
	}
	sample, err := Sanitise(byClass, cfg.p.SampleRatio, cfg.p.MinRows, seed)
	if err != nil {
		return publishOutput{}, fmt.Errorf("kde: party %s: table %s: %w", party, t.Name, err)
	}
	var out publishOutput
	for _, label := range slices.Sorted(maps.Keys(sample)) {
		out.Classes = append(out.Classes, classSample{Label: label, Rows: encodeRows(sample[label], len(cfg.attrs))})
	}
	return out, nil
}

// Sanitise is one site's side of the paper's scheme, class by class (the
// paper resamples each class apart, its DAPL figures are per class): for
// each class, round(ratio·n) rows (at least one) drawn by Resample with
// Scott's bandwidths over the class's n rows, from a generator of seed
// and the label. A class of fewer than minRows rows fails, naming
// params.min_rows, not the class or its count.
func Sanitise(byClass map[string][][]float64, ratio float64, minRows int, seed []byte) (map[string][][]float64, error) {
	out := map[string][][]float64{}
	for _, label := range slices.Sorted(maps.Keys(byClass)) {
		rows := byClass[label]
		if len(rows) < max(minRows, 2) {
			return nil, errors.New("params.min_rows: a class has fewer rows")
		}
		m := max(1, int(math.Round(ratio*float64(len(rows)))))
		out[label] = Resample(rows, Bandwidths(rows), m, job.Rand(seed, "kde/sample/"+label))
	}
	return out, nil
}

// rowsByClass reads a table's attribute vectors (cfg.attrs order) by
// class. Errors name the table and column, never a value.
func rowsByClass(t *table.Table, cfg *config) (map[string][][]float64, error) {
	cls, err := t.Column(cfg.class)
	if err != nil {
		return nil, fmt.Errorf("table %s has no class column %q", t.Name, cfg.class)
	}
	cols := make([][]float64, len(cfg.attrs))
	for i, a := range cfg.attrs {
		c, err := t.Column(a)
		if err != nil || c.Num == nil {
			return nil, fmt.Errorf("table %s has no numeric column %q", t.Name, a)
		}
		cols[i] = c.Num
	}
	out := map[string][][]float64{}
	for r, label := range cls.Str {
		x := make([]float64, len(cols))
		for i, c := range cols {
			x[i] = c[r]
		}
		out[label] = append(out[label], x)
	}
	return out, nil
}
