package bicluster

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/wire"
)

// Kind is the distributed Phoenix job, `kind: bicluster` (see the package
// doc's "Distributed job" section for the protocol and leakage profile).
type Kind struct{}

// UsesThresholdKey: every round is a secure aggregation under the
// consortium's threshold key (job.KeyUser).
func (Kind) UsesThresholdKey() bool { return true }

// Validate checks the params.
func (Kind) Validate(spec *job.Spec) error {
	_, err := parseJobParams(spec)
	return err
}

// OutputDisclosure: a step's output to the coordinator is the
// aggregation's public outcome, or public metadata (column names, local
// biclusters' column sets and sizes, the pair test's bits, the party's
// rows of the global biclusters), all of which the coordinator commits as
// public.
func (Kind) OutputDisclosure(job.Step) wire.Disclosure { return wire.DisclosePublicResult }

// Coordinate drives the job: the schema check, the crossing-minimisation
// iterations, the local biclusters' public descriptions, the merge test's
// rounds, the merge and the rows. It depends only on the spec, the seed
// and committed decisions.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	co, err := newCoordination(c)
	if err != nil {
		return nil, err
	}
	lp, err := co.localPhases(ctx)
	if err != nil {
		return nil, err
	}
	groups, err := co.mergeTest(ctx, lp.locals)
	if err != nil {
		return nil, err
	}
	globals, err := co.merge(ctx, groups, lp.locals, len(lp.names))
	if err != nil {
		return nil, err
	}
	rows, err := co.rows(ctx, globals)
	if err != nil {
		return nil, err
	}
	res := buildResult(lp.names, lp.order, lp.iters, globals, rows, co.cfg.p.MinRows, co.excluded)
	res["mode"] = string(co.cfg.p.Mode)
	return res, nil
}

// coordination is one run of Coordinate: each method runs one phase.
type coordination struct {
	c        job.Coordinator
	cfg      *jobConfig
	parties  []string
	excluded map[string]string // parties whose decryption shares were excluded, and why
}

func newCoordination(c job.Coordinator) (*coordination, error) {
	cfg, err := parseJobParams(c.Spec())
	if err != nil {
		return nil, err
	}
	return &coordination{c: c, cfg: cfg, parties: c.Spec().PartyNames(), excluded: map[string]string{}}, nil
}

// beforeMerge is what the phases before the merge decide: the column names,
// the final column order after iters iterations, and every party's local
// biclusters' public descriptions.
type beforeMerge struct {
	names  []string
	order  []int
	iters  int
	locals [][]LocalDesc
}

// localPhases runs the schema step, the iterations and the locals step.
func (co *coordination) localPhases(ctx context.Context) (*beforeMerge, error) {
	names, err := co.schema(ctx)
	if err != nil {
		return nil, err
	}
	order, iters, err := co.iterate(ctx, len(names))
	if err != nil {
		return nil, err
	}
	locals, err := co.locals(ctx, order, len(names))
	if err != nil {
		return nil, err
	}
	return &beforeMerge{names: names, order: order, iters: iters, locals: locals}, nil
}

// call is a step of every party with the job's timeout.
func call[A any](co *coordination, round int, args A) job.Call[A] {
	return job.Call[A]{Round: round, Args: args, TimeoutMS: co.cfg.timeoutMS}
}

func (co *coordination) exclude(src map[string]string) {
	for name, why := range src {
		co.excluded[name] = "decryption share excluded: " + why
	}
}

// schema is every party's numeric columns, the same everywhere.
func (co *coordination) schema(ctx context.Context) ([]string, error) {
	done, err := schemaRound.Run(ctx, co.c, call(co, 0, struct{}{}), decideSchema)
	if err != nil {
		return nil, err
	}
	return done.Decision.Columns, nil
}

// jointSeed is the draw of the seed of the initial column order: one,
// round 0, over every party (job.JointSeed). The leader's job seed would
// let a coordinator choose the order every party starts from, and with it
// the local biclusters the job finds.
func jointSeed(jobID string, spec *job.Spec) job.JointSeed {
	return job.NewJointSeed(jobID, 0, spec.PartyNames())
}

// iterate draws the joint seed, then runs the crossing minimisation (Ahmad
// and Khokhar, "Phoenix", §3.5) from the order it gives: one secure
// aggregation per iteration, until the column order stays or MaxIter. It
// returns the final order and how many iterations ran.
func (co *coordination) iterate(ctx context.Context, cols int) ([]int, int, error) {
	seed, err := jointSeed(co.c.JobID(), co.c.Spec()).Draw(ctx, co.c, co.cfg.timeoutMS)
	if err != nil {
		return nil, 0, fmt.Errorf("bicluster: %w", err)
	}
	order := InitialColumns(seed, cols)
	var den []float64 // ΣDen, aggregated in the first iteration only
	for iter := 1; ; iter++ {
		prev := order
		done, err := iterateRound.Run(ctx, co.c, call(co, iter-1, iterArgs{Order: order}), func(o *job.Outcome[aggOutput]) (iterDecision, error) {
			return decideIterate(o, prev, cols, den)
		})
		if err != nil {
			return nil, 0, err
		}
		d := done.Decision
		co.exclude(d.Excluded)
		if den == nil {
			den = d.Den
		}
		order = d.Order
		co.c.Progress(iterateRound.Phase, iter, co.cfg.p.MaxIter)
		if Done(d.Changed, iter, co.cfg.p.MaxIter) {
			return order, iter, nil
		}
	}
}

// locals are the parties' local biclusters' public column sets and sizes.
func (co *coordination) locals(ctx context.Context, order []int, cols int) ([][]LocalDesc, error) {
	done, err := localsRound.Run(ctx, co.c, call(co, 0, iterArgs{Order: order}), func(o *job.Outcome[localsOutput]) (localsDecision, error) {
		return decideLocals(o, co.parties, cols)
	})
	if err != nil {
		return nil, err
	}
	return done.Decision.Locals, nil
}

// mergeTest runs the pairwise test on encrypted representatives in at
// most two rounds (testRound) and returns the groups its bits join that
// hold min_rows rows.
func (co *coordination) mergeTest(ctx context.Context, locals [][]LocalDesc) ([][]Ref, error) {
	pairs := candidatePairs(locals)
	var tested []pairDesc
	similar := []bool{}
	for round := 0; ; round++ {
		next := testRound(locals, pairs, tested, similar, round)
		if len(next) == 0 {
			break
		}
		done, err := pairTestRound.Run(ctx, co.c, call(co, round, testArgs{Pairs: next}), func(o *job.Outcome[testOutput]) (testDecision, error) {
			return decideTest(o, len(next))
		})
		if err != nil {
			return nil, err
		}
		co.exclude(done.Decision.Excluded)
		tested = append(tested, next...)
		similar = append(similar, done.Decision.Similar...)
	}
	return keepGroups(joinPairs(locals, tested, similar), locals, co.cfg.keep()), nil
}

// merge aggregates the kept groups' sums on their published columns and
// returns the global biclusters.
func (co *coordination) merge(ctx context.Context, groups [][]Ref, locals [][]LocalDesc, cols int) ([]globalDesc, error) {
	_, slots := groupSlots(groups, locals)
	done, err := mergeRound.Run(ctx, co.c, call(co, 0, mergeArgs{Groups: groups}), func(o *job.Outcome[aggOutput]) (mergeDecision, error) {
		if slots == 0 {
			return mergeDecision{}, o.Err()
		}
		res, err := aggregated(o, slots)
		if err != nil {
			return mergeDecision{}, err
		}
		return mergeDecision{Sums: res.Sum, Excluded: res.Excluded}, nil
	})
	if err != nil {
		return nil, err
	}
	co.exclude(done.Decision.Excluded)
	return globalsOf(groups, locals, done.Decision.Sums, cols)
}

// rows are each party's rows of every global bicluster.
func (co *coordination) rows(ctx context.Context, globals []globalDesc) ([][]string, error) {
	done, err := rowsRound.Run(ctx, co.c, call(co, 0, rowsArgs{Globals: globals}), func(o *job.Outcome[rowsOutput]) (rowsDecision, error) {
		return decideRows(o, co.parties, len(globals))
	})
	if err != nil {
		return nil, err
	}
	return done.Decision.Rows, nil
}

// decideSchema commits the parties' column names when every party has the
// same in the same order, and otherwise fails naming the party and the
// first differing column.
func decideSchema(o *job.Outcome[schemaOutput]) (schemaDecision, error) {
	if err := o.Err(); err != nil {
		return schemaDecision{}, err
	}
	first := ""
	for _, name := range o.Step.Parties {
		out, ok := o.Results[name]
		switch {
		case !ok:
			return schemaDecision{}, fmt.Errorf("party %s reported no columns", name)
		case first == "":
			first = name
		default:
			if err := sameColumns(first, o.Results[first].Columns, name, out.Columns); err != nil {
				return schemaDecision{}, err
			}
		}
	}
	return schemaDecision{Columns: o.Results[first].Columns}, nil
}

// sameColumns names the first column where party b's table differs from a's.
func sameColumns(a string, ca []string, b string, cb []string) error {
	for j := range max(len(ca), len(cb)) {
		switch {
		case j >= len(ca):
			return fmt.Errorf("%w: party %s has column %q (position %d), party %s does not", ErrColumns, b, cb[j], j+1, a)
		case j >= len(cb):
			return fmt.Errorf("%w: party %s has column %q (position %d), party %s does not", ErrColumns, a, ca[j], j+1, b)
		case ca[j] != cb[j]:
			return fmt.Errorf("%w: party %s has column %q at position %d where party %s has %q", ErrColumns, b, cb[j], j+1, a, ca[j])
		}
	}
	return nil
}

// aggregated folds an aggregation step's outcomes (secureagg.Fold): the
// root's result of n values, or an error naming every party that kept
// the step from one, and why. The job never re-runs an aggregation over
// fewer parties: the two sums would give the others' contributions by
// subtraction.
func aggregated(o *job.Outcome[aggOutput], n int) (*secureagg.Result, error) {
	outcomes := map[string]*secureagg.Outcome{}
	for name, out := range o.Results {
		if out.Outcome == nil {
			return nil, fmt.Errorf("party %s reported no aggregation", name)
		}
		outcomes[name] = out.Outcome
	}
	v, err := secureagg.Fold(o.Step, outcomes, o.Failed, o.Silent)
	if err != nil {
		return nil, err
	}
	root := secureagg.Root(o.Step)
	if v.Result != nil {
		if len(v.Result.Sum) != n {
			return nil, fmt.Errorf("the root %s returned %d sums, not %d", root, len(v.Result.Sum), n)
		}
		return v.Result, nil
	}
	why := maps.Clone(v.Missing)
	maps.Copy(why, v.Failed)
	if len(why) == 0 {
		return nil, fmt.Errorf("the root %s returned no aggregate of %d values", root, n)
	}
	return nil, fmt.Errorf("the aggregation failed: %s", job.PartyCauses(why))
}

// decideIterate reads the iteration's sums: Num and Den in the first
// iteration, Num alone in later ones, whose Den is the first's (a party's
// Den does not depend on the row order: Σ max(x, 0) per column, or its
// weight flags in MeanOfMeans), so it is aggregated, and revealed, once.
func decideIterate(o *job.Outcome[aggOutput], order []int, cols int, den []float64) (iterDecision, error) {
	n := 2 * cols
	if den != nil {
		n = cols
	}
	res, err := aggregated(o, n)
	if err != nil {
		return iterDecision{}, err
	}
	sum := Contribution{Num: res.Sum, Den: den}
	if den == nil {
		if sum, err = ContributionFromVector(res.Sum, cols); err != nil {
			return iterDecision{}, err
		}
	}
	next, changed, err := UpdateColumns(sum, order)
	if err != nil {
		return iterDecision{}, err
	}
	d := iterDecision{Num: sum.Num, Order: next, Changed: changed, Excluded: res.Excluded}
	if den == nil {
		d.Den = sum.Den
	}
	return d, nil
}

func decideLocals(o *job.Outcome[localsOutput], parties []string, cols int) (localsDecision, error) {
	if err := o.Err(); err != nil {
		return localsDecision{}, err
	}
	d := localsDecision{Locals: make([][]LocalDesc, len(parties))}
	for i, name := range parties {
		out, ok := o.Results[name]
		if !ok {
			return localsDecision{}, fmt.Errorf("party %s reported no local biclusters", name)
		}
		for k, l := range out.Locals {
			if l.Count < 1 || len(l.Cols) == 0 || !slices.IsSorted(l.Cols) || l.Cols[0] < 0 || l.Cols[len(l.Cols)-1] >= cols {
				return localsDecision{}, fmt.Errorf("party %s: local bicluster %d is malformed", name, k)
			}
		}
		d.Locals[i] = out.Locals
	}
	return d, nil
}

// decideTest reads the pair test's signs from the root's output.
func decideTest(o *job.Outcome[testOutput], n int) (testDecision, error) {
	if err := o.Err(); err != nil {
		return testDecision{}, err
	}
	root := secureagg.Root(o.Step)
	out, ok := o.Results[root]
	if !ok || len(out.Similar) != n {
		return testDecision{}, fmt.Errorf("the root %s returned no signs of %d pair tests", root, n)
	}
	return testDecision{Similar: out.Similar, Excluded: out.Excluded}, nil
}

func decideRows(o *job.Outcome[rowsOutput], parties []string, n int) (rowsDecision, error) {
	if err := o.Err(); err != nil {
		return rowsDecision{}, err
	}
	d := rowsDecision{Rows: make([][]string, n)}
	for _, name := range parties {
		out, ok := o.Results[name]
		if !ok || len(out.Rows) != n {
			return rowsDecision{}, fmt.Errorf("party %s: rows of %d biclusters, want %d", name, len(out.Rows), n)
		}
		for k, ids := range out.Rows {
			for _, id := range ids {
				d.Rows[k] = append(d.Rows[k], name+":"+id)
			}
		}
	}
	return d, nil
}

// GlobalResult is one global bicluster in result.json.
type GlobalResult struct {
	Columns []string  `json:"columns"`
	Rows    []string  `json:"rows"`
	Means   []float64 `json:"means"` // the representative's mean of each of Columns
}

func buildResult(names []string, order []int, iters int, globals []globalDesc, rows [][]string, minRows int, excluded map[string]string) job.Result {
	out := []GlobalResult{}
	for k, g := range globals {
		if len(rows[k]) < minRows || len(g.Cols) == 0 {
			continue
		}
		r := GlobalResult{Rows: rows[k]}
		for _, j := range g.Cols {
			r.Columns = append(r.Columns, names[j])
			r.Means = append(r.Means, g.Rep[j])
		}
		out = append(out, r)
	}
	order2 := make([]string, len(order))
	for i, j := range order {
		order2[i] = names[j]
	}
	res := job.Result{"biclusters": out, "iterations": iters, "column_order": order2}
	if len(excluded) > 0 {
		res["excluded"] = excluded
	}
	return res
}
