package boost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/joinprop"
)

// ErrHolder: the class holder's report of a level is missing or does not
// fit the level.
var ErrHolder = errors.New("boost: the class holder's report does not fit")

// Coordinate drives the job: load, psi, one level step per tree level
// until params.trees trees are grown, finish. Every step is the one the
// committed decisions determine (levelPlan): a new leader replays them
// and resumes at the first unfinished step.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	g, p, err := parseSpec(c.Spec())
	if err != nil {
		return nil, err
	}
	parties := c.Spec().PartyNames()
	call := func(round int) job.Call[struct{}] {
		return job.Call[struct{}]{Round: round, Parties: parties, TimeoutMS: p.TimeoutMS}
	}
	load, err := loadRound.Run(ctx, c, call(0), func(o *job.Outcome[loadOutput]) (loadDecision, error) {
		if err := o.Err(); err != nil {
			return loadDecision{}, err
		}
		r, ok := o.Results[g.Tables[0].Party]
		if !ok || !r.Holder {
			return loadDecision{}, fmt.Errorf("%w: no load report from party %s", ErrHolder, g.Tables[0].Party)
		}
		b, err := chooseBackend(p.Backend, g, o.Results, parties)
		if err != nil || b != BackendLattice {
			return loadDecision{Positive: r.Positive, Backend: b}, err
		}
		bins, err := layoutBins(g, p, o.Results)
		return loadDecision{Positive: r.Positive, Backend: b, Bins: bins}, err
	})
	if err != nil {
		return nil, err
	}
	if _, err := psiRound.Run(ctx, c, call(0), func(o *job.Outcome[struct{}]) (struct{}, error) { return struct{}{}, o.Err() }); err != nil {
		return nil, err
	}
	var lp levelPlan
	splits := 0
	for lp.Tree < p.Trees {
		if lp.Retries > maxRetries {
			return nil, fmt.Errorf("tree %d level %d: parties silent or restarted in %d attempts", lp.Tree, lp.Depth, lp.Retries)
		}
		a := levelArgs{Tree: lp.Tree, Depth: lp.Depth}
		done, err := levelRound.Run(ctx, c, job.Call[levelArgs]{Round: lp.Levels, Parties: parties, Args: a, TimeoutMS: p.TimeoutMS},
			func(o *job.Outcome[levelOutput]) (levelDecision, error) {
				return decideLevel(o, g.Tables[0].Party, len(g.Tables))
			})
		if err != nil {
			return nil, err
		}
		for _, w := range done.Decision.Winners {
			if w >= 0 {
				splits++
			}
		}
		lp.next(done.Decision)
		c.Progress(levelRound.Phase, lp.Tree, p.Trees)
	}
	fin, err := finishRound.Run(ctx, c, call(0), func(o *job.Outcome[finishOutput]) (finishDecision, error) {
		return decideFinish(o, g.Tables[0].Party, p.Release, len(c.Spec().Test) > 0)
	})
	if err != nil {
		return nil, err
	}
	res := job.Result{"trees": p.Trees, "levels": lp.Levels, "splits": splits, "model_secret": ModelSecret(c.JobID())}
	if load.Decision.Positive != "" {
		res["positive_class"] = load.Decision.Positive
	}
	if fin.Decision.Model != nil {
		res["model"] = json.RawMessage(fin.Decision.Model)
	}
	if fin.Decision.Test != nil {
		res["test"] = fin.Decision.Test
	}
	return res, nil
}

// chooseBackend is the job's backend from params.backend and the load
// reports: lattice when asked for (every party must hold the lattice key)
// or, under auto, for a star whose every party holds it; else Paillier.
func chooseBackend(want string, g *joinprop.Graph, rs map[string]loadOutput, parties []string) (string, error) {
	if want != BackendLattice && want != BackendAuto {
		return BackendPaillier, nil
	}
	for _, q := range parties {
		if rs[q].Lattice {
			continue
		}
		if want == BackendLattice {
			return "", fmt.Errorf("params.backend lattice: party %s holds no lattice key of the job's parties (the keygen job with params.scheme bgv makes one)", q)
		}
		return BackendPaillier, nil
	}
	if CheckStar(g) != nil {
		return BackendPaillier, nil
	}
	return BackendLattice, nil
}

// maxRetries bounds the re-runs in a row of one level after silent or
// restarted parties.
const maxRetries = 3

// decideLevel commits the class holder's winners: one per open node, each
// a table of the graph or -1; a level a party was silent in, restarted in
// or missed a message of runs again (Retry).
func decideLevel(o *job.Outcome[levelOutput], holder string, tables int) (levelDecision, error) {
	if len(o.Failed) > 0 && curable(o) {
		return levelDecision{Retry: true}, nil
	}
	if err := o.Err(); err != nil {
		return levelDecision{}, err
	}
	r, ok := o.Results[holder]
	if !ok || !r.Holder {
		return levelDecision{}, fmt.Errorf("%w: no level report from party %s", ErrHolder, holder)
	}
	for _, w := range r.Winners {
		if w < -1 || w >= tables {
			return levelDecision{}, fmt.Errorf("%w: a winner names no table of the graph", ErrHolder)
		}
	}
	if r.Closed != (len(r.Winners) == 0) {
		return levelDecision{}, fmt.Errorf("%w: a closed level with winners, or an open one without", ErrHolder)
	}
	return levelDecision{Winners: r.Winners, Closed: r.Closed}, nil
}

// curable reports whether every failure of a step is a silence (a
// restart included), a wait for a message that did not come or a message
// that was not delivered, which a re-run may cure; a party's own error is
// not.
func curable[O any](o *job.Outcome[O]) bool { return o.Curable(errNoMessage, errNotDelivered) }

// decideFinish takes the class holder's test score (tested only) and
// assembles the released model from every party's kept part (release
// only).
func decideFinish(o *job.Outcome[finishOutput], holder string, release, tested bool) (finishDecision, error) {
	if err := o.Err(); err != nil {
		return finishDecision{}, err
	}
	var score *TestScore
	if tested {
		r, ok := o.Results[holder]
		if !ok || r.Test == nil {
			return finishDecision{}, fmt.Errorf("%w: no test score from party %s", ErrHolder, holder)
		}
		score = r.Test
	}
	if !release {
		return finishDecision{Test: score}, nil
	}
	var parts []*kept
	for _, r := range o.Results {
		if r.Kept != nil {
			parts = append(parts, r.Kept)
		}
	}
	m, err := assembleModel(parts)
	if err != nil {
		return finishDecision{}, err
	}
	b, err := m.JSON()
	if err != nil {
		return finishDecision{}, err
	}
	return finishDecision{Model: b, Test: score}, nil
}
