package boost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/psi"
	"github.com/cohortdm/cohort/table"
)

// ErrRefused: a party refuses a step the log and the spec do not
// determine. The refusal names the coordinator that asked.
var ErrRefused = errors.New("boost: refused")

// ErrResume: a party's session was opened after the job had grown levels
// (its node restarted) and the party did not keep its training state for
// the level due (state.go): the job fails naming the party.
var ErrResume = errors.New("boost: a party restarted mid-job without its kept training state")

// session is one party's state for one job: its tables (as Locals), each
// edge's shared join values, and at the class holder the booster.
type session struct {
	p       job.Participant
	g       *joinprop.Graph
	prm     Params
	mode    psi.Mode
	own     []int
	tables  map[string]*table.Table
	binned  map[string]*table.Binned // the tables read as binned groups (grouped.go)
	loadErr error
	stale   bool   // opened after the psi step: resume from the kept state
	slots   [2]int // the keys of the kept states in the two slots (-1: none)

	locals  []*Local
	shared  [][]string     // by edge, after psi
	pos     string         // positive label, committed by load
	backend string         // the bin sums' backend, committed by load
	bins    map[string]int // the lattice layouts' bins by party, committed by load
	lkeys   *lattice.Keys
	// cacheBytes is the node's cap on kept Ws (Kind.LatticeCacheBytes),
	// kept the budget under it, made at the first lattice sums.
	cacheBytes int64
	kept       *keptWeights
	keptMade   bool

	keys *keyring.Paillier
	// The class holder's: the booster, the join's row count, the splits
	// each table made so far and its crypto.
	holder *Holder
	rows   uint64
	made   []int
	crypto Crypto
	sealer *sealer
	pool   *paillier.RandomizerPool
	stop   context.CancelFunc
	// snap is the state at the start of the running level step, to which
	// a re-run of the step (a new attempt) goes back.
	snap *levelSnap
	// sib is the class holder's bin sums of the level before, for the
	// lattice path's sibling subtraction at level sibKey (nil: every open
	// node is summed, as after a restart, which does not keep them).
	sib    *siblings
	sibKey int
	// The lattice path's re-use (lattice_reuse.go): the class holder's
	// first-level down summaries by edge, a table's party's kept
	// first-level chunks by table.
	lfirst    map[int]*holderFirst
	lkept     map[int]*latticeKept
	kpending  map[int]*keptWriter // by table: a kept file still being made durable
	downPart  int                 // the bound of a down message's part (Kind.downPart)
	layoutCap int                 // the most nodes of a layout (Kind.layoutNodes; 0: no cap)
}

// levelSnap is a party's training state at the start of a level step:
// after key grown levels.
type levelSnap struct {
	key    int
	splits []int // by table: the own tables' splits made
	made   []int
	holder *Holder
	sib    *siblings // not changed once made
	sibKey int
}

// rewind takes the state at the start of the level after key grown
// levels, or, when this session already ran an attempt of it (the same
// step, or one the coordinator retried), goes back to that state: an
// attempt that was cut short (a party silent or restarted, a leader
// change) may have split tables or grown the holder's tree.
func (s *session) rewind(key int) {
	if sn := s.snap; sn != nil && sn.key == key {
		for _, i := range s.own {
			s.locals[i].truncate(sn.splits[i])
		}
		s.made = slices.Clone(sn.made)
		if sn.holder != nil {
			s.holder = sn.holder.clone()
		}
		s.sib, s.sibKey = sn.sib, sn.sibKey
		return
	}
	sn := &levelSnap{key: key, splits: make([]int, len(s.g.Tables)), made: slices.Clone(s.made), sib: s.sib, sibKey: s.sibKey}
	for _, i := range s.own {
		sn.splits[i] = s.locals[i].splits()
	}
	if s.holder != nil {
		sn.holder = s.holder.clone()
	}
	s.snap = sn
}

// Open opens a party's session: its tables, read once (a party whose
// tables cannot be read still opens, so that the load step names the
// problem).
func (k Kind) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	g, prm, err := parseSpec(p.Spec())
	if err != nil {
		return nil, err
	}
	mode, _ := psiMode(p.Spec(), prm.PSI) // checked by parseSpec
	s := &session{p: p, g: g, prm: prm, mode: mode, tables: map[string]*table.Table{}, binned: map[string]*table.Binned{}, locals: make([]*Local, len(g.Tables)), made: make([]int, len(g.Tables)),
		lfirst: map[int]*holderFirst{}, lkept: map[int]*latticeKept{}, kpending: map[int]*keptWriter{}}
	for i, t := range g.Tables {
		if t.Party == p.Self() {
			s.own = append(s.own, i)
		}
	}
	s.slots = [2]int{-1, -1}
	s.cacheBytes = k.LatticeCacheBytes
	s.downPart, s.layoutCap = partBytes, k.layoutNodes
	if k.downPart > 0 {
		s.downPart = k.downPart
	}
	if len(s.own) > 0 {
		s.loadErr = s.loadTables(ctx, k.GroupRows)
	}
	if h := p.History(); len(h) > 0 {
		// Opened after a restart: the tables are loaded again, and after
		// the psi step the rest comes from the kept state (resume).
		d, derr := loadRound.Decision(h[0])
		if derr == nil {
			s.pos, s.backend = d.Positive, d.Backend
		}
		if _, err := s.load(); err != nil && s.loadErr == nil {
			s.loadErr = err
		}
		if derr == nil {
			if err := s.checkBins(d); err != nil && s.loadErr == nil {
				s.loadErr = err
			}
		}
		s.stale = len(h) > 1
	}
	return s, nil
}

// Close drops the tables and state and stops the randomiser pool.
func (s *session) Close() {
	for i := range s.kpending {
		_ = s.finishKept(i) // its writer's goroutine ends here; the file is the job's scratch
	}
	if s.pool != nil {
		s.stop()
		s.pool.Close()
	}
	s.tables, s.binned, s.locals, s.holder, s.pool = nil, nil, nil, nil, nil
}

func (s *session) owns(t int) bool { return s.g.Tables[t].Party == s.p.Self() }

func (s *session) isHolder() bool { return s.owns(0) }

// refuse is the party's refusal of a step, naming the coordinator that
// asked for it.
func (s *session) refuse(step job.Step, format string, a ...any) error {
	return fmt.Errorf("%w: party %s refuses %s round %d: coordinator %s: %s", ErrRefused, s.p.Self(), step.Phase, step.Round, step.Coordinator, fmt.Sprintf(format, a...))
}

// Step runs one step once it has checked that it is the one the log
// determines.
func (s *session) Step(ctx context.Context, step job.Step) ([]byte, error) {
	h := s.p.History()
	switch step.Phase {
	case loadRound.Phase:
		if len(h) != 0 {
			return nil, s.refuse(step, "load after %d steps", len(h))
		}
		return loadRound.Serve(step, func(struct{}) (loadOutput, error) { return s.load() })
	case psiRound.Phase:
		if len(h) != 1 {
			return nil, s.refuse(step, "psi after %d steps", len(h))
		}
		d, err := loadRound.Decision(h[0])
		if err != nil {
			return nil, s.refuse(step, "%v", err)
		}
		if err := s.checkBins(d); err != nil {
			return nil, s.refuse(step, "%v", err)
		}
		s.pos, s.backend = d.Positive, d.Backend
		return psiRound.Serve(step, func(struct{}) (struct{}, error) {
			if err := s.intersect(ctx, step); err != nil {
				return struct{}{}, err
			}
			return struct{}{}, s.keepState(0)
		})
	case levelRound.Phase:
		lp, err := planOf(h)
		if err != nil || lp.Tree >= s.prm.Trees || lp.Levels != step.Round || (s.shared == nil && !s.stale) {
			return nil, s.refuse(step, "no level is due")
		}
		return levelRound.Serve(step, func(a levelArgs) (levelOutput, error) {
			if a.Tree != lp.Tree || a.Depth != lp.Depth {
				return levelOutput{}, s.refuse(step, "the log's next level is tree %d depth %d", lp.Tree, lp.Depth)
			}
			if err := s.resumed(ctx, lp.Grown); err != nil {
				return levelOutput{}, err
			}
			out, err := s.level(ctx, step, a, lp.Grown)
			if err != nil {
				return levelOutput{}, err
			}
			return out, s.keepState(lp.Grown + 1)
		})
	case finishRound.Phase:
		lp, err := planOf(h)
		if err != nil || lp.Tree != s.prm.Trees {
			return nil, s.refuse(step, "the trees are not grown")
		}
		return finishRound.Serve(step, func(struct{}) (finishOutput, error) {
			if err := s.resumed(ctx, lp.Grown); err != nil {
				return finishOutput{}, err
			}
			return s.finish(ctx, step)
		})
	}
	return nil, s.refuse(step, "boost has no %s phase", step.Phase)
}

// resumed restores a session opened after a restart to the state after
// key grown levels (state.go); nothing for a session that ran on.
func (s *session) resumed(ctx context.Context, key int) error {
	if !s.stale {
		return nil
	}
	if s.loadErr != nil {
		return s.loadErr
	}
	return s.resume(ctx, key)
}

// load checks the party's tables and builds its Locals; the class holder
// reports the positive label.
func (s *session) load() (loadOutput, error) {
	if s.loadErr != nil {
		// The runtime names the party.
		return loadOutput{}, &reworded{msg: strings.TrimPrefix(s.loadErr.Error(), "party "+s.p.Self()+": "), cause: s.loadErr}
	}
	var out loadOutput
	if s.prm.Backend != BackendPaillier {
		out.Lattice = s.holdsLatticeKey()
	}
	for _, i := range s.own {
		name := s.g.Tables[i].Name
		t := s.tables[name]
		if b := s.binned[name]; b != nil && len(b.Counts) > 0 {
			t = b.Table // the groups' kept columns: the class among them
		}
		if t == nil || t.NumRows() == 0 {
			return loadOutput{}, fmt.Errorf("%w: table %q has no rows", ErrData, name)
		}
		if i == 0 {
			out.Holder = true
			if s.prm.Loss == LossLogistic {
				var err error
				if out.Positive, err = PositiveClass(t, s.g.Class); err != nil {
					return loadOutput{}, err
				}
			}
		}
	}
	for _, i := range s.own {
		name := s.g.Tables[i].Name
		var l *Local
		var err error
		if b := s.binned[name]; b != nil {
			l, err = NewGroupedLocal(s.g, name, b, s.prm.Loss, out.Positive)
		} else {
			l, err = NewLocal(s.g, name, s.tables[name], s.prm.Bins, s.prm.Loss, out.Positive)
		}
		if err != nil {
			return loadOutput{}, err
		}
		s.locals[i] = l
	}
	if s.prm.Backend != BackendPaillier {
		out.Bins = s.widest()
	}
	return out, nil
}

// dropTables lets the party's tables go once its Locals are made: no
// level reads them, and a restarted session reads them afresh. A table
// keeps every cell's text (a9a's two tables some four million strings),
// which the garbage collector would otherwise mark at every cycle of
// every level.
func (s *session) dropTables() {
	for _, i := range s.own {
		if s.locals[i] == nil {
			return // not loaded yet: the load step needs them
		}
	}
	clear(s.tables)
	clear(s.binned)
}

// reworded is an error with its cause's text reworded (the party's name
// taken off, which the runtime adds again).
type reworded struct {
	msg   string
	cause error
}

func (e *reworded) Error() string { return e.msg }
func (e *reworded) Unwrap() error { return e.cause }

// intersect runs the private set intersection of every edge between one
// of the party's tables and another party's, concurrently, on
// sub-channels psi/EDGE (as sjc does); edges inside the party intersect
// locally.
func (s *session) intersect(ctx context.Context, step job.Step) error {
	shared, err := s.intersectTables(ctx, step, "psi", s.locals)
	if err != nil {
		return err
	}
	s.shared = shared
	return nil
}

// withinIntersection refuses a peer's summary on edge e that names a join
// value outside the edge's intersection (shared, sorted), with one answer
// whether or not this party's table holds the value: a party that told
// apart "not held" from "held, outside the intersection", by refusing one
// and summing the other, would answer a hostile neighbour's membership
// queries beyond the private set intersection.
func (s *session) withinIntersection(shared []string, e int, values []string) error {
	f := newFinder(shared)
	for _, v := range values {
		if _, ok := f.find(v); !ok {
			return fmt.Errorf("%w: the summary on edge %s names a join value outside the edge's intersection", ErrWire, s.g.EdgeName(e))
		}
	}
	return nil
}

// intersectTables intersects the join values of locals (by table; the
// party's own) on every edge, on sub-channels PREFIX/EDGE: by edge, the
// shared values, sorted.
func (s *session) intersectTables(ctx context.Context, step job.Step, prefix string, locals []*Local) ([][]string, error) {
	shared, err := joinprop.IntersectEdges(ctx, s.p, s.g, step, prefix, s.mode, func(t, e int) []string { return locals[t].JoinValues(e) })
	if err != nil {
		return nil, err
	}
	for e, ed := range s.g.Edges {
		if (s.owns(s.g.Index(ed.Parent)) || s.owns(e+1)) && len(shared[e]) == 0 {
			// Both sides learnt it from the intersection; the job fails
			// here rather than at the class holder's first level, which
			// the other parties would wait out.
			return nil, fmt.Errorf("%w: edge %s shares no join value", ErrEmptyJoin, s.g.EdgeName(e))
		}
	}
	return shared, nil
}

// finish scores the spec's test set if it has one (evaluate.go), keeps
// the party's part of the model (ModelSecret) and, with params.release,
// reports it.
func (s *session) finish(ctx context.Context, step job.Step) (finishOutput, error) {
	var score *TestScore
	if len(s.p.Spec().Test) > 0 {
		var err error
		if score, err = s.evaluate(ctx, step); err != nil {
			return finishOutput{}, err
		}
	}
	k := &kept{Splits: map[string][]pred{}, Parties: map[string]string{}}
	for _, i := range s.own {
		l := s.locals[i]
		var ps []pred
		for ord := range l.made {
			sp := l.Predicate(ord)
			ps = append(ps, pred{Column: sp.Column, Num: sp.Num})
		}
		k.Splits[l.name], k.Parties[l.name] = ps, s.p.Self()
	}
	if s.isHolder() {
		k.Holder, k.Base, k.Positive = true, s.holder.Base(), s.pos
		k.Trees = s.holder.skeleton(func(t int) string { return s.g.Tables[t].Name })
	}
	if len(s.own) > 0 {
		b, err := json.Marshal(k)
		if err != nil {
			return finishOutput{}, fmt.Errorf("boost: model: %w", err)
		}
		if err := s.p.Secrets().WriteSecret(ModelSecret(s.p.JobID()), b); err != nil {
			return finishOutput{}, fmt.Errorf("boost: keep the model: %w", err)
		}
	}
	if !s.prm.Release || len(s.own) == 0 {
		return finishOutput{Test: score}, nil
	}
	return finishOutput{Kept: k, Test: score}, nil
}
