package modelselect

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/hamdist"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/wire"
)

// Kind is `kind: model-select`.
type Kind struct{}

// Params are a model-select spec's params.
type Params struct {
	// Align is psi (by the id columns; the default) or position.
	Align string `yaml:"align"`
	// MinIDs is the fewest ids scored: below it both parties refuse.
	// Default 10.
	MinIDs    int   `yaml:"min_ids"`
	TimeoutMS int64 `yaml:"timeout_ms"`
}

// MaxCandidates bounds the candidate columns: each error count is one
// more count of the labels, so the label holder's exposure grows with
// them (see the leakage profile).
const MaxCandidates = 16

// config is a checked spec: which side holds the predictions (the key
// holder) and which the labels, and the candidates in name order.
type config struct {
	p          Params
	sides      [2]hamdist.Side
	preds      int // index of the predictions side
	label      string
	candidates []string
}

// parse checks a spec: two parties, one table each; the labels table has
// its id column and one class column; the predictions table its id column
// and 1 to MaxCandidates categorical columns, one per candidate. Errors
// name the field.
func parse(spec *job.Spec) (*config, error) {
	p := Params{Align: hamdist.AlignPSI, MinIDs: 10}
	if err := spec.DecodeParams(&p); err != nil {
		return nil, err
	}
	if err := spec.CheckTimeoutMS(p.TimeoutMS); err != nil {
		return nil, err
	}
	if p.MinIDs < 1 {
		return nil, spec.Errorf("params.min_ids", "must be at least 1")
	}
	sides, err := hamdist.ParsePair(spec, "model-select", p.Align)
	if err != nil {
		return nil, err
	}
	cfg := &config{p: p, sides: sides, preds: -1}
	for i, s := range sides {
		classes, cats := s.Columns[table.Class], s.Columns[table.Categorical]
		switch {
		case len(classes) == 1 && len(s.Columns) == 1:
			if cfg.label != "" {
				return nil, spec.Errorf("schema."+s.Table, "a second labels table: one party holds the labels, the other the predictions")
			}
			cfg.label = classes[0]
		case len(classes) == 0 && len(cats) > 0 && len(s.Columns) == 1:
			if cfg.preds >= 0 {
				return nil, spec.Errorf("schema."+s.Table, "a second predictions table: one party holds the labels, the other the predictions")
			}
			if len(cats) > MaxCandidates {
				return nil, spec.Errorf("schema."+s.Table, "at most %d candidate columns", MaxCandidates)
			}
			cfg.preds, cfg.candidates = i, cats
		default:
			return nil, spec.Errorf("schema."+s.Table, "either the labels (an id and one class column) or the predictions (an id and one categorical column per candidate)")
		}
	}
	if cfg.preds < 0 || cfg.label == "" {
		return nil, spec.Errorf("schema", "one table of labels and one of predictions")
	}
	return cfg, nil
}

// scoreRound is the job's one step: the parties align their ids and run
// one comparison per candidate; the predictions holder's output is each
// candidate's error count.
var scoreRound = job.Round[scoreArgs, scoreOutput, scoreDecision]{Phase: "score"}

type scoreArgs struct{}

// scoreOutput is a party's output: how many ids it scored, and from the
// predictions holder each candidate's errors in candidate order.
type scoreOutput struct {
	Holder   bool  `msgpack:"holder"`
	Compared int   `msgpack:"compared"`
	Errors   []int `msgpack:"errors"`
}

// scoreDecision is the public result.
type scoreDecision struct {
	Compared int   `msgpack:"compared"`
	Errors   []int `msgpack:"errors"`
}

// Validate checks the spec (parse), naming the bad field.
func (Kind) Validate(spec *job.Spec) error {
	_, err := parse(spec)
	return err
}

// OutputDisclosure: the outputs are the public result's counts.
func (Kind) OutputDisclosure(job.Step) wire.Disclosure { return wire.DisclosePublicResult }

// Uses declares the id column into the PSI (align psi), to the peer, and
// each candidate column and the label column as distance: their error
// counts go to every member.
func (Kind) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	cfg, err := parse(spec)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(cfg.sides[:], func(s hamdist.Side) bool { return s.Party == party })
	if i < 0 {
		return nil, nil
	}
	s := cfg.sides[i]
	var out []job.Use
	if cfg.p.Align == hamdist.AlignPSI {
		out = append(out, job.Use{Table: s.Table, Column: s.ID, Role: job.RoleID, Form: wire.DisclosePSIBlinded, To: []string{cfg.sides[1-i].Party}})
	}
	if i != cfg.preds {
		return append(out, job.Use{Table: s.Table, Column: cfg.label, Role: job.RoleClass, Form: wire.DiscloseDistance}), nil
	}
	for _, c := range cfg.candidates {
		out = append(out, job.Use{Table: s.Table, Column: c, Role: job.RoleAttribute, Form: wire.DiscloseDistance})
	}
	return out, nil
}

// Coordinate runs the score step, commits the error counts and names the
// winner: the fewest errors, ties to the smallest candidate name.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	cfg, err := parse(c.Spec())
	if err != nil {
		return nil, err
	}
	call := job.Call[scoreArgs]{Parties: c.Spec().PartyNames(), TimeoutMS: cfg.p.TimeoutMS}
	done, err := scoreRound.Run(ctx, c, call, func(o *job.Outcome[scoreOutput]) (scoreDecision, error) {
		return decide(o, cfg)
	})
	if err != nil {
		return nil, err
	}
	d := done.Decision
	errs, rates := map[string]int{}, map[string]float64{}
	winner := ""
	for i, name := range cfg.candidates {
		errs[name], rates[name] = d.Errors[i], float64(d.Errors[i])/float64(d.Compared)
		if winner == "" || d.Errors[i] < errs[winner] {
			winner = name
		}
	}
	return job.Result{"compared": d.Compared, "errors": errs, "error_rate": rates, "winner": winner,
		"predictions": cfg.sides[cfg.preds].Party, "labels": cfg.sides[1-cfg.preds].Party,
		"protocol": "Yang-Zhong-Wright cross-validation over the generalised Hamming distance (Fig. 2, Fig. 5), ElGamal on ristretto255"}, nil
}

// decide checks the outputs and forms the decision.
func decide(o *job.Outcome[scoreOutput], cfg *config) (scoreDecision, error) {
	var d scoreDecision
	if err := o.Err(); err != nil {
		return d, err
	}
	h, okh := o.Results[cfg.sides[cfg.preds].Party]
	l, okl := o.Results[cfg.sides[1-cfg.preds].Party]
	switch {
	case !okh || !okl:
		return d, errors.New("model-select: a party sent no output")
	case !h.Holder || l.Holder || len(l.Errors) != 0:
		return d, errors.New("model-select: the outputs do not come from the roles the spec gives")
	case h.Compared != l.Compared:
		return d, errors.New("model-select: the parties scored different numbers of ids")
	case len(h.Errors) != len(cfg.candidates):
		return d, errors.New("model-select: an error count per candidate is missing")
	}
	for _, e := range h.Errors {
		if e < 0 || e > h.Compared {
			return d, errors.New("model-select: the predictions holder reported an impossible count")
		}
	}
	return scoreDecision{Compared: h.Compared, Errors: h.Errors}, nil
}

// Open opens a party's session.
func (Kind) Open(_ context.Context, p job.Participant) (job.Session, error) {
	cfg, err := parse(p.Spec())
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(cfg.sides[:], func(s hamdist.Side) bool { return s.Party == p.Self() })
	if i < 0 {
		return nil, fmt.Errorf("model-select: %s is no party of the job", p.Self())
	}
	return &session{p: p, cfg: cfg, me: i}, nil
}

type session struct {
	p   job.Participant
	cfg *config
	me  int
}

func (s *session) Close() {}

// Step runs the score step: round 0 only, and only while the log holds
// no scores committed.
func (s *session) Step(ctx context.Context, step job.Step) ([]byte, error) {
	if err := hamdist.CheckOnce("model-select", s.p.Self(), step, scoreRound.Phase, "scores", scoreRound.History(s.p.History())); err != nil {
		return nil, err
	}
	return scoreRound.Serve(step, func(scoreArgs) (scoreOutput, error) {
		out, err := s.score(ctx, step)
		if err != nil {
			return out, fmt.Errorf("model-select: party %s: %w", s.p.Self(), err)
		}
		return out, nil
	})
}

// score aligns the rows and runs one exchange per candidate, each on the
// step's channel "compare/<candidate>": the predictions holder holds the
// key (the paper's Alice), the label holder compares.
func (s *session) score(ctx context.Context, step job.Step) (scoreOutput, error) {
	cfg := s.cfg
	holder := s.me == cfg.preds
	peer := cfg.sides[1-s.me].Party
	t, rows, err := hamdist.Rows(ctx, s.p, step, cfg.sides[s.me], peer, cfg.p.Align, holder)
	if err != nil {
		return scoreOutput{}, err
	}
	out := scoreOutput{Holder: holder, Compared: len(rows)}
	var labels hamdist.Windows
	if !holder {
		vals, err := hamdist.ExactValues(t, cfg.label, rows)
		if err != nil {
			return out, err
		}
		labels = hamdist.ExactWindows(vals)
	}
	for _, c := range cfg.candidates {
		net := job.StepNet{Party: s.p, Step: step.Sub("compare/" + c)}
		if !holder {
			if err := hamdist.RunComparer(ctx, net, peer, labels, cfg.p.MinIDs); err != nil {
				return out, tooFew(err)
			}
			continue
		}
		pred, err := hamdist.ExactValues(t, c, rows)
		if err != nil {
			return out, err
		}
		right, err := hamdist.RunHolder(ctx, net, peer, pred, 1, cfg.p.MinIDs)
		if err != nil {
			return out, tooFew(err)
		}
		out.Errors = append(out.Errors, len(rows)-right)
	}
	return out, nil
}

// tooFew names the param behind hamdist.ErrTooFew.
func tooFew(err error) error {
	if errors.Is(err, hamdist.ErrTooFew) {
		return errors.New("fewer ids to score than params.min_ids")
	}
	return err
}
