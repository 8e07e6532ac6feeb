package sjc

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// predictSession is a party's session of sjc-predict.
type predictSession struct {
	s      *session // the graph, the participant and the protocol helpers
	model  *ModelPart
	target *predictTarget // the target table's party's: how to write its rows' predictions
	err    error
}

// predictTarget is what the target table's party needs, after the
// classification of its table's keys, to read the table again and write
// each row's prediction.
type predictTarget struct {
	ts     job.TableSpec
	schema map[string]table.Kind
	router *router
	keys   *routed
}

// Open reads the party's tables and its part of the model.
func (PredictKind) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	g, prm, err := parsePredict(p.Spec())
	if err != nil {
		return nil, err
	}
	mode, _ := psiMode(p.Spec(), prm.PSI) // checked by parsePredict
	ps := &predictSession{s: newSession(p, g, Params{}, mode, 0)}
	if len(ps.s.own) > 0 {
		ps.err = ps.open(ctx, prm.Model)
	}
	return ps, nil
}

func (ps *predictSession) open(ctx context.Context, model string) error {
	s := ps.s
	b, err := s.p.Secrets().ReadSecret(ModelSecret(model))
	if err != nil {
		return fmt.Errorf("no part of model %s: %w", model, err)
	}
	var mp ModelPart
	if err := json.Unmarshal(b, &mp); err != nil {
		// json's syntax errors quote the file, which holds predicates.
		return &reworded{msg: fmt.Sprintf("its part of model %s is not a model part", model), cause: err}
	}
	if mp.Job != model || len(mp.Labels) == 0 {
		return fmt.Errorf("model %s: the kept part is for job %q", model, mp.Job)
	}
	if err := checkSkeleton(s.g, mp.Nodes, len(mp.Labels)); err != nil {
		return fmt.Errorf("its part of model %s: %w", model, err)
	}
	ps.model = &mp
	for _, i := range s.own {
		if err := ps.openTable(ctx, i); err != nil {
			return err
		}
	}
	return ps.checkSplits()
}

// openTable streams the party's table i once (table.Scan) and keeps one
// row per key of its router, weighted by how many rows have it: memory is
// bounded by the join values and the model, not by the table. The target
// table (read without its class: new data need not have it) keeps its
// keys' numbers for writePredictions.
func (ps *predictSession) openTable(ctx context.Context, i int) error {
	s := ps.s
	name := s.g.Tables[i].Name
	spec := s.p.Spec()
	party, _ := spec.Party(s.p.Self())
	at := slices.IndexFunc(party.Tables, func(t job.TableSpec) bool { return t.Name == name })
	if at < 0 {
		return fmt.Errorf("party %s has no table %q", s.p.Self(), name)
	}
	schema, err := spec.TableSchema(name)
	if err != nil {
		return err
	}
	if schema == nil {
		return fmt.Errorf("%w: table %q has no schema", ErrData, name)
	}
	if i == 0 {
		delete(schema, s.g.Class) // new data need not have the class
	}
	r := newRouter(s.g, i, schema, ps.model.Splits)
	if len(r.cols) == 0 {
		return fmt.Errorf("%w: table %q has no column to read but the class", ErrData, name)
	}
	keys, err := scanRouted(ctx, s.p, party.Tables[at], schema, r)
	if err != nil {
		return err
	}
	t := keys.t
	only := map[string]bool{}
	for _, c := range r.cols {
		only[c] = true
	}
	if i == 0 {
		t, only[s.g.Class] = t.WithClass(s.g.Class, predictLabel), true
		ps.target = &predictTarget{ts: party.Tables[at], schema: schema, router: r, keys: keys}
	}
	base, err := newLocalOver(s.g, name, t, keys.counts, Params{}, only)
	if err == nil {
		s.locals[i], err = base.withLabels([]string{predictLabel})
	}
	s.tables[name] = t
	return err
}

// checkSplits checks, before anything is sent, that the party's tables
// can evaluate every predicate of its model part: a new spec may leave a
// predicate's column out of the schema, or give it another kind. The
// error names the node and table, not the predicate.
func (ps *predictSession) checkSplits() error {
	s := ps.s
	for _, m := range ps.model.Splits {
		i := s.g.Index(m.Table)
		if i < 0 || !s.owns(i) {
			return fmt.Errorf("%w: model %s splits node %d on a table this party does not hold", ErrData, ps.model.Job, m.Node)
		}
		if _, err := s.locals[i].splitColumn(*m.split(s.p.Self())); err != nil {
			return fmt.Errorf("model %s, node %d: %w", ps.model.Job, m.Node, err)
		}
	}
	return nil
}

// Close drops the tables.
func (ps *predictSession) Close() { ps.s.Close() }

// Step runs one step, once it has checked that the step is the one the
// log determines: load first, then classify over the committed skeleton,
// once each.
func (ps *predictSession) Step(ctx context.Context, step job.Step) ([]byte, error) {
	s := ps.s
	hist := s.p.History()
	switch {
	case step.Phase == predictLoadRound.Phase && step.Round == 0 && len(hist) == 0:
		return predictLoadRound.Serve(step, func(struct{}) (predictLoadOutput, error) {
			if ps.err != nil || ps.model == nil {
				return predictLoadOutput{}, ps.err
			}
			return predictLoadOutput{Labels: ps.model.Labels, Nodes: ps.model.Nodes}, nil
		})
	case step.Phase == classifyRound.Phase && step.Round == 0 && len(hist) == 1:
		d, err := predictLoadRound.Decision(hist[0])
		if err != nil {
			return nil, s.refuse(step, "%v", err)
		}
		return classifyRound.Serve(step, func(struct{}) (classifyOutput, error) { return ps.classify(ctx, step, d) })
	}
	due := []string{"load round 0 next", "classify round 0 next", "no further step"}[min(len(hist), 2)]
	return nil, s.refuse(step, "the log determines %s", due)
}

// classify routes the new join rows down the committed skeleton, which
// must be the party's model part's: PSI per edge, class propagation
// counting join rows (one class), split propagation with the party's own
// predicates. The target table's party counts the join rows reaching each
// leaf, per row, and keeps the per-row predictions.
func (ps *predictSession) classify(ctx context.Context, step job.Step, d predictLoadDecision) (classifyOutput, error) {
	s := ps.s
	if len(s.own) == 0 {
		return classifyOutput{}, nil
	}
	if !slices.Equal(d.Nodes, ps.model.Nodes) || !slices.Equal(d.Labels, ps.model.Labels) {
		return classifyOutput{}, s.refuse(step, "the committed skeleton is not the party's model part's")
	}
	won := map[int32]*tree.Split{}
	for _, m := range ps.model.Splits {
		won[m.Node] = m.split(s.p.Self())
	}
	shared, err := s.intersect(ctx, step, "psi", s.locals)
	if err != nil {
		return classifyOutput{}, err
	}
	parts := make([]Part, len(s.g.Tables))
	for _, i := range s.own {
		parts[i] = s.locals[i].Initial()
	}
	if err := s.classPropagate(ctx, step, "class", s.locals, shared, parts); err != nil {
		return classifyOutput{}, err
	}
	target := s.owns(0)
	nl := len(d.Labels)
	var perRow []uint64 // target: join rows per (key, label)
	if target {
		perRow = make([]uint64, s.tables[s.g.Target()].NumRows()*nl)
	}
	out := classifyOutput{Target: target, Counts: make([]uint64, nl)}
	at := map[int32][]Part{d.Nodes[0].ID: parts}
	for _, n := range d.Nodes {
		here, ok := at[n.ID]
		if !ok { // checkSkeleton at open makes this unreachable
			return classifyOutput{}, fmt.Errorf("sjc-predict: model node %d is not reached", n.ID)
		}
		delete(at, n.ID)
		if n.Table != "" {
			left, right, err := s.splitNode(ctx, step, fmt.Sprintf("split/%d", n.ID), s.locals, shared, here, s.g.Index(n.Table), won[n.ID])
			if err != nil {
				return classifyOutput{}, err
			}
			at[n.Left], at[n.Right] = left, right
			continue
		}
		if target {
			for k, r := range here[0].Rows {
				perRow[int(r)*nl+n.Label] += here[0].Cls[k]
				out.Counts[n.Label] += here[0].Cls[k]
			}
		}
	}
	if !target {
		return out, nil
	}
	if err := ps.writePredictions(ctx, d.Labels, perRow); err != nil {
		return classifyOutput{}, fmt.Errorf("party %s: keep the predictions: %w", s.p.Self(), err)
	}
	return out, nil
}
