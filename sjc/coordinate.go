package sjc

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/tree"
)

// Coordinate drives the job: load (labels and schema checks), propagate
// (PSI per edge, class propagation, the root's counts), per tree level a
// choose step and a split step, and finish (each party keeps its
// predicates of the pruned skeleton; test accuracy). Every step is the one
// its growth, the fold of the committed decisions, determines: a new
// leader replays them and resumes at the first unfinished step.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	g, p, err := parseSpec(c.Spec())
	if err != nil {
		return nil, err
	}
	co := &coordinator{c: c, gr: newGrowth(g, p), parties: c.Spec().PartyNames(), tested: len(c.Spec().Test) > 0}
	for co.gr.phase != "" {
		if err := co.step(ctx); err != nil {
			return nil, err
		}
	}
	return co.result(), nil
}

// coordinator is one run of Coordinate.
type coordinator struct {
	c       job.Coordinator
	gr      *growth
	parties []string
	tested  bool
	test    finishDecision
}

// step runs the step the growth determines and folds its record.
func (co *coordinator) step(ctx context.Context) error {
	gr, g := co.gr, co.gr.g
	var rec *job.Record
	var err error
	switch gr.phase {
	case loadRound.Phase:
		rec, err = record(run(ctx, co, loadRound, struct{}{}, func(o *job.Outcome[loadOutput]) (loadDecision, error) { return decideLoad(o, g) }))
	case propagateRound.Phase:
		rec, err = record(run(ctx, co, propagateRound, struct{}{}, func(o *job.Outcome[countsOutput]) (propagateDecision, error) {
			return decidePropagate(o, g, len(gr.labels))
		}))
	case chooseRound.Phase:
		rec, err = record(run(ctx, co, chooseRound, gr.chooseArgs(), func(o *job.Outcome[offersOutput]) (chooseDecision, error) {
			if gr.p.HideGains {
				return decideChooseHidden(o, g, len(gr.open))
			}
			return decideChoose(o, g, len(gr.open))
		}))
	case splitRound.Phase:
		rec, err = record(run(ctx, co, splitRound, gr.splitArgs(), func(o *job.Outcome[countsOutput]) (splitDecision, error) {
			return decideSplit(o, gr.winners, len(gr.labels))
		}))
	case finishRound.Phase:
		var a finishArgs
		if a, err = gr.finishArgs(); err != nil {
			return err
		}
		var done *job.Done[finishDecision]
		if done, err = run(ctx, co, finishRound, a, func(o *job.Outcome[finishOutput]) (finishDecision, error) {
			return decideFinish(o, co.tested)
		}); err == nil {
			rec, co.test = done.Record, done.Decision
		}
	}
	if err != nil {
		return err
	}
	level := gr.level
	if err := gr.fold(rec); err != nil {
		return fmt.Errorf("sjc: fold the committed %s: %w", stepKey(rec.Step), err)
	}
	if gr.retries > maxRetries {
		return fmt.Errorf("tree level %d: parties silent in %d attempts", level, gr.retries)
	}
	if gr.level > level {
		co.c.Progress(splitRound.Phase, gr.level, gr.p.MaxDepth)
	}
	return nil
}

// run runs the next step of round r over every party.
func run[A, O, D any](ctx context.Context, co *coordinator, r job.Round[A, O, D], args A, decide func(*job.Outcome[O]) (D, error)) (*job.Done[D], error) {
	call := job.Call[A]{Round: co.gr.rounds[r.Phase], Parties: co.parties, Args: args, TimeoutMS: co.gr.p.TimeoutMS}
	return r.Run(ctx, co.c, call, decide)
}

// record is a finished step's record.
func record[D any](done *job.Done[D], err error) (*job.Record, error) {
	if err != nil {
		return nil, err
	}
	return done.Record, nil
}

// result is the job's public result: the labels, the pruned skeleton, its
// size and anonymity, the model's name and the test accuracy.
func (co *coordinator) result() job.Result {
	ft, _ := co.gr.final() // finish ran: it is anonymous
	n, leaves := ft.t.Size()
	res := job.Result{
		"labels":    co.gr.labels,
		"skeleton":  skeletonJSON(ft.t, ft.ids),
		"nodes":     n,
		"leaves":    leaves,
		"levels":    co.gr.level,
		"pruned":    ft.c45,
		"anonymity": anonymity(ft.t),
		"model":     ModelSecret(co.c.JobID()),
	}
	if p := co.gr.p; p.ReleaseK > 0 || p.ReleaseL >= 2 {
		rel := map[string]any{"k": p.ReleaseK, "pruned": ft.release}
		if p.ReleaseL >= 2 {
			rel["l"], rel["c"] = p.ReleaseL, p.ReleaseC
		}
		res["release"] = rel
	}
	if co.test.Tested {
		test := map[string]any{"rows": co.test.Total, "correct": co.test.Correct}
		if co.test.Total > 0 {
			test["accuracy"] = float64(co.test.Correct) / float64(co.test.Total)
		}
		res["test"] = test
	}
	return res
}

// anonymity measures the released tree's paths (tree.PathK,
// tree.DiversityC): k, and for l = 2 up to the number of labels the c of
// its (c, l)-diversity, null when no c makes it diverse.
func anonymity(t *tree.Tree) map[string]any {
	var div []map[string]any
	for l := 2; l <= len(t.Labels); l++ {
		var c any
		if x := t.DiversityC(l); !math.IsInf(x, 1) {
			c = x
		}
		div = append(div, map[string]any{"l": l, "c": c})
	}
	return map[string]any{"k": t.PathK(), "diversity": div}
}

// curable reports whether every failure of a step is a silence (a
// restart included), a wait for a message that did not come or a message
// that was not delivered, which a re-run may cure; a party's own error is
// not.
func curable[O any](o *job.Outcome[O]) bool { return o.Curable(errNoMessage, errNotDelivered) }

func decideLoad(o *job.Outcome[loadOutput], g *Graph) (loadDecision, error) {
	if err := o.Err(); err != nil {
		return loadDecision{}, err
	}
	target := g.Tables[0].Party
	d := loadDecision{Labels: o.Results[target].Labels}
	if len(d.Labels) == 0 || !slices.IsSorted(d.Labels) || len(slices.Compact(slices.Clone(d.Labels))) != len(d.Labels) {
		return loadDecision{}, fmt.Errorf("party %s: no usable class labels for table %q", target, g.Target())
	}
	return d, nil
}

func decidePropagate(o *job.Outcome[countsOutput], g *Graph, u int) (propagateDecision, error) {
	if err := o.Err(); err != nil {
		return propagateDecision{}, err
	}
	counts, err := agreedCounts(o, 1, u)
	if err != nil {
		return propagateDecision{}, err
	}
	var empty []string
	for _, name := range slices.Sorted(maps.Keys(o.Results)) {
		for _, e := range o.Results[name].EmptyEdges {
			if e >= 0 && e < len(g.Edges) && !slices.Contains(empty, g.EdgeName(e)) {
				empty = append(empty, g.EdgeName(e))
			}
		}
	}
	if len(empty) > 0 {
		return propagateDecision{}, fmt.Errorf("%w: edge %s: the tables have no join value in common", ErrEmptyJoin, strings.Join(empty, "; edge "))
	}
	var n uint64
	for _, x := range counts[0] {
		n += x
	}
	if n == 0 {
		return propagateDecision{}, fmt.Errorf("%w: no row of target table %q joins rows of every other table", ErrEmptyJoin, g.Target())
	}
	return propagateDecision{Counts: counts[0]}, nil
}

// agreedCounts checks that every party holding a table reported n class
// count vectors of u counts, all the same (every table sees the same join
// rows), and returns them.
func agreedCounts(o *job.Outcome[countsOutput], n, u int) ([][]uint64, error) {
	var counts [][]uint64
	first := ""
	for _, name := range slices.Sorted(maps.Keys(o.Results)) {
		out := o.Results[name]
		if !out.Tables {
			continue
		}
		if len(out.Counts) != n {
			return nil, fmt.Errorf("party %s: %d class-count vectors, want %d", name, len(out.Counts), n)
		}
		for _, c := range out.Counts {
			if len(c) != u {
				return nil, fmt.Errorf("party %s: class counts of length %d, want %d", name, len(c), u)
			}
		}
		if first == "" {
			first, counts = name, out.Counts
			continue
		}
		for i := range counts {
			if !slices.Equal(counts[i], out.Counts[i]) {
				return nil, fmt.Errorf("parties %s and %s disagree on the class counts of a node", first, name)
			}
		}
	}
	if first == "" {
		return nil, fmt.Errorf("no party holds a table of the join")
	}
	return counts, nil
}

// decideChoose picks each open node's winner from every party's offers
// (Choose), or a leaf when the best gain is <= Eps; a silent party makes
// the level's choice run again.
func decideChoose(o *job.Outcome[offersOutput], g *Graph, nopen int) (chooseDecision, error) {
	if len(o.Failed) > 0 {
		if curable(o) {
			return chooseDecision{Retry: true}, nil
		}
		return chooseDecision{}, o.Err()
	}
	offers := make([][]Offer, nopen)
	for i := range offers {
		offers[i] = make([]Offer, len(g.Tables))
	}
	for _, name := range slices.Sorted(maps.Keys(o.Results)) {
		if err := mergeOffers(g, name, o.Results[name], offers); err != nil {
			return chooseDecision{}, err
		}
	}
	d := chooseDecision{Winners: make([]winner, nopen)}
	for i := range offers {
		d.Winners[i] = winner{Table: -1}
		if t, _, gain, ok := Choose(g, offers[i]); ok && gain > Eps {
			d.Winners[i] = winner{Table: t, Gain: gain}
		}
	}
	return d, nil
}

// mergeOffers puts party name's offers into offers (per open node, per
// table), refusing offers for another party's table or an impossible
// gain.
func mergeOffers(g *Graph, name string, o offersOutput, offers [][]Offer) error {
	if len(o.Nodes) != len(offers) {
		return fmt.Errorf("party %s: offers for %d nodes, want %d", name, len(o.Nodes), len(offers))
	}
	for i, per := range o.Nodes {
		if len(per) != len(g.Tables) {
			return fmt.Errorf("party %s: offers for %d tables, want %d", name, len(per), len(g.Tables))
		}
		for t, of := range per {
			if len(of.Gains) == 0 {
				continue
			}
			if g.Tables[t].Party != name {
				return fmt.Errorf("party %s: offers for table %q, which party %s holds", name, g.Tables[t].Name, g.Tables[t].Party)
			}
			for _, x := range of.Gains {
				if !(x >= -1 && x <= 64) { // NaN or impossible (rounding may make a zero gain slightly negative)
					return fmt.Errorf("party %s: table %q offers a gain outside [-1, 64]", name, g.Tables[t].Name)
				}
			}
			offers[i][t] = of
		}
	}
	return nil
}

// decideSplit checks the children's counts every party reports: two per
// split node, the same everywhere; a silent party, or one that missed a
// message, makes the split run again.
func decideSplit(o *job.Outcome[countsOutput], winners []winner, u int) (splitDecision, error) {
	if len(o.Failed) > 0 {
		if curable(o) {
			return splitDecision{Retry: true}, nil
		}
		return splitDecision{}, o.Err()
	}
	n := 0
	for _, w := range winners {
		if w.Table >= 0 {
			n += 2
		}
	}
	counts, err := agreedCounts(o, n, u)
	if err != nil {
		return splitDecision{}, err
	}
	return splitDecision{Children: counts}, nil
}

func decideFinish(o *job.Outcome[finishOutput], tested bool) (finishDecision, error) {
	if err := o.Err(); err != nil {
		return finishDecision{}, err
	}
	d := finishDecision{Tested: tested}
	for _, name := range slices.Sorted(maps.Keys(o.Results)) {
		if out := o.Results[name]; out.Target {
			if out.Correct > out.Total {
				return finishDecision{}, fmt.Errorf("party %s: %d correct of %d test join rows", name, out.Correct, out.Total)
			}
			d.Correct, d.Total = out.Correct, out.Total
		}
	}
	return d, nil
}
