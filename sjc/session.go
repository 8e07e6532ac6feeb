package sjc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
	"github.com/cohortdm/cohort/psi"
	"github.com/cohortdm/cohort/sjc/tree"
	"github.com/cohortdm/cohort/table"
)

// errNoMessage: a message a step waits for did not come (its sender
// failed or restarted, or the attempt was superseded). The coordinator
// re-runs a level that failed only this way.
var errNoMessage = errors.New("sjc: no message in time")

// session is one party's state for one job: its tables of the join (as
// Locals) and its training state, which it keeps in its data dir after
// every step (stateSecret) so that a session opened after a restart goes
// on from the last committed step.
type session struct {
	p       job.Participant
	g       *Graph
	prm     Params
	psiMode psi.Mode
	own     []int // graph indexes of the party's tables
	tables  map[string]*table.Table
	loadErr error
	labels  []string
	locals  []*Local  // by graph index; nil for other parties' tables
	bases   []*Local  // the label-free Locals load built, until prepare uses them
	aligns  aligns    // each table's join values lined up with each edge's shared values
	states  []*state  // at most two: the base of the running step and its result
	slots   [2]string // the key of the state each state slot holds
}

// state is a party's training state after a committed step (Key names it,
// "phase/round"): the shared join values of its edges (from PSI), its
// tables' Parts at every node still to grow, and the predicates it won.
type state struct {
	Key    string      `msgpack:"key"`
	Shared [][]string  `msgpack:"shared"` // by edge; nil for edges of other parties
	Nodes  []nodeState `msgpack:"nodes"`
	Won    []wonSplit  `msgpack:"won"`
}

type nodeState struct {
	ID    int32  `msgpack:"id"`
	Parts []Part `msgpack:"parts"` // by graph index; empty for other parties' tables
}

type wonSplit struct {
	Node  int32      `msgpack:"node"`
	Split tree.Split `msgpack:"split"`
}

// Open opens a party's session: its tables, read once (a party whose
// tables cannot be read still opens, so that the load step names the
// problem), and any training state it kept for this job.
func (Kind) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	g, prm, err := parseSpec(p.Spec())
	if err != nil {
		return nil, err
	}
	mode, _ := psiMode(p.Spec(), prm.PSI) // checked by ParseParams
	s := &session{p: p, g: g, prm: prm, psiMode: mode, tables: map[string]*table.Table{}, locals: make([]*Local, len(g.Tables)), bases: make([]*Local, len(g.Tables)), aligns: aligns{}}
	for i, t := range g.Tables {
		if t.Party == p.Self() {
			s.own = append(s.own, i)
		}
	}
	if len(s.own) > 0 {
		tables, err := job.LoadTables(ctx, p)
		if err != nil {
			s.loadErr = err
		}
		for _, t := range tables {
			s.tables[t.Name] = t
		}
	}
	for slot := range s.slots {
		b, err := p.Secrets().ReadSecret(stateSecret(p.JobID(), slot))
		if err != nil || len(b) == 0 {
			continue
		}
		var st state
		if err := decode(b, &st); err != nil {
			// The state holds the party's predicates: no decoder's
			// quote of it may leave.
			return nil, &hidden{msg: fmt.Sprintf("party %s: its kept sjc state for job %s is unreadable", p.Self(), p.JobID()), cause: err}
		}
		s.states = append(s.states, &st)
		s.slots[slot] = st.Key
	}
	return s, nil
}

// Close drops the tables and state.
func (s *session) Close() { s.tables, s.locals, s.bases, s.states = nil, nil, nil, nil }

// Step runs one step.
func (s *session) Step(ctx context.Context, step job.Step) ([]byte, error) {
	switch step.Phase {
	case phaseLoad:
		return encode(s.load())
	case phasePropagate:
		return s.propagate(ctx, step)
	case phaseGrow:
		return s.grow(ctx, step)
	case phaseFinish:
		return s.finish(ctx, step)
	}
	return nil, fmt.Errorf("sjc: unknown phase %q", step.Phase)
}

func (s *session) owns(t int) bool { return s.g.Tables[t].Party == s.p.Self() }

// load checks the party's tables against the schema and, for the target
// table's party, reads the class labels.
func (s *session) load() *loadOutput {
	if s.loadErr != nil {
		// The coordinator names the party.
		return &loadOutput{Unusable: strings.TrimPrefix(s.loadErr.Error(), "party "+s.p.Self()+": ")}
	}
	out := &loadOutput{}
	for _, i := range s.own {
		name := s.g.Tables[i].Name
		t := s.tables[name]
		if t == nil {
			return &loadOutput{Unusable: fmt.Sprintf("%v: no data for table %q", ErrData, name)}
		}
		if t.NumRows() == 0 {
			return &loadOutput{Unusable: fmt.Sprintf("%v: table %q has no rows", ErrData, name)}
		}
		var labels []string
		if i == 0 {
			var err error
			if labels, err = Labels(s.g, t); err != nil {
				return &loadOutput{Unusable: err.Error()}
			}
			out.Labels = labels
		}
		l, err := newLocalBase(s.g, name, t, s.prm)
		if err == nil {
			_, err = l.withLabels(labels)
		}
		if err != nil {
			return &loadOutput{Unusable: err.Error()}
		}
		s.bases[i] = l // prepare gives it the committed labels
	}
	return out
}

// prepare builds the Locals once the labels are committed.
func (s *session) prepare() error {
	if s.loadErr != nil {
		return s.loadErr
	}
	if s.labels != nil {
		return nil
	}
	for _, rec := range s.p.History() {
		if rec.Step.Phase != phaseLoad {
			continue
		}
		var d loadDecision
		if err := decode(rec.Decision, &d); err != nil {
			return err
		}
		s.labels = d.Labels
	}
	if len(s.labels) == 0 {
		return errors.New("sjc: no committed class labels")
	}
	for _, i := range s.own {
		name := s.g.Tables[i].Name
		base := s.bases[i]
		if base == nil { // opened after load (a restart)
			var err error
			if base, err = newLocalBase(s.g, name, s.tables[name], s.prm); err != nil {
				return err
			}
		}
		l, err := base.withLabels(s.labels)
		if err != nil {
			return err
		}
		s.locals[i], s.bases[i] = l, nil
	}
	return nil
}

// baseKey names the last committed step whose state the next step starts
// from: the last propagate or grow step that was not a retry.
func (s *session) baseKey() (string, error) {
	key := ""
	for _, rec := range s.p.History() {
		switch rec.Step.Phase {
		case phasePropagate:
			key = stepKey(rec.Step)
		case phaseGrow:
			var d growDecision
			if err := decode(rec.Decision, &d); err != nil {
				return "", err
			}
			if !d.Retry {
				key = stepKey(rec.Step)
			}
		}
	}
	if key == "" {
		return "", errors.New("sjc: no committed propagation")
	}
	return key, nil
}

func stepKey(st job.Step) string { return fmt.Sprintf("%s/%d", st.Phase, st.Round) }

// base returns the state after the last committed step.
func (s *session) base() (*state, error) {
	key, err := s.baseKey()
	if err != nil {
		return nil, err
	}
	for _, st := range s.states {
		if st.Key == key {
			return st, nil
		}
	}
	return nil, fmt.Errorf("sjc: party %s has no training state for step %s (its kept state is lost)", s.p.Self(), key)
}

// keep records next as the state after its step, beside base, in memory
// and in the party's data dir: in the state slot base is not in.
func (s *session) keep(base, next *state) error {
	s.states = []*state{next}
	if base != nil && base.Key != next.Key {
		s.states = append(s.states, base)
	}
	slot := 0
	if base != nil && s.slots[0] == base.Key {
		slot = 1
	}
	b, err := encode(next)
	if err != nil {
		return err
	}
	if err := s.p.Secrets().WriteSecret(stateSecret(s.p.JobID(), slot), b); err != nil {
		return fmt.Errorf("party %s: keep the sjc training state: %w", s.p.Self(), err)
	}
	s.slots[slot] = next.Key
	return nil
}

// intersect runs the private set intersection of every edge between one
// of the party's tables and another party's, concurrently, on sub-channels
// of step named prefix/EDGE; edges inside the party intersect locally.
func (s *session) intersect(ctx context.Context, step job.Step, prefix string, locals []*Local) ([][]string, error) {
	shared := make([][]string, len(s.g.Edges))
	errs := make([]error, len(s.g.Edges))
	var wg sync.WaitGroup
	for e, ed := range s.g.Edges {
		pi, ci := s.g.Index(ed.Parent), e+1
		po, co := s.owns(pi), s.owns(ci)
		switch {
		case po && co:
			shared[e] = Intersect(locals[pi].JoinValues(e), locals[ci].JoinValues(e))
		case po || co:
			mine, peer, role := pi, ci, psi.Sender
			if co {
				mine, peer, role = ci, pi, psi.Receiver
			}
			vals := locals[mine].JoinValues(e)
			wg.Go(func() {
				elems := make([][]byte, len(vals))
				for i, v := range vals {
					elems[i] = []byte(v)
				}
				cfg := psi.Config{Edge: s.g.edgeName(e), MaxElements: max(psi.DefaultMaxElements, 2*len(vals)), Mode: s.psiMode}
				res, err := cfg.Intersector().Intersect(ctx, s.p, step.Sub(fmt.Sprintf("%s/%d", prefix, e)), s.g.Tables[peer].Party, role, elems)
				if err != nil {
					errs[e] = fmt.Errorf("edge %s with party %s: %w", s.g.edgeName(e), s.g.Tables[peer].Party, err)
					return
				}
				out := make([]string, len(res.Indices))
				for i, k := range res.Indices {
					out[i] = vals[k]
				}
				shared[e] = out
			})
		}
	}
	wg.Wait()
	return shared, errors.Join(errs...)
}

// classPropagate runs the party's share of ClassSchedule over parts,
// sending and receiving class summaries on sub-channels prefix/TRANSFER.
func (s *session) classPropagate(ctx context.Context, step job.Step, prefix string, locals []*Local, shared [][]string, parts []Part) error {
	self := s.p.Self()
	for i, tr := range ClassSchedule(s.g) {
		from, to := s.g.Tables[tr.From].Party, s.g.Tables[tr.To].Party
		if from != self && to != self {
			continue
		}
		sub := step.Sub(fmt.Sprintf("%s/%d", prefix, i))
		var cs ClassSummary
		if from == self {
			var err error
			if to != self {
				al, err := s.aligns.of(locals[tr.From], tr.Edge, shared[tr.Edge])
				if err != nil {
					return err
				}
				es, err := locals[tr.From].wireClass(parts[tr.From], al)
				if err != nil {
					return err
				}
				b, err := encode(&es)
				if err != nil {
					return err
				}
				if err := s.p.Send(ctx, to, sub.Message(self, TypeClassSummary, b), protocol.DiscloseClassSummary); err != nil {
					return fmt.Errorf("send class summary on edge %s to %s: %w", s.g.edgeName(tr.Edge), to, err)
				}
				continue
			}
			if cs, err = locals[tr.From].Summary(parts[tr.From], tr.Edge, shared[tr.Edge]); err != nil {
				return err
			}
		} else {
			m, err := s.p.Receive(ctx, from, sub.Key(TypeClassSummary))
			if err != nil {
				return fmt.Errorf("%w: class summary on edge %s from %s: %w", errNoMessage, s.g.edgeName(tr.Edge), from, err)
			}
			var es EdgeSummary
			if err := decode(m.Body, &es); err != nil {
				return fmt.Errorf("class summary on edge %s from %s: %w", s.g.edgeName(tr.Edge), from, err)
			}
			if es.Edge != tr.Edge {
				return fmt.Errorf("%w: class summary from %s names edge %d, expected %s", ErrSummary, from, es.Edge, s.g.edgeName(tr.Edge))
			}
			al, err := s.aligns.of(locals[tr.To], tr.Edge, shared[tr.Edge])
			if err != nil {
				return err
			}
			if parts[tr.To], err = locals[tr.To].applyWireClass(parts[tr.To], &es, al, tr.Forward); err != nil {
				return fmt.Errorf("class summary on edge %s from %s: %w", s.g.edgeName(tr.Edge), from, err)
			}
			continue
		}
		var err error
		if tr.Forward {
			parts[tr.To], err = locals[tr.To].Forward(parts[tr.To], cs)
		} else {
			parts[tr.To], err = locals[tr.To].Backward(parts[tr.To], cs)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// splitNode splits the party's Parts at a node won by table w (split is
// the predicate when w is the party's), exchanging split summaries on
// sub-channels prefix/EDGE.
func (s *session) splitNode(ctx context.Context, step job.Step, prefix string, locals []*Local, shared [][]string, parts []Part, w int, split *tree.Split) (left, right []Part, err error) {
	self := s.p.Self()
	left, right = make([]Part, len(parts)), make([]Part, len(parts))
	if s.owns(w) {
		if split == nil {
			return nil, nil, fmt.Errorf("sjc: party %s has no predicate for its table %q's split", self, s.g.Tables[w].Name)
		}
		if left[w], right[w], err = locals[w].SplitOwn(parts[w], *split); err != nil {
			return nil, nil, err
		}
	}
	for _, tr := range SplitSchedule(s.g, w) {
		from, to := s.g.Tables[tr.From].Party, s.g.Tables[tr.To].Party
		if from != self && to != self {
			continue
		}
		sub := step.Sub(fmt.Sprintf("%s/%d", prefix, tr.Edge))
		var ss SplitSummary
		if from == self {
			if to != self {
				al, err := s.aligns.of(locals[tr.From], tr.Edge, shared[tr.Edge])
				if err != nil {
					return nil, nil, err
				}
				es, err := locals[tr.From].wireSplit(left[tr.From], right[tr.From], al)
				if err != nil {
					return nil, nil, err
				}
				b, err := encode(&es)
				if err != nil {
					return nil, nil, err
				}
				if err := s.p.Send(ctx, to, sub.Message(self, TypeSplitSummary, b), protocol.DiscloseSplitSummary); err != nil {
					return nil, nil, fmt.Errorf("send split summary on edge %s to %s: %w", s.g.edgeName(tr.Edge), to, err)
				}
				continue
			}
			// An edge between two of the party's own tables.
			if ss, err = locals[tr.From].SplitSummary(left[tr.From], right[tr.From], tr.Edge); err != nil {
				return nil, nil, err
			}
		} else {
			m, err := s.p.Receive(ctx, from, sub.Key(TypeSplitSummary))
			if err != nil {
				return nil, nil, fmt.Errorf("%w: split summary on edge %s from %s: %w", errNoMessage, s.g.edgeName(tr.Edge), from, err)
			}
			var es EdgeSummary
			if err := decode(m.Body, &es); err != nil {
				return nil, nil, fmt.Errorf("split summary on edge %s from %s: %w", s.g.edgeName(tr.Edge), from, err)
			}
			if es.Edge != tr.Edge {
				return nil, nil, fmt.Errorf("%w: split summary from %s names edge %d, expected %s", ErrSummary, from, es.Edge, s.g.edgeName(tr.Edge))
			}
			al, err := s.aligns.of(locals[tr.To], tr.Edge, shared[tr.Edge])
			if err != nil {
				return nil, nil, err
			}
			if left[tr.To], right[tr.To], err = locals[tr.To].applyWireSplit(parts[tr.To], &es, al); err != nil {
				return nil, nil, fmt.Errorf("split summary on edge %s from %s: %w", s.g.edgeName(tr.Edge), from, err)
			}
			continue
		}
		if left[tr.To], right[tr.To], err = locals[tr.To].ApplySplit(parts[tr.To], ss); err != nil {
			return nil, nil, err
		}
	}
	return left, right, nil
}

// counts is the class counts of a node as the party's first table sees it.
func (s *session) counts(parts []Part) ([]uint64, error) {
	return s.locals[s.own[0]].Counts(parts[s.own[0]])
}

func (s *session) propagate(ctx context.Context, step job.Step) ([]byte, error) {
	if len(s.own) == 0 {
		return encode(&countsOutput{})
	}
	if err := s.prepare(); err != nil {
		return encode(&countsOutput{Unusable: err.Error()})
	}
	shared, err := s.intersect(ctx, step, "psi", s.locals)
	if err != nil {
		return nil, err
	}
	out := &countsOutput{Tables: true}
	for e, v := range shared {
		if len(v) == 0 && (s.owns(s.g.Index(s.g.Edges[e].Parent)) || s.owns(e+1)) {
			out.EmptyEdges = append(out.EmptyEdges, e)
		}
	}
	parts := make([]Part, len(s.g.Tables))
	for _, i := range s.own {
		parts[i] = s.locals[i].Initial()
	}
	if err := s.classPropagate(ctx, step, "class", s.locals, shared, parts); err != nil {
		return nil, err
	}
	c, err := s.counts(parts)
	if err != nil {
		return nil, err
	}
	out.Counts = [][]uint64{c}
	next := &state{Key: stepKey(step), Shared: shared, Nodes: []nodeState{{ID: 0, Parts: parts}}}
	if err := s.keep(nil, next); err != nil {
		return nil, err
	}
	return encode(out)
}

func (s *session) grow(ctx context.Context, step job.Step) ([]byte, error) {
	self := s.p.Self()
	var a growArgs
	if err := decode(step.Args, &a); err != nil {
		return nil, err
	}
	coord := step.Coordinator
	sendOffers := func(o *Offers) error {
		b, err := encode(o)
		if err != nil {
			return err
		}
		return s.p.Send(ctx, coord, step.Message(self, TypeOffers, b), protocol.DiscloseScore)
	}
	fail := func(err error) ([]byte, error) {
		_ = sendOffers(&Offers{Error: err.Error()})
		return nil, err
	}
	var base *state
	parts := make([][]Part, len(a.Open))
	fronts := make([][][]Candidate, len(a.Open))
	offers := &Offers{Nodes: make([][]Offer, len(a.Open))}
	if len(s.own) > 0 {
		if err := s.prepare(); err != nil {
			return fail(err)
		}
		var err error
		if base, err = s.base(); err != nil {
			return fail(err)
		}
		for i, id := range a.Open {
			k := slices.IndexFunc(base.Nodes, func(n nodeState) bool { return n.ID == id })
			if k < 0 {
				return fail(fmt.Errorf("sjc: party %s has no state for tree node %d", self, id))
			}
			parts[i] = base.Nodes[k].Parts
			if len(parts[i]) != len(s.g.Tables) {
				return fail(fmt.Errorf("sjc: party %s: state of tree node %d is malformed", self, id))
			}
			fronts[i] = make([][]Candidate, len(s.g.Tables))
			offers.Nodes[i] = make([]Offer, len(s.g.Tables))
			for _, t := range s.own {
				if err := s.locals[t].checkPart(parts[i][t]); err != nil {
					return fail(fmt.Errorf("party %s: state of tree node %d: %w", self, id, err))
				}
				if fronts[i][t], err = s.locals[t].BestSplits(parts[i][t]); err != nil {
					return fail(err)
				}
				offers.Nodes[i][t] = OfferOf(fronts[i][t])
			}
		}
	} else {
		for i := range offers.Nodes {
			offers.Nodes[i] = make([]Offer, len(s.g.Tables))
		}
	}
	if err := sendOffers(offers); err != nil {
		return nil, fmt.Errorf("send offers to %s: %w", coord, err)
	}
	m, err := s.p.Receive(ctx, coord, step.Key(TypePlan))
	if err != nil {
		return nil, fmt.Errorf("%w: plan from %s: %w", errNoMessage, coord, err)
	}
	plan, err := checkPlan(m.Body, len(a.Open), len(s.g.Tables))
	if err != nil {
		return nil, fmt.Errorf("plan from %s: %w", coord, err)
	}
	if plan.Abort {
		return encode(&countsOutput{Tables: len(s.own) > 0, Aborted: true})
	}
	mine := false
	for _, t := range plan.Splits {
		mine = mine || t >= 0 && s.owns(t)
	}
	if len(s.own) == 0 {
		return encode(&countsOutput{})
	}
	preds := make([]*tree.Split, len(a.Open))
	if mine {
		m, err := s.p.Receive(ctx, coord, step.Key(TypeWon))
		if err != nil {
			return nil, fmt.Errorf("%w: won splits from %s: %w", errNoMessage, coord, err)
		}
		var w Won
		if err := decode(m.Body, &w); err != nil {
			return nil, fmt.Errorf("won splits from %s: %w", coord, err)
		}
		for _, wn := range w.Nodes {
			if wn.Open < 0 || wn.Open >= len(a.Open) || plan.Splits[wn.Open] < 0 || !s.owns(plan.Splits[wn.Open]) {
				return nil, fmt.Errorf("%w: %s says party %s won open node %d, which the plan does not give it", ErrSummary, coord, self, wn.Open)
			}
			f := fronts[wn.Open][plan.Splits[wn.Open]]
			if wn.Index < 0 || wn.Index >= len(f) {
				return nil, fmt.Errorf("%w: %s names candidate %d of %d", ErrSummary, coord, wn.Index, len(f))
			}
			sp := f[wn.Index].Split
			preds[wn.Open] = &sp
		}
	}
	next := &state{Key: stepKey(step), Shared: base.Shared, Won: slices.Clone(base.Won)}
	out := &countsOutput{Tables: true}
	id := a.NextID
	for i, w := range plan.Splits {
		if w < 0 {
			continue
		}
		left, right, err := s.splitNode(ctx, step, fmt.Sprintf("split/%d", a.Open[i]), s.locals, base.Shared, parts[i], w, preds[i])
		if err != nil {
			return nil, err
		}
		if preds[i] != nil {
			next.Won = append(next.Won, wonSplit{Node: a.Open[i], Split: *preds[i]})
		}
		for _, ch := range [][]Part{left, right} {
			c, err := s.counts(ch)
			if err != nil {
				return nil, err
			}
			out.Counts = append(out.Counts, c)
			next.Nodes = append(next.Nodes, nodeState{ID: id, Parts: ch})
			id++
		}
	}
	if err := s.keep(base, next); err != nil {
		return nil, err
	}
	return encode(out)
}

// checkPlan decodes a plan for a level of nopen nodes over ntables tables.
func checkPlan(body []byte, nopen, ntables int) (Plan, error) {
	var plan Plan
	if err := decode(body, &plan); err != nil {
		return plan, err
	}
	if plan.Abort {
		return plan, nil
	}
	if len(plan.Splits) != nopen {
		return plan, fmt.Errorf("%w: the plan splits %d nodes, the step opens %d", ErrSummary, len(plan.Splits), nopen)
	}
	for _, t := range plan.Splits {
		if t < -1 || t >= ntables {
			return plan, fmt.Errorf("%w: the plan names table %d of %d", ErrSummary, t, ntables)
		}
	}
	return plan, nil
}

// ModelPart is what a party keeps of a trained model (ModelSecret): the
// predicates of the skeleton nodes its tables split. With the public
// skeleton (result.json's "skeleton") and every party's part, the tree is
// whole; each party alone can answer only for its own nodes.
type ModelPart struct {
	Job    string       `json:"job"`
	Party  string       `json:"party"`
	Labels []string     `json:"labels"`
	Splits []ModelSplit `json:"splits"`
	// Nodes is the public skeleton of the final tree, parents first, so
	// that a later sjc-predict job can walk it.
	Nodes []ModelNode `json:"nodes"`
}

// ModelNode is one node of the final skeleton: a split on Table (its
// predicate kept by the table's party) or, when Table is empty, a leaf
// labelled Labels[Label].
type ModelNode struct {
	ID    int32  `json:"id" msgpack:"id"`
	Table string `json:"table,omitempty" msgpack:"table"`
	Left  int32  `json:"left,omitempty" msgpack:"left"`
	Right int32  `json:"right,omitempty" msgpack:"right"`
	Label int    `json:"label" msgpack:"label"`
}

// ModelSplit is one node's predicate.
type ModelSplit struct {
	Node   int32   `json:"node"`
	Table  string  `json:"table"`
	Column string  `json:"column"`
	Op     string  `json:"op"`
	Num    float64 `json:"num,omitempty"`
	Cat    string  `json:"cat,omitempty"`
}

func (s *session) finish(ctx context.Context, step job.Step) ([]byte, error) {
	var a finishArgs
	if err := decode(step.Args, &a); err != nil {
		return nil, err
	}
	if len(s.own) == 0 {
		return encode(&finishOutput{})
	}
	if err := s.prepare(); err != nil {
		return nil, err
	}
	won, err := s.finalSplits()
	if err != nil {
		return nil, err
	}
	mp := ModelPart{Job: s.p.JobID(), Party: s.p.Self(), Labels: s.labels, Splits: []ModelSplit{}}
	for _, n := range a.Nodes {
		mn := ModelNode{ID: n.ID, Label: n.Label}
		if n.Table >= 0 && n.Table < len(s.g.Tables) {
			mn.Table, mn.Left, mn.Right = s.g.Tables[n.Table].Name, n.Left, n.Right
		}
		mp.Nodes = append(mp.Nodes, mn)
	}
	for _, n := range a.Nodes {
		if n.Table < 0 || n.Table >= len(s.g.Tables) || !s.owns(n.Table) {
			continue
		}
		sp := won[n.ID]
		if sp == nil {
			return nil, fmt.Errorf("sjc: party %s has no predicate for tree node %d", s.p.Self(), n.ID)
		}
		mp.Splits = append(mp.Splits, ModelSplit{Node: n.ID, Table: sp.Table, Column: sp.Column, Op: sp.Op, Num: sp.Num, Cat: sp.Cat})
	}
	b, err := json.MarshalIndent(&mp, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := s.p.Secrets().WriteSecret(ModelSecret(s.p.JobID()), append(b, '\n')); err != nil {
		return nil, fmt.Errorf("party %s: keep its part of the model: %w", s.p.Self(), err)
	}
	out := &finishOutput{Target: s.owns(0)}
	if len(s.p.Spec().Test) > 0 {
		if out.Correct, out.Total, err = s.evaluate(ctx, step, a, won); err != nil {
			return nil, err
		}
	}
	// The training state is no longer needed.
	for slot := range s.slots {
		if err := s.p.Secrets().WriteSecret(stateSecret(s.p.JobID(), slot), nil); err != nil {
			return nil, err
		}
		s.slots[slot] = ""
	}
	return encode(out)
}

// finalSplits returns the party's won predicates by node: from its kept
// state, or, when an earlier attempt of finish has already kept the model
// and emptied the state, from its kept model part.
func (s *session) finalSplits() (map[int32]*tree.Split, error) {
	won := map[int32]*tree.Split{}
	base, err := s.base()
	if err == nil {
		for i := range base.Won {
			won[base.Won[i].Node] = &base.Won[i].Split
		}
		return won, nil
	}
	b, rerr := s.p.Secrets().ReadSecret(ModelSecret(s.p.JobID()))
	if rerr != nil {
		return nil, err
	}
	var mp ModelPart
	if jerr := json.Unmarshal(b, &mp); jerr != nil || mp.Job != s.p.JobID() {
		return nil, err
	}
	for _, m := range mp.Splits {
		won[m.Node] = &tree.Split{Party: s.p.Self(), Table: m.Table, Column: m.Column, Op: m.Op, Num: m.Num, Cat: m.Cat}
	}
	return won, nil
}

// testLabel stands for a test class the training set does not have: it
// sorts before every label and no leaf has it.
const testLabel = "\x00"

// evaluate classifies the test join rows with the final tree, without
// materialising the test join: PSI and class propagation over the test
// tables, then split propagation down the tree, each party applying its
// own predicates. The target table's party counts the correct join rows.
func (s *session) evaluate(ctx context.Context, step job.Step, a finishArgs, won map[int32]*tree.Split) (correct, total uint64, err error) {
	labels := slices.Sorted(slices.Values(append([]string{testLabel}, s.labels...)))
	locals := make([]*Local, len(s.g.Tables))
	for _, i := range s.own {
		name := s.g.Tables[i].Name
		t, err := s.testTable(ctx, name)
		if err != nil {
			return 0, 0, err
		}
		if i == 0 {
			t = relabel(t, s.g.Class, s.labels)
		}
		if locals[i], err = NewLocal(s.g, name, t, labels, Params{}); err != nil {
			return 0, 0, fmt.Errorf("test set: %w", err)
		}
	}
	shared, err := s.intersect(ctx, step, "test-psi", locals)
	if err != nil {
		return 0, 0, err
	}
	parts := make([]Part, len(s.g.Tables))
	for _, i := range s.own {
		parts[i] = locals[i].Initial()
	}
	if err := s.classPropagate(ctx, step, "test-class", locals, shared, parts); err != nil {
		return 0, 0, err
	}
	at := map[int32][]Part{}
	if len(a.Nodes) > 0 {
		at[a.Nodes[0].ID] = parts
	}
	for _, n := range a.Nodes {
		ps, ok := at[n.ID]
		if !ok {
			return 0, 0, fmt.Errorf("sjc: final tree node %d is not reached from the root", n.ID)
		}
		delete(at, n.ID)
		if n.Table < 0 {
			if !s.owns(0) {
				continue
			}
			c, err := locals[0].Counts(ps[0])
			if err != nil {
				return 0, 0, err
			}
			if n.Label < 0 || n.Label >= len(s.labels) {
				return 0, 0, fmt.Errorf("sjc: leaf %d has label %d of %d", n.ID, n.Label, len(s.labels))
			}
			k, _ := slices.BinarySearch(labels, s.labels[n.Label])
			correct += c[k]
			for _, x := range c {
				total += x
			}
			continue
		}
		if n.Table >= len(s.g.Tables) {
			return 0, 0, fmt.Errorf("sjc: tree node %d splits table %d", n.ID, n.Table)
		}
		left, right, err := s.splitNode(ctx, step, fmt.Sprintf("test-split/%d", n.ID), locals, shared, ps, n.Table, won[n.ID])
		if err != nil {
			return 0, 0, err
		}
		at[n.Left], at[n.Right] = left, right
	}
	return correct, total, nil
}

// testTable loads the party's test table for a table of the join. It is
// resolved as a table named "test:NAME" with the spec's test path, so a
// node may map it in node.yaml like any other table.
func (s *session) testTable(ctx context.Context, name string) (*table.Table, error) {
	spec := s.p.Spec()
	schema, err := spec.TableSchema(name)
	if err != nil {
		return nil, err
	}
	src, err := s.p.TableSource(job.TableSpec{Name: "test:" + name, Path: spec.Test[name]})
	if err != nil {
		return nil, fmt.Errorf("party %s: test table %s: %w", s.p.Self(), name, err)
	}
	t, err := table.Open(ctx, src, name, schema, table.ReadOptions{})
	if err != nil {
		return nil, fmt.Errorf("party %s: test table %s: %w", s.p.Self(), name, err)
	}
	return t, nil
}

// relabel returns t with every class value not in labels (the training
// labels, sorted) replaced by testLabel (a test class the tree never
// predicts).
func relabel(t *table.Table, class string, labels []string) *table.Table {
	out := &table.Table{Name: t.Name}
	for _, c := range t.Columns {
		if c.Name == class {
			nc := &table.Column{Name: c.Name, Kind: c.Kind, Str: make([]string, len(c.Str))}
			for r, v := range c.Str {
				if _, ok := slices.BinarySearch(labels, v); ok {
					nc.Str[r] = v
				} else {
					nc.Str[r] = testLabel
				}
			}
			c = nc
		}
		out.Columns = append(out.Columns, c)
	}
	return out
}
