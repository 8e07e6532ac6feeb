package integrate

import (
	"context"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Kind is the n-party k-anonymous integration job, `kind: integrate` (see
// the package doc for the protocol and its leakage profile).
type Kind struct{}

// Phases of the job, in order; score and split alternate, one pair per
// TDS round.
const (
	phaseSchema  = "schema"
	phaseAlign   = "align"
	phaseScore   = "score"   // TDS
	phaseSplit   = "split"   // TDS
	phasePropose = "propose" // Mondrian
	phaseCut     = "cut"     // Mondrian
	phaseCheck   = "check"   // Mondrian with a sensitive column one party holds
	phasePublish = "publish"
)

// psiEdge names the alignment PSI in its domain tag.
const psiEdge = "integrate/id"

// Validate checks the params and the taxonomies' paths.
func (Kind) Validate(spec *job.Spec) error {
	_, err := parseParams(spec)
	return err
}

// OutputDisclosure says what each step's output tells the coordinator, in
// the forms Uses declares: a score (a party's best candidate or proposals,
// and the sensitive column owner's one bit per candidate cut), a split (the
// winner's record partition, committed to the log), the party's part of the
// k-anonymous publication (generalised), or public metadata (column names,
// digests, the alignment's size).
func (Kind) OutputDisclosure(step job.Step) wire.Disclosure {
	switch step.Phase {
	case phaseScore, phasePropose, phaseCheck:
		return wire.DiscloseScore
	case phaseSplit, phaseCut:
		return wire.DiscloseSplitSummary
	case phasePublish:
		return wire.DiscloseGeneralised
	}
	return wire.DisclosePublicResult
}

// Coordinate drives the job: the schema, the id alignment, the rounds of
// the algorithm (TDS: score, then the winner's split, until no party has a
// valid and beneficial specialisation; Mondrian: propose, then the owners'
// cuts, until no group can be cut), and the publication. It depends only on
// the spec and the committed decisions.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	prm, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	co := &coordinator{c: c, prm: prm, parties: c.Spec().PartyNames()}
	sd, ad, err := co.prepare(ctx)
	if err != nil {
		return nil, err
	}
	var rounds int
	var pd publishDecision
	if prm.Algorithm == algMondrian {
		if rounds, err = co.mondrianRounds(ctx, sd, ad); err == nil {
			pd, err = run(ctx, co, labelsRound, 0, co.parties, none{}, func(o *job.Outcome[labelsOutput]) (publishDecision, error) {
				return decideMondrianPublish(o, co.parties, prm, sd, ad.Records)
			})
		}
	} else {
		if rounds, err = co.tdsRounds(ctx, sd); err == nil {
			pd, err = run(ctx, co, publishRound, 0, co.parties, none{}, func(o *job.Outcome[publishOutput]) (publishDecision, error) {
				return decidePublish(o, co.parties, prm, sd.Attrs, ad.Records)
			})
		}
	}
	if err != nil {
		return nil, err
	}
	return result(prm, sd, ad, rounds, pd), nil
}

// result is the job's result: the publication and its figures.
func result(prm *Params, sd schemaDecision, ad alignDecision, rounds int, pd publishDecision) job.Result {
	reqs := make([]map[string]any, len(prm.Requirements))
	minGroup := 0
	for i, r := range prm.Requirements {
		reqs[i] = map[string]any{"qid": r.QID, "k": r.K, "min_group": pd.MinGroups[i]}
		if i < len(pd.Reddy) {
			reqs[i]["reddy"] = pd.Reddy[i]
		}
		if i == 0 || pd.MinGroups[i] < minGroup {
			minGroup = pd.MinGroups[i]
		}
	}
	return job.Result{
		"algorithm":    prm.Algorithm,
		"records":      ad.Records,
		"attributes":   sd.Attrs,
		"rounds":       rounds,
		"ncp":          pd.NCP,
		"min_group":    minGroup,
		"requirements": reqs,
		"published":    pd.Table,
	}
}

// coordinator is one run of Coordinate.
type coordinator struct {
	c       job.Coordinator
	prm     *Params
	parties []string
}

// prepare runs the steps before the rounds: the schema and the alignment.
func (co *coordinator) prepare(ctx context.Context) (schemaDecision, alignDecision, error) {
	sd, err := run(ctx, co, schemaRound, 0, co.parties, none{}, func(o *job.Outcome[schemaOutput]) (schemaDecision, error) {
		return decideSchema(o, co.parties, co.prm)
	})
	if err != nil {
		return sd, alignDecision{}, err
	}
	ad, err := run(ctx, co, alignRound, 0, co.parties, none{}, func(o *job.Outcome[alignOutput]) (alignDecision, error) {
		return decideAlign(o, co.parties, co.prm)
	})
	return sd, ad, err
}

// run runs one step of round r on parties and returns its committed
// decision (or the step's failure, which decide wrote or the log holds).
func run[A, O, D any](ctx context.Context, co *coordinator, r job.Round[A, O, D], round int, parties []string, args A, decide func(*job.Outcome[O]) (D, error)) (D, error) {
	done, err := r.Run(ctx, co.c, job.Call[A]{Round: round, Parties: parties, Args: args, TimeoutMS: co.prm.TimeoutMS}, decide)
	if err != nil {
		var d D
		return d, err
	}
	return done.Decision, nil
}

// tdsRounds runs TDS's rounds: every party's best candidate (score), then
// the winner's split, until no party has a candidate.
func (co *coordinator) tdsRounds(ctx context.Context, sd schemaDecision) (int, error) {
	for r := 0; ; r++ {
		co.c.Progress(phaseScore, r, 0)
		w, err := run(ctx, co, scoreRound, r, co.parties, none{}, func(o *job.Outcome[scoreOutput]) (winner, error) {
			return decideScore(o, co.parties, sd.Attrs)
		})
		if err != nil || !w.Found {
			return r, err
		}
		if _, err := run(ctx, co, splitRound, r, []string{w.Party}, splitArgs{Attr: w.Attr, Node: w.Node}, func(o *job.Outcome[Split]) (Split, error) {
			return decideSplit(o, w)
		}); err != nil {
			return r, err
		}
	}
}
