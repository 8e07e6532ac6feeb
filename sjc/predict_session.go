package sjc

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/tree"
)

// predictSession is a party's session of sjc-predict.
type predictSession struct {
	s     *session // the graph, the participant and the protocol helpers
	model *ModelPart
	err   error
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
		name := s.g.Tables[i].Name
		var drop []string
		if i == 0 {
			drop = []string{s.g.Class} // new data need not have the class
		}
		t, err := job.OpenOwnTable(ctx, s.p, name, drop...)
		if err != nil {
			return err
		}
		if i == 0 {
			t = t.WithClass(s.g.Class, predictLabel)
		}
		if s.locals[i], err = NewLocal(s.g, name, t, []string{predictLabel}, Params{}); err != nil {
			return err
		}
		s.tables[name] = t
	}
	return ps.checkSplits()
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
	var perRow []uint64 // target: join rows per (row, label)
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
	b, err := predictionsCSV(d.Labels, perRow)
	if err != nil {
		return classifyOutput{}, err
	}
	if err := s.p.Secrets().WriteSecret(PredictionsSecret(s.p.JobID()), b); err != nil {
		return classifyOutput{}, fmt.Errorf("party %s: keep the predictions: %w", s.p.Self(), err)
	}
	return out, nil
}

// predictionsCSV writes one line per target row (in file order, numbered
// from 1): its join rows per predicted label and the label most of them
// get (ties to the smallest; empty when the row joins nothing).
func predictionsCSV(labels []string, perRow []uint64) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	nl := len(labels)
	if err := w.Write(append(append([]string{"row"}, labels...), "predicted")); err != nil {
		return nil, err
	}
	for r := 0; r < len(perRow)/nl; r++ {
		rec := []string{strconv.Itoa(r + 1)}
		c := perRow[r*nl : (r+1)*nl]
		for _, x := range c {
			rec = append(rec, strconv.FormatUint(x, 10))
		}
		pred := ""
		if slices.Max(c) > 0 {
			pred = labels[tree.Majority(c)]
		}
		if err := w.Write(append(rec, pred)); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}
