package sjc

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
	"github.com/cohortdm/cohort/sjc/tree"
	"github.com/cohortdm/cohort/table"
)

// PredictKind is `kind: sjc-predict`: it classifies the join rows of new
// tables with a model an sjc job trained earlier, each party answering for
// its own predicates. The spec is written like the training spec (same
// tables, schema and join; the target table's class column may be absent
// from its file) with params {model: JOBID}. Every party must hold its part
// of that model (ModelSecret(JOBID)), kept by the training job.
//
// Steps: "load" (each party reads its tables and its model part and
// reports the model's public skeleton, which must be the same everywhere)
// and "classify" (PSI per edge, class propagation counting join rows,
// split propagation down the skeleton with each party's own predicates;
// the target table's party counts, per row and per predicted label, the
// join rows reaching each leaf). The result holds the number of join rows
// predicted per label; the target's party keeps the per-row predictions
// (PredictionsSecret). Leakage: the training job's profile for class
// propagation and split summaries (over the new tables, with one class),
// the skeleton (already public), and the predicted label counts.
type PredictKind struct{}

// Phases of sjc-predict.
const (
	phasePredictLoad = "load"
	phaseClassify    = "classify"
)

// PredictionsSecret is where the target table's party keeps the per-row
// predictions of an sjc-predict job.
func PredictionsSecret(id string) string { return "predictions/" + id + "/sjc.csv" }

// predictLabel is the one class of prediction: every join row counts once.
const predictLabel = "join-rows"

// PredictParams are sjc-predict's params.
type PredictParams struct {
	// Model is the job id of the sjc job that trained the model.
	Model string `yaml:"model"`
	// PSI is the edges' PSI protocol, as sjc's params.psi (default auto).
	PSI string `yaml:"psi"`
	// TimeoutMS is each step's timeout (the node's default when 0).
	TimeoutMS int64 `yaml:"timeout_ms"`
}

func parsePredict(spec *job.Spec) (*Graph, PredictParams, error) {
	var p PredictParams
	if err := spec.DecodeParams(&p); err != nil {
		return nil, p, err
	}
	if p.Model == "" || !filepath.IsLocal(p.Model) || strings.ContainsAny(p.Model, `/\`) {
		return nil, p, spec.Errorf("params.model", "must name the job id of a trained sjc model, not %q", p.Model)
	}
	if p.TimeoutMS < 0 || p.TimeoutMS > maxTimeout.Milliseconds() {
		return nil, p, spec.Errorf("params.timeout_ms", "must be in [0, %d] (a day), not %d", maxTimeout.Milliseconds(), p.TimeoutMS)
	}
	if len(spec.Test) > 0 {
		return nil, p, spec.Errorf("test", "sjc-predict takes no test set")
	}
	if _, err := psiMode(spec, p.PSI); err != nil {
		return nil, p, err
	}
	g, err := NewGraph(spec)
	if err != nil {
		return nil, p, fmt.Errorf("%w: %s: %w", job.ErrSpec, spec.Source, err)
	}
	return g, p, nil
}

// Validate checks the join graph and params.
func (PredictKind) Validate(spec *job.Spec) error {
	_, _, err := parsePredict(spec)
	return err
}

// OutputDisclosure: the outputs are the public skeleton and the counts
// of predicted join rows per label.
func (PredictKind) OutputDisclosure(job.Step) protocol.Disclosure {
	return protocol.DisclosePublicResult
}

type predictLoadOutput struct {
	Labels   []string    `msgpack:"labels"`
	Nodes    []ModelNode `msgpack:"nodes"`
	Unusable string      `msgpack:"unusable"`
}

type predictLoadDecision struct {
	Labels []string    `msgpack:"labels"`
	Nodes  []ModelNode `msgpack:"nodes"`
	Error  string      `msgpack:"error"`
}

type classifyOutput struct {
	Target bool     `msgpack:"target"`
	Counts []uint64 `msgpack:"counts"` // join rows per predicted label
}

type classifyDecision struct {
	Counts []uint64 `msgpack:"counts"`
	Error  string   `msgpack:"error"`
}

// Coordinate runs load and classify.
func (PredictKind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	spec := c.Spec()
	g, p, err := parsePredict(spec)
	if err != nil {
		return nil, err
	}
	parties := spec.PartyNames()
	empty, _ := encode(struct{}{})
	st := job.Step{Phase: phasePredictLoad, Parties: parties, Args: empty, TimeoutMS: p.TimeoutMS}
	ld, _, err := job.Run(ctx, c, st, func(outs *job.Outputs) (predictLoadDecision, error) {
		return decidePredictLoad(outs, g, parties), nil
	})
	if err != nil {
		return nil, err
	}
	if ld.Error != "" {
		return nil, errors.New(ld.Error)
	}
	st = job.Step{Phase: phaseClassify, Parties: parties, Args: empty, TimeoutMS: p.TimeoutMS}
	cd, _, err := job.Run(ctx, c, st, func(outs *job.Outputs) (classifyDecision, error) {
		if msg, _ := failures(outs, parties); msg != "" {
			return classifyDecision{Error: msg}, nil
		}
		for _, name := range parties {
			var o classifyOutput
			if err := decode(outs.Results[name], &o); err != nil {
				return classifyDecision{Error: fmt.Sprintf("party %s: %v", name, err)}, nil
			}
			if o.Target {
				if len(o.Counts) != len(ld.Labels) {
					return classifyDecision{Error: fmt.Sprintf("party %s: %d counts for %d labels", name, len(o.Counts), len(ld.Labels))}, nil
				}
				return classifyDecision{Counts: o.Counts}, nil
			}
		}
		return classifyDecision{Error: "the target table's party reported no counts"}, nil
	})
	if err != nil {
		return nil, err
	}
	if cd.Error != "" {
		return nil, errors.New(cd.Error)
	}
	pred := map[string]uint64{}
	var rows uint64
	for i, l := range ld.Labels {
		pred[l] = cd.Counts[i]
		rows += cd.Counts[i]
	}
	return job.Result{"model": p.Model, "labels": ld.Labels, "predicted": pred, "rows": rows,
		"predictions": PredictionsSecret(c.JobID()), "predictions_party": g.Tables[0].Party}, nil
}

func decidePredictLoad(outs *job.Outputs, g *Graph, parties []string) predictLoadDecision {
	if msg, _ := failures(outs, parties); msg != "" {
		return predictLoadDecision{Error: msg}
	}
	var d predictLoadDecision
	first := ""
	for _, name := range parties {
		var o predictLoadOutput
		if err := decode(outs.Results[name], &o); err != nil {
			return predictLoadDecision{Error: fmt.Sprintf("party %s: %v", name, err)}
		}
		if o.Unusable != "" {
			return predictLoadDecision{Error: fmt.Sprintf("party %s: %s", name, o.Unusable)}
		}
		if o.Nodes == nil {
			continue // a party holding no table of the join
		}
		if first == "" {
			first, d.Labels, d.Nodes = name, o.Labels, o.Nodes
			continue
		}
		if !slices.Equal(d.Labels, o.Labels) || !slices.Equal(d.Nodes, o.Nodes) {
			return predictLoadDecision{Error: fmt.Sprintf("parties %s and %s hold parts of different models", first, name)}
		}
	}
	if first == "" {
		return predictLoadDecision{Error: "no party holds a part of the model"}
	}
	if err := checkSkeleton(g, d.Nodes, len(d.Labels)); err != nil {
		return predictLoadDecision{Error: err.Error()}
	}
	return d
}

// checkSkeleton checks that nodes are a tree listed parents first, rooted
// at the first, splitting only tables of g.
func checkSkeleton(g *Graph, nodes []ModelNode, labels int) error {
	if len(nodes) == 0 {
		return fmt.Errorf("%w: the model has no nodes", tree.ErrFormat)
	}
	reached := map[int32]bool{nodes[0].ID: true}
	for _, n := range nodes {
		if !reached[n.ID] {
			return fmt.Errorf("%w: model node %d is not reached from the root before it is listed", tree.ErrFormat, n.ID)
		}
		delete(reached, n.ID)
		if n.Table == "" {
			if n.Label < 0 || n.Label >= labels {
				return fmt.Errorf("%w: model leaf %d has label %d of %d", tree.ErrFormat, n.ID, n.Label, labels)
			}
			continue
		}
		if g.Index(n.Table) < 0 {
			return fmt.Errorf("%w: the model splits table %q, which the spec's join does not have", ErrData, n.Table)
		}
		if n.Left == n.Right || reached[n.Left] || reached[n.Right] {
			return fmt.Errorf("%w: model node %d has bad children", tree.ErrFormat, n.ID)
		}
		reached[n.Left], reached[n.Right] = true, true
	}
	if len(reached) > 0 {
		return fmt.Errorf("%w: %d model nodes are named but not listed", tree.ErrFormat, len(reached))
	}
	return nil
}

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
	s := &session{p: p, g: g, psiMode: mode, tables: map[string]*table.Table{}, locals: make([]*Local, len(g.Tables)), bases: make([]*Local, len(g.Tables)), aligns: aligns{}}
	ps := &predictSession{s: s}
	for i, t := range g.Tables {
		if t.Party == p.Self() {
			s.own = append(s.own, i)
		}
	}
	if len(s.own) == 0 {
		return ps, nil
	}
	ps.err = ps.open(ctx, prm.Model)
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
		return &hidden{msg: fmt.Sprintf("its part of model %s is not a model part", model), cause: err}
	}
	if mp.Job != model || len(mp.Labels) == 0 {
		return fmt.Errorf("model %s: the kept part is for job %q", model, mp.Job)
	}
	ps.model = &mp
	spec := s.p.Spec()
	for _, i := range s.own {
		name := s.g.Tables[i].Name
		schema, err := spec.TableSchema(name)
		if err != nil {
			return err
		}
		if i == 0 {
			delete(schema, s.g.Class) // new data need not have the class
		}
		ts, _ := spec.Party(s.p.Self())
		k := slices.IndexFunc(ts.Tables, func(t job.TableSpec) bool { return t.Name == name })
		src, err := s.p.TableSource(ts.Tables[k])
		if err != nil {
			return fmt.Errorf("table %s: %w", name, err)
		}
		t, err := table.Open(ctx, src, name, schema, table.ReadOptions{})
		if err != nil {
			return fmt.Errorf("table %s: %w", name, err)
		}
		if i == 0 {
			t = withClass(t, s.g.Class)
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
		sp := tree.Split{Party: s.p.Self(), Table: m.Table, Column: m.Column, Op: m.Op, Num: m.Num, Cat: m.Cat}
		if _, err := s.locals[i].splitColumn(sp); err != nil {
			return fmt.Errorf("model %s, node %d: %w", ps.model.Job, m.Node, err)
		}
	}
	return nil
}

// withClass returns t with its class column (if any) replaced by the one
// prediction label.
func withClass(t *table.Table, class string) *table.Table {
	out := &table.Table{Name: t.Name}
	for _, c := range t.Columns {
		if c.Name != class {
			out.Columns = append(out.Columns, c)
		}
	}
	col := &table.Column{Name: class, Kind: table.Class, Str: make([]string, t.NumRows())}
	for r := range col.Str {
		col.Str[r] = predictLabel
	}
	out.Columns = append(out.Columns, col)
	return out
}

// Close drops the tables.
func (ps *predictSession) Close() { ps.s.Close() }

// Step runs one step.
func (ps *predictSession) Step(ctx context.Context, step job.Step) ([]byte, error) {
	switch step.Phase {
	case phasePredictLoad:
		if ps.err != nil {
			return encode(&predictLoadOutput{Unusable: ps.err.Error()})
		}
		if ps.model == nil {
			return encode(&predictLoadOutput{})
		}
		return encode(&predictLoadOutput{Labels: ps.model.Labels, Nodes: ps.model.Nodes})
	case phaseClassify:
		return ps.classify(ctx, step)
	}
	return nil, fmt.Errorf("sjc-predict: unknown phase %q", step.Phase)
}

func (ps *predictSession) classify(ctx context.Context, step job.Step) ([]byte, error) {
	s := ps.s
	if len(s.own) == 0 {
		return encode(&classifyOutput{})
	}
	var d predictLoadDecision
	for _, rec := range s.p.History() {
		if rec.Step.Phase == phasePredictLoad {
			if err := decode(rec.Decision, &d); err != nil {
				return nil, err
			}
		}
	}
	if !slices.Equal(d.Nodes, ps.model.Nodes) {
		return nil, fmt.Errorf("sjc-predict: party %s's model part does not match the committed skeleton", s.p.Self())
	}
	won := map[int32]*tree.Split{}
	for _, m := range ps.model.Splits {
		won[m.Node] = &tree.Split{Party: s.p.Self(), Table: m.Table, Column: m.Column, Op: m.Op, Num: m.Num, Cat: m.Cat}
	}
	shared, err := s.intersect(ctx, step, "psi", s.locals)
	if err != nil {
		return nil, err
	}
	parts := make([]Part, len(s.g.Tables))
	for _, i := range s.own {
		parts[i] = s.locals[i].Initial()
	}
	if err := s.classPropagate(ctx, step, "class", s.locals, shared, parts); err != nil {
		return nil, err
	}
	target := s.owns(0)
	var perRow []uint64 // target: join rows per (row, label)
	nl := len(d.Labels)
	if target {
		perRow = make([]uint64, s.tables[s.g.Target()].NumRows()*nl)
	}
	out := &classifyOutput{Target: target, Counts: make([]uint64, nl)}
	at := map[int32][]Part{d.Nodes[0].ID: parts}
	for _, n := range d.Nodes {
		here, ok := at[n.ID]
		if !ok {
			return nil, fmt.Errorf("sjc-predict: model node %d is not reached", n.ID)
		}
		delete(at, n.ID)
		if n.Table == "" {
			if target {
				for k, r := range here[0].Rows {
					perRow[int(r)*nl+n.Label] += here[0].Cls[k]
					out.Counts[n.Label] += here[0].Cls[k]
				}
			}
			continue
		}
		left, right, err := s.splitNode(ctx, step, fmt.Sprintf("split/%d", n.ID), s.locals, shared, here, s.g.Index(n.Table), won[n.ID])
		if err != nil {
			return nil, err
		}
		at[n.Left], at[n.Right] = left, right
	}
	if target {
		b, err := predictionsCSV(d.Labels, perRow)
		if err != nil {
			return nil, err
		}
		if err := s.p.Secrets().WriteSecret(PredictionsSecret(s.p.JobID()), b); err != nil {
			return nil, fmt.Errorf("party %s: keep the predictions: %w", s.p.Self(), err)
		}
	}
	return encode(out)
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

// Assemble copies the target party's per-row predictions to
// DIR/predictions.csv in `cohort sim`.
func (PredictKind) Assemble(_ context.Context, spec *job.Spec, result []byte, parties map[string]job.Secrets, dir string) ([]byte, error) {
	var res struct {
		Predictions string `json:"predictions"`
		Party       string `json:"predictions_party"`
	}
	if err := json.Unmarshal(result, &res); err != nil {
		return nil, fmt.Errorf("sjc-predict: result: %w", err)
	}
	sec, ok := parties[res.Party]
	if !ok {
		return nil, fmt.Errorf("sjc-predict: no data dir of party %s", res.Party)
	}
	b, err := sec.ReadSecret(res.Predictions)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "predictions.csv"), b, 0o644); err != nil {
		return nil, err
	}
	return result, nil
}
