package boost

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
)

// predictSession is a party's session of boost-predict: a boost session
// (graph, participant, PSI and up pass) over the new tables, and the
// party's kept part of the model.
type predictSession struct {
	s    *session
	part *kept
	err  error // reading the tables or the model part: reported at load
}

// Open reads the party's tables and its part of the model.
func (PredictKind) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	g, prm, err := parsePredict(p.Spec())
	if err != nil {
		return nil, err
	}
	mode, _ := psiMode(p.Spec(), prm.PSI) // checked by parsePredict
	s := &session{p: p, g: g, prm: DefaultParams(), mode: mode, tables: map[string]*table.Table{}, locals: make([]*Local, len(g.Tables))}
	for i, t := range g.Tables {
		if t.Party == p.Self() {
			s.own = append(s.own, i)
		}
	}
	ps := &predictSession{s: s}
	if len(s.own) > 0 {
		ps.err = ps.open(ctx, prm.Model)
	}
	return ps, nil
}

func (ps *predictSession) open(ctx context.Context, model string) error {
	s := ps.s
	b, err := s.p.Secrets().ReadSecret(ModelSecret(model))
	if err != nil {
		return fmt.Errorf("%w %s: %w", errNoPart, model, err)
	}
	var k kept
	if err := json.Unmarshal(b, &k); err != nil {
		// json's errors may quote the file, which holds predicates.
		return &reworded{msg: fmt.Sprintf("its part of model %s is not a model part", model), cause: err}
	}
	ps.part = &k
	if s.isHolder() && !k.Holder {
		return fmt.Errorf("%w %s: the class table's party kept no trees", errNoPart, model)
	}
	for _, i := range s.own {
		name := s.g.Tables[i].Name
		if _, ok := k.Splits[name]; !ok {
			return fmt.Errorf("%w %s: none for table %q", errNoPart, model, name)
		}
		var drop []string
		if i == 0 {
			drop = []string{s.g.Class} // new data need not have the class
		}
		t, err := job.OpenOwnTable(ctx, s.p, name, drop...)
		if err != nil {
			return err
		}
		if t.NumRows() == 0 {
			return fmt.Errorf("%w: table %q has no rows", ErrData, name)
		}
		if i == 0 {
			t = t.WithClass(s.g.Class, "0")
		}
		l, err := NewLocal(s.g, name, t, 2, LossLogistic, "")
		if err != nil {
			return err
		}
		if err := l.sign(t, k.Splits[name]); err != nil {
			return err
		}
		s.locals[i] = l
	}
	return nil
}

// Close drops the tables.
func (ps *predictSession) Close() { ps.s.tables, ps.s.locals = nil, nil }

// Step runs load or predict once it has checked that it is the one due.
func (ps *predictSession) Step(ctx context.Context, step job.Step) ([]byte, error) {
	s := ps.s
	h := s.p.History()
	switch {
	case step.Phase == predictLoadRound.Phase && step.Round == 0 && len(h) == 0:
		return predictLoadRound.Serve(step, func(struct{}) (predictLoad, error) {
			if ps.err != nil {
				return predictLoad{}, ps.err
			}
			out := predictLoad{Splits: map[string]int{}}
			for _, i := range s.own {
				out.Splits[s.g.Tables[i].Name] = len(ps.part.Splits[s.g.Tables[i].Name])
			}
			return out, nil
		})
	case step.Phase == predictRound.Phase && step.Round == 0 && len(h) == 1:
		d, err := predictLoadRound.Decision(h[0])
		if err != nil {
			return nil, s.refuse(step, "%v", err)
		}
		if err := ps.checkCounts(d.Splits); err != nil {
			return nil, s.refuse(step, "%v", err)
		}
		return predictRound.Serve(step, func(struct{}) (predictOutput, error) { return ps.predict(ctx, step, d.Splits) })
	}
	return nil, s.refuse(step, "boost-predict has no %s step %d after %d steps", step.Phase, step.Round, len(h))
}

// checkCounts checks the load step's committed split counts before any
// message of the predict step: each of the party's own tables' must be
// the one it kept, and at the class holder every split of its trees must
// lie within them. A coordinator that commits other counts would put a
// false model shape in the log (every member reads it) and make parties
// start their PSI for a step the class holder then refuses. A ps.err
// (the kept model unreadable) is left to load, which reported it.
func (ps *predictSession) checkCounts(splits map[string]int) error {
	if ps.err != nil {
		return nil
	}
	s := ps.s
	for _, i := range s.own {
		name := s.g.Tables[i].Name
		if got, ok := splits[name]; !ok || got != len(ps.part.Splits[name]) {
			return fmt.Errorf("the committed split count of table %q is not its kept part's", name)
		}
	}
	if s.isHolder() {
		return checkSkeletons(ps.part.Trees, splits)
	}
	return nil
}

// predict scores the join rows (see PredictKind): the class holder's
// counts, nothing at the other parties.
func (ps *predictSession) predict(ctx context.Context, step job.Step, splits map[string]int) (predictOutput, error) {
	s := ps.s
	if len(s.own) == 0 {
		return predictOutput{}, nil
	}
	shared, err := s.intersectTables(ctx, step, "psi", s.locals)
	if err != nil {
		return predictOutput{}, err
	}
	kids, err := s.upPass(ctx, step, "up", s.locals, shared)
	if err != nil || !s.isHolder() {
		return predictOutput{}, err
	}
	groups, _, err := s.locals[0].Groups(kids[0])
	if err != nil {
		return predictOutput{}, err
	}
	out := predictOutput{Holder: true}
	recs := [][]string{{"row", "join_rows", "margin", "probability"}}
	for _, gr := range groups {
		m, err := ps.margin(gr.Combo)
		if err != nil {
			return predictOutput{}, err
		}
		out.Rows += gr.Count
		if m > 0 {
			out.Positive += gr.Count
		}
		prob := ""
		if ps.part.Positive != "" {
			prob = strconv.FormatFloat(1/(1+math.Exp(-m)), 'g', -1, 64)
		}
		recs = append(recs, []string{strconv.Itoa(gr.Row), strconv.FormatUint(gr.Count, 10), strconv.FormatFloat(m, 'g', -1, 64), prob})
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.WriteAll(recs) //nolint:errcheck // WriteAll's error is w.Error's, checked below
	if err := w.Error(); err != nil {
		return predictOutput{}, fmt.Errorf("boost-predict: predictions: %w", err)
	}
	if err := s.p.Secrets().WriteSecret(PredictionsSecret(s.p.JobID()), b.Bytes()); err != nil {
		return predictOutput{}, fmt.Errorf("boost-predict: keep the predictions: %w", err)
	}
	return out, nil
}

// margin is the model's margin of a join row whose tables' signatures
// form combo: the base score plus the leaf weight it reaches in every
// tree. A combo (from the up pass) without the skeletons' splits does not
// fit.
func (ps *predictSession) margin(combo string) (float64, error) {
	sigs := sigsOf(combo)
	m := ps.part.Base
	for _, n := range ps.part.Trees {
		for n.Left != nil && n.Right != nil {
			i := ps.s.g.Index(n.Table)
			if i < 0 || i >= len(sigs) || n.Ordinal >= len(sigs[i]) {
				return 0, fmt.Errorf("%w: a combo summary without the model's splits of table %q", ErrWire, n.Table)
			}
			if sigs[i][n.Ordinal] == '0' {
				n = n.Left
			} else {
				n = n.Right
			}
		}
		m += n.Leaf
	}
	return m, nil
}

// checkSkeletons checks that every split of the class holder's trees
// names a table and an ordinal below the table's committed split count.
func checkSkeletons(trees []*skelNode, splits map[string]int) error {
	var walk func(n *skelNode) error
	walk = func(n *skelNode) error {
		if n == nil {
			return fmt.Errorf("%w: a split without two children", ErrModel)
		}
		if n.Left == nil && n.Right == nil {
			return nil
		}
		if c, ok := splits[n.Table]; !ok || n.Ordinal < 0 || n.Ordinal >= c {
			return fmt.Errorf("%w: table %q kept no split of the skeleton's ordinal", ErrModel, n.Table)
		}
		if err := walk(n.Left); err != nil {
			return err
		}
		return walk(n.Right)
	}
	for _, t := range trees {
		if err := walk(t); err != nil {
			return err
		}
	}
	return nil
}
