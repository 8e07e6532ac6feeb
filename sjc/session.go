package sjc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/psi"
	"github.com/cohortdm/cohort/sjc/internal/spill"
	"github.com/cohortdm/cohort/table"
)

// errNoMessage: a message a step waits for did not come (its sender
// failed or restarted, or the attempt was superseded). The coordinator
// re-runs a step that failed only this way.
var errNoMessage = errors.New("sjc: no message in time")

// errNotDelivered: a message this party sent was not acknowledged (its
// receiver failed or restarted). Like a message that did not come, a re-run
// may cure it; the coordinator's re-runs are bounded (maxRetries).
var errNotDelivered = errors.New("sjc: message not delivered")

// ErrRefused: a party refuses a step the log and the spec do not
// determine (another step, other nodes, a winner its own offers beat).
// The refusal names the coordinator that asked.
var ErrRefused = errors.New("sjc: refused")

// session is one party's state for one job: its tables of the join (as
// Locals) and its training state, which it keeps in its data dir after
// every step (state.go) so that a session opened after a restart goes on
// from the last committed step.
type session struct {
	p       job.Participant
	g       *Graph
	prm     Params
	psiMode psi.Mode
	own     []int // graph indexes of the party's tables
	// groupRows: how the tables are loaded (Kind.GroupRows).
	groupRows GroupMode
	tables    map[string]*table.Table
	weights   map[string][]uint64 // per table, each row's multiplicity (Local.weight)
	loadErr   error
	labels    []string
	locals    []*Local  // by graph index; nil for other parties' tables
	bases     []*Local  // the label-free Locals load built, until prepare uses them
	aligns    aligns    // each table's join values lined up with each edge's shared values
	states    []*state  // at most two: the base of the running step and its result
	slots     [2]string // the key of the state each state slot holds
	fronts    *frontiers
	// budget is the node's memory budget for Parts (Kind.MemoryBudget; 0:
	// none), held what the Parts the session holds take (budget.go).
	budget, held int64
	spills       [2]string     // the spill file of the state each slot holds
	spillW       *spill.Writer // the spill file of the state being made
}

// newSession is a party's session over the join graph g, with nothing
// loaded.
func newSession(p job.Participant, g *Graph, prm Params, mode psi.Mode, budget int64) *session {
	s := &session{p: p, g: g, prm: prm, psiMode: mode, budget: budget, tables: map[string]*table.Table{}, weights: map[string][]uint64{},
		locals: make([]*Local, len(g.Tables)), bases: make([]*Local, len(g.Tables)), aligns: aligns{}}
	for i, t := range g.Tables {
		if t.Party == p.Self() {
			s.own = append(s.own, i)
		}
	}
	return s
}

// Open opens a party's session: its tables, read once (a party whose
// tables cannot be read still opens, so that the load step names the
// problem), and any training state it kept for this job.
func (k Kind) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	g, prm, err := parseSpec(p.Spec())
	if err != nil {
		return nil, err
	}
	if k.MemoryBudget < 0 {
		return nil, fmt.Errorf("%w: party %s: sjc_memory_budget is negative; 0 is no budget", ErrMemoryBudget, p.Self())
	}
	mode, _ := psiMode(p.Spec(), prm.PSI) // checked by ParseParams
	s := newSession(p, g, prm, mode, k.MemoryBudget)
	s.groupRows = k.GroupRows
	if len(s.own) > 0 {
		tables, err := ownTables(ctx, p, k.GroupRows)
		if err != nil {
			s.loadErr = err
		}
		for _, d := range tables {
			s.tables[d.Table.Name] = d.Table
			s.weights[d.Table.Name] = weights(d.Counts)
		}
	}
	if err := s.readStates(); err != nil {
		return nil, err
	}
	return s, nil
}

// weights are a distinct table's multiplicities as row weights.
func weights(counts []int) []uint64 {
	w := make([]uint64, len(counts))
	for i, n := range counts {
		w[i] = uint64(n)
	}
	return w
}

// Close drops the tables and state, and the spill file of a state not
// kept.
func (s *session) Close() {
	s.discardSpill()
	s.tables, s.weights, s.locals, s.bases, s.states, s.fronts = nil, nil, nil, nil, nil, nil
}

// Step runs one step, once it has checked that the step is the one the
// log determines (growth.expect); each phase checks its args too.
func (s *session) Step(ctx context.Context, step job.Step) ([]byte, error) {
	gr, err := replayGrowth(s.g, s.prm, s.p.History())
	if err != nil {
		return nil, s.refuse(step, "%v", err)
	}
	if err := gr.expect(step); err != nil {
		return nil, s.refuse(step, "%v", err)
	}
	switch step.Phase {
	case loadRound.Phase:
		return loadRound.Serve(step, func(struct{}) (loadOutput, error) { return s.load() })
	case propagateRound.Phase:
		return propagateRound.Serve(step, func(struct{}) (countsOutput, error) { return s.propagate(ctx, step, gr) })
	case chooseRound.Phase:
		return chooseRound.Serve(step, func(a chooseArgs) (offersOutput, error) { return s.choose(ctx, step, gr, a) })
	case splitRound.Phase:
		return splitRound.Serve(step, func(a splitArgs) (countsOutput, error) { return s.split(ctx, step, gr, a) })
	}
	return finishRound.Serve(step, func(a finishArgs) (finishOutput, error) { return s.finish(ctx, step, gr, a) })
}

// refuse is the party's refusal of a step, naming the coordinator that
// asked for it.
func (s *session) refuse(step job.Step, format string, a ...any) error {
	return fmt.Errorf("%w: party %s refuses %s round %d: coordinator %s: %s", ErrRefused, s.p.Self(), step.Phase, step.Round, step.Coordinator, fmt.Sprintf(format, a...))
}

func (s *session) owns(t int) bool { return s.g.Tables[t].Party == s.p.Self() }

// load checks the party's tables against the schema and, for the target
// table's party, reads the class labels.
func (s *session) load() (loadOutput, error) {
	if s.loadErr != nil {
		// The runtime names the party.
		return loadOutput{}, &reworded{msg: strings.TrimPrefix(s.loadErr.Error(), "party "+s.p.Self()+": "), cause: s.loadErr}
	}
	var out loadOutput
	for _, i := range s.own {
		name := s.g.Tables[i].Name
		t := s.tables[name]
		if t == nil {
			return loadOutput{}, fmt.Errorf("%w: no data for table %q", ErrData, name)
		}
		if t.NumRows() == 0 {
			return loadOutput{}, fmt.Errorf("%w: table %q has no rows", ErrData, name)
		}
		var labels []string
		if i == 0 {
			var err error
			if labels, err = Labels(s.g, t); err != nil {
				return loadOutput{}, err
			}
			out.Labels = labels
		}
		l, err := newLocalBase(s.g, name, t, s.weights[name], s.prm)
		if err == nil {
			_, err = l.withLabels(labels)
		}
		if err != nil {
			return loadOutput{}, err
		}
		s.bases[i] = l // prepare gives it the committed labels
	}
	return out, nil
}

// prepare builds the Locals once the labels are committed. The target
// table's party checks that they are its table's.
func (s *session) prepare(gr *growth) error {
	if s.loadErr != nil {
		return s.loadErr
	}
	if s.labels != nil {
		return nil
	}
	if err := s.checkBudget(len(gr.labels)); err != nil {
		return err
	}
	for _, i := range s.own {
		name := s.g.Tables[i].Name
		base := s.bases[i]
		if base == nil { // opened after load (a restart)
			var err error
			if base, err = newLocalBase(s.g, name, s.tables[name], s.weights[name], s.prm); err != nil {
				return err
			}
		}
		if i == 0 {
			if own, err := Labels(s.g, s.tables[name]); err != nil || !slices.Equal(own, gr.labels) {
				return fmt.Errorf("%w: the committed class labels are not those of table %q", errLog, name)
			}
		}
		l, err := base.withLabels(gr.labels)
		if err != nil {
			return err
		}
		s.locals[i], s.bases[i] = l, nil
	}
	s.labels = gr.labels
	return nil
}

// counts is the class counts of a node as the party's first table sees it.
func (s *session) counts(parts []Part) ([]uint64, error) {
	return s.locals[s.own[0]].Counts(parts[s.own[0]])
}
