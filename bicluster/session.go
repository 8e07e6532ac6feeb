package bicluster

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/secureagg"
)

// Open opens a party's session: its matrix, read once from its table. A
// party whose table cannot be read still opens, so that the schema step
// reports why and the job fails naming it. Everything else the session
// uses (its row order, its local biclusters) is recomputed from the
// matrix, the seed and the committed history, so a session opened after
// a restart is the same as one that ran from the start.
func (Kind) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	cfg, err := parseJobParams(p.Spec())
	if err != nil {
		return nil, err
	}
	s := &session{p: p, cfg: cfg, index: slices.Index(p.Spec().PartyNames(), p.Self())}
	s.m, s.loadErr = loadMatrix(ctx, p)
	return s, nil
}

// loadMatrix reads the party's one bicluster table, from whatever source
// its node maps it to.
func loadMatrix(ctx context.Context, p job.Participant) (*Matrix, error) {
	ps, ok := p.Spec().Party(p.Self())
	if !ok {
		return nil, fmt.Errorf("party %s is not in the job spec", p.Self())
	}
	if len(ps.Tables) != 1 {
		return nil, fmt.Errorf("%w: %d tables, the bicluster job needs exactly one", ErrParams, len(ps.Tables))
	}
	tables, err := job.LoadTables(ctx, p)
	if err != nil {
		return nil, err
	}
	t := tables[0]
	if t.NumRows() == 0 {
		return nil, fmt.Errorf("%w: table %q has no rows", ErrEmpty, t.Name)
	}
	return FromTable(t)
}

// session is one party's state: its matrix and, once the iterations are
// over, its local biclusters (a cache of what the history determines).
type session struct {
	p       job.Participant
	cfg     *jobConfig
	index   int
	m       *Matrix
	loadErr error
	locals  []Local // nil until computed
}

// Close drops the matrix.
func (s *session) Close() { s.m, s.locals = nil, nil }

// Step runs one step.
func (s *session) Step(ctx context.Context, step job.Step) ([]byte, error) {
	switch step.Phase {
	case phaseSchema:
		if s.loadErr != nil {
			return encode(&schemaOutput{Unusable: s.loadErr.Error()})
		}
		return encode(&schemaOutput{Columns: s.m.ColNames})
	case phaseIterate:
		return s.iterate(ctx, step)
	case phaseLocals:
		if s.loadErr != nil {
			return encode(&localsOutput{Unusable: s.loadErr.Error()})
		}
		locals, err := s.localBiclusters()
		if err != nil {
			return nil, err
		}
		out := &localsOutput{Locals: []LocalDesc{}}
		for _, l := range locals {
			out.Locals = append(out.Locals, LocalDesc{Cols: l.Cols, Count: l.Count})
		}
		return encode(out)
	case phaseTest:
		return s.test(ctx, step)
	case phaseMerge:
		return s.merge(ctx, step)
	case phaseRows:
		return s.rows(step)
	}
	return nil, fmt.Errorf("bicluster: unknown phase %q", step.Phase)
}

func (s *session) aggConfig() (secureagg.Config, error) {
	keys, err := secureagg.ReadKeys(s.p.Secrets())
	if err != nil {
		return secureagg.Config{}, fmt.Errorf("party %s has no consortium threshold key (run 'cohort keys deal'): %w", s.p.Self(), err)
	}
	return secureagg.Config{Keys: keys, FracBits: s.cfg.fracBits, ValueBits: s.cfg.valueBits,
		Decryptors: keys.Public().Threshold + 1}, nil
}

// aggregate sums v with the other parties and reports the outcome;
// valueBits > 0 replaces the configured bound on every party's values.
func (s *session) aggregate(ctx context.Context, step job.Step, v []float64, valueBits int) ([]byte, error) {
	cfg, err := s.aggConfig()
	if err != nil {
		return nil, err
	}
	if valueBits > 0 {
		cfg.ValueBits = valueBits
	}
	res, err := secureagg.Aggregate(ctx, s.p, step, cfg, v)
	out := &aggOutput{}
	if out.Report, err = secureagg.EncodeReport(s.p.Self(), step, res, err); err != nil {
		return nil, err
	}
	return encode(out)
}

// withdraw takes the party out of an aggregation it cannot compute.
func (s *session) withdraw(ctx context.Context, step job.Step, cause error) ([]byte, error) {
	if cfg, err := s.aggConfig(); err == nil {
		_ = secureagg.Withdraw(ctx, s.p, step, cfg, cause)
	}
	return encode(&aggOutput{Unusable: cause.Error()})
}

// iterations returns the committed iterations' input orders, by round,
// and the last decision.
func (s *session) iterations() ([][]int, *iterDecision, error) {
	var orders [][]int
	var last *iterDecision
	for _, rec := range s.p.History() {
		if rec.Step.Phase != phaseIterate {
			continue
		}
		if rec.Step.Round != len(orders) {
			return nil, nil, fmt.Errorf("bicluster: history holds iteration %d after %d", rec.Step.Round, len(orders))
		}
		var a iterArgs
		if err := decode(rec.Step.Args, &a); err != nil {
			return nil, nil, err
		}
		var d iterDecision
		if err := decode(rec.Decision, &d); err != nil {
			return nil, nil, err
		}
		orders = append(orders, a.Order)
		last = &d
	}
	return orders, last, nil
}

// firstDen is ΣDen, committed by the first iteration.
func (s *session) firstDen() ([]float64, error) {
	for _, rec := range s.p.History() {
		if rec.Step.Phase == phaseIterate && rec.Step.Round == 0 {
			var d iterDecision
			if err := decode(rec.Decision, &d); err != nil {
				return nil, err
			}
			return d.Den, nil
		}
	}
	return nil, fmt.Errorf("bicluster: a later iteration before the first was committed")
}

// numBits bounds a party's Num in the iterations after the first from
// the public ΣDen: a party's Num_j ≤ its Den_j (ρ ≤ 1 in Exact mode,
// μ_ij ≤ 1 = Den_ij in MeanOfMeans) ≤ ΣDen_j, all non-negative, so
// |round(Num_j·2^frac)| < 2^numBits with two bits to spare for rounding.
// On the benchmark's 0–1 data this is 28 bits instead of 62, and 50
// columns fit one packed plaintext instead of two.
func numBits(den []float64, fracBits, limit int) int {
	top := 0.0
	for _, d := range den {
		top = max(top, d)
	}
	b := 1
	if v := math.Ceil(math.Ldexp(top, fracBits)); math.IsInf(v, 0) || math.IsNaN(v) {
		return limit
	} else if v >= 1 {
		b = int(math.Floor(math.Log2(v))) + 1
	}
	return min(b+2, limit)
}

// stateAfter replays the party's rounds over the committed orders.
func (s *session) stateAfter(orders [][]int) (PartyState, error) {
	var st PartyState
	for _, o := range orders {
		next, _, err := Round(s.m, st, o, s.cfg.p.Mode)
		if err != nil {
			return st, err
		}
		st = next
	}
	return st, nil
}

func (s *session) iterate(ctx context.Context, step job.Step) ([]byte, error) {
	if s.loadErr != nil {
		return s.withdraw(ctx, step, s.loadErr)
	}
	var a iterArgs
	if err := decode(step.Args, &a); err != nil {
		return nil, err
	}
	orders, _, err := s.iterations()
	if err != nil {
		return nil, err
	}
	if len(orders) < step.Round {
		return nil, fmt.Errorf("bicluster: iteration %d started with %d committed", step.Round, len(orders))
	}
	st, err := s.stateAfter(orders[:step.Round])
	if err != nil {
		return s.withdraw(ctx, step, err)
	}
	_, c, err := Round(s.m, st, a.Order, s.cfg.p.Mode)
	if err != nil {
		return s.withdraw(ctx, step, fmt.Errorf("party %s: %w", s.p.Self(), err))
	}
	if step.Round > 0 {
		// Den is the first iteration's (decideIterate), and it bounds
		// every party's Num.
		den, err := s.firstDen()
		if err != nil {
			return nil, err
		}
		return s.aggregate(ctx, step, c.Num, numBits(den, s.cfg.fracBits, s.cfg.valueBits))
	}
	return s.aggregate(ctx, step, c.Vector(), 0)
}

// localBiclusters are the party's local biclusters under the final
// column order, recomputed from the history on first use.
func (s *session) localBiclusters() ([]Local, error) {
	if s.locals != nil {
		return s.locals, nil
	}
	orders, last, err := s.iterations()
	if err != nil {
		return nil, err
	}
	if last == nil {
		return nil, fmt.Errorf("bicluster: no committed iteration")
	}
	st, err := s.stateAfter(orders)
	if err != nil {
		return nil, err
	}
	_, bs, err := Finish(s.m, st, last.Order, s.cfg.p)
	if err != nil {
		return nil, fmt.Errorf("party %s: %w", s.p.Self(), err)
	}
	s.locals = make([]Local, 0, len(bs))
	for _, b := range bs {
		s.locals = append(s.locals, NewLocal(s.index, s.m, b))
	}
	return s.locals, nil
}

// committedLocals is the locals step's decision.
func (s *session) committedLocals() ([][]LocalDesc, error) {
	for _, rec := range s.p.History() {
		if rec.Step.Phase == phaseLocals {
			var d localsDecision
			if err := decode(rec.Decision, &d); err != nil {
				return nil, err
			}
			return d.Locals, nil
		}
	}
	return nil, fmt.Errorf("bicluster: merge before the local biclusters were committed")
}

func (s *session) merge(ctx context.Context, step job.Step) ([]byte, error) {
	if s.loadErr != nil {
		return s.withdraw(ctx, step, s.loadErr)
	}
	var a mergeArgs
	if err := decode(step.Args, &a); err != nil {
		return nil, err
	}
	if len(a.Groups) == 0 {
		return encode(&aggOutput{})
	}
	mine, err := s.localBiclusters()
	if err != nil {
		return s.withdraw(ctx, step, err)
	}
	public, err := s.committedLocals()
	if err != nil {
		return nil, err
	}
	for _, g := range a.Groups {
		for _, r := range g {
			if r.Party < 0 || r.Party >= len(public) || r.Local < 0 || r.Local >= len(public[r.Party]) {
				return nil, fmt.Errorf("bicluster: merge names local %d of party %d, not committed", r.Local, r.Party)
			}
		}
	}
	slots, n := groupSlots(a.Groups, public)
	if n == 0 {
		return encode(&aggOutput{})
	}
	v := make([]float64, 0, n)
	for k, g := range a.Groups {
		sums := make([]float64, len(slots[k]))
		for _, r := range g {
			if r.Party != s.index {
				continue
			}
			if r.Local >= len(mine) {
				return nil, fmt.Errorf("bicluster: merge names local %d of %d", r.Local, len(mine))
			}
			l := mine[r.Local]
			for i, j := range slots[k] {
				sums[i] += l.Rep[j] * float64(l.Count) // the column's sum over its rows
			}
		}
		v = append(v, sums...)
	}
	return s.aggregate(ctx, step, v, 0)
}

func (s *session) rows(step job.Step) ([]byte, error) {
	if s.loadErr != nil {
		return encode(&rowsOutput{Unusable: s.loadErr.Error()})
	}
	var a rowsArgs
	if err := decode(step.Args, &a); err != nil {
		return nil, err
	}
	mine, err := s.localBiclusters()
	if err != nil {
		return nil, err
	}
	out := &rowsOutput{Rows: make([][]string, len(a.Globals))}
	for k, g := range a.Globals {
		var rows []int
		for _, r := range g.Members {
			if r.Party == s.index && r.Local >= 0 && r.Local < len(mine) {
				rows = append(rows, mine[r.Local].Rows...)
			}
		}
		fit, err := FitRows(s.m, Global{Cols: g.Cols, Rep: g.Rep}, s.cfg.p)
		if err != nil {
			return encode(&rowsOutput{Unusable: fmt.Sprintf("party %s: %v", s.p.Self(), err)})
		}
		rows = append(rows, fit...)
		slices.Sort(rows)
		ids := []string{}
		for _, r := range slices.Compact(rows) {
			ids = append(ids, s.rowID(r))
		}
		out.Rows[k] = ids
	}
	return encode(out)
}

func (s *session) rowID(r int) string {
	if s.m.RowIDs != nil {
		return s.m.RowIDs[r]
	}
	return fmt.Sprint(r)
}
