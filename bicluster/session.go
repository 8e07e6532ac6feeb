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
// fails naming it and why. Everything else the session uses (its row
// order, its local biclusters) is recomputed from the matrix, the seed and
// the committed history, so a session opened after a restart is the same
// as one that ran from the start.
func (Kind) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	cfg, err := parseJobParams(p.Spec())
	if err != nil {
		return nil, err
	}
	s := &session{p: p, cfg: cfg, index: slices.Index(p.Spec().PartyNames(), p.Self()), js: jointSeed(p.JobID(), p.Spec())}
	s.m, s.table, s.loadErr = loadMatrix(ctx, p)
	return s, nil
}

// loadMatrix reads the party's one bicluster table, from whatever source
// its node maps it to, and returns it with the table's name.
func loadMatrix(ctx context.Context, p job.Participant) (*Matrix, string, error) {
	ps, ok := p.Spec().Party(p.Self())
	if !ok {
		return nil, "", fmt.Errorf("party %s is not in the job spec", p.Self())
	}
	if len(ps.Tables) != 1 {
		return nil, "", fmt.Errorf("%w: %d tables, the bicluster job needs exactly one", ErrParams, len(ps.Tables))
	}
	name := ps.Tables[0].Name
	tables, err := job.LoadTables(ctx, p)
	if err != nil {
		return nil, name, err
	}
	t := tables[0]
	if t.NumRows() == 0 {
		return nil, name, fmt.Errorf("%w: table %q has no rows", ErrEmpty, t.Name)
	}
	m, err := FromTable(t)
	return m, name, err
}

// session is one party's state: its matrix and, once the iterations are
// over, its local biclusters (a cache of what the history determines).
type session struct {
	p       job.Participant
	cfg     *jobConfig
	index   int
	js      job.JointSeed // the draw of the initial column order's seed
	m       *Matrix
	table   string
	loadErr error
	locals  []Local        // nil until computed
	heard   map[int][]bool // the merge test rounds' bits, as their decryption gave them (bits.go)
}

// Close drops the matrix.
func (s *session) Close() { s.m, s.locals = nil, nil }

// Step runs one step of one of the job's rounds.
func (s *session) Step(ctx context.Context, step job.Step) ([]byte, error) {
	if job.IsSeedStep(step) {
		return s.js.Serve(s.p, step)
	}
	switch step.Phase {
	case schemaRound.Phase:
		return schemaRound.Serve(step, func(struct{}) (schemaOutput, error) {
			if s.loadErr != nil {
				return schemaOutput{}, s.loadErr
			}
			return schemaOutput{Columns: s.m.ColNames}, nil
		})
	case iterateRound.Phase:
		return iterateRound.Serve(step, func(a iterArgs) (aggOutput, error) { return s.iterate(ctx, step, a) })
	case localsRound.Phase:
		return localsRound.Serve(step, func(iterArgs) (localsOutput, error) { return s.describeLocals(step) })
	case pairTestRound.Phase:
		return pairTestRound.Serve(step, func(a testArgs) (testOutput, error) { return s.test(ctx, step, a) })
	case mergeRound.Phase:
		return mergeRound.Serve(step, func(a mergeArgs) (aggOutput, error) { return s.merge(ctx, step, a) })
	case rowsRound.Phase:
		return rowsRound.Serve(step, func(rowsArgs) (rowsOutput, error) { return s.rows(step) })
	}
	return nil, fmt.Errorf("bicluster: unknown phase %q", step.Phase)
}

// aggConfig is the config of an aggregation of length values, each below
// 2^valueBits (0: the configured bound), on the job's backend.
func (s *session) aggConfig(step job.Step, length, valueBits int) (secureagg.Config, error) {
	if valueBits <= 0 {
		valueBits = s.cfg.valueBits
	}
	cfg, _, err := secureagg.Configure(s.p.Secrets(), s.p.Self(), step,
		secureagg.Setup{Backend: s.cfg.backend, Length: length, FracBits: s.cfg.fracBits, ValueBits: valueBits})
	return cfg, err
}

// aggregate sums v, which sums rows of the party's rows, with the other
// parties once this node's policy admits it, and reports the outcome;
// valueBits > 0 replaces the configured bound on every party's values.
// The policy is asked at every step (the node records an aggregate it
// admitted once, and a share of a step records its total formed); its
// table's numeric columns, which every aggregate sums, stand as Column "".
func (s *session) aggregate(ctx context.Context, step job.Step, v []float64, rows, valueBits int) (aggOutput, error) {
	cfg, err := s.aggConfig(step, len(v), valueBits)
	if err != nil {
		return aggOutput{}, err
	}
	in := secureagg.Contribution{Vector: v, Inputs: []job.Aggregate{{Table: s.table, Rows: rows}}}
	_, o, err := secureagg.Contribute(ctx, s.p, step, cfg, in)
	if err != nil {
		return aggOutput{}, err
	}
	return aggOutput{Outcome: o}, nil
}

// withdraw takes the party out of an aggregation it cannot compute, and
// returns cause.
func (s *session) withdraw(ctx context.Context, step job.Step, cause error) (aggOutput, error) {
	// The vector's length is unknown here: with params.backend auto the
	// withdrawal speaks Paillier, and parties on the lattice backend
	// name this party missing when its abort does not decode.
	if cfg, err := s.aggConfig(step, 0, 0); err == nil {
		return aggOutput{}, secureagg.Withdraw(ctx, s.p, step, cfg, cause)
	}
	return aggOutput{}, cause
}

// iterations replays the committed iterations (replayIterations) from
// the joint seed's order: the party refuses any step before the log holds
// a joint seed its own contribution is in, naming the coordinator, so the
// initial order is never the coordinator's choice.
func (s *session) iterations(step job.Step) (*iterations, error) {
	seed, err := s.js.Seed(s.p)
	if err != nil {
		return nil, fmt.Errorf("party %s refuses %s round %d of coordinator %s: %w", s.p.Self(), step.Phase, step.Round, step.Coordinator, err)
	}
	return replayIterations(s.p.History(), seed, s.m.Cols, s.cfg.p.MaxIter)
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

func (s *session) iterate(ctx context.Context, step job.Step, a iterArgs) (aggOutput, error) {
	if s.loadErr != nil {
		return s.withdraw(ctx, step, s.loadErr)
	}
	it, err := s.iterations(step)
	if err != nil {
		return aggOutput{}, err
	}
	if it.done || step.Round != len(it.orders) || !slices.Equal(a.Order, it.next) {
		return aggOutput{}, s.refuse(step, "a column order")
	}
	st, err := s.stateAfter(it.orders)
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
		return s.aggregate(ctx, step, c.Num, s.m.Rows, numBits(it.den, s.cfg.fracBits, s.cfg.valueBits))
	}
	// The first iteration's Den is the layer's (columnWeights), checked
	// against the loaded rows; it does not depend on the row order.
	den, err := columnWeights(ctx, s.p, s.m)
	if err != nil {
		return s.withdraw(ctx, step, err)
	}
	return s.aggregate(ctx, step, withWeights(c, den, s.cfg.p.Mode).Vector(), s.m.Rows, 0)
}

// describeLocals is the locals step: the party's local biclusters' column
// sets and row counts, under the order the iterations ended with.
func (s *session) describeLocals(step job.Step) (localsOutput, error) {
	if s.loadErr != nil {
		return localsOutput{}, s.loadErr
	}
	it, err := s.iterations(step)
	if err != nil {
		return localsOutput{}, err
	}
	if !it.done || !sameArgs(step, iterArgs{Order: it.next}) {
		return localsOutput{}, s.refuse(step, "a column order")
	}
	locals, err := s.localBiclusters(step)
	if err != nil {
		return localsOutput{}, err
	}
	out := localsOutput{Locals: []LocalDesc{}}
	for _, l := range locals {
		out.Locals = append(out.Locals, LocalDesc{Cols: l.Cols, Count: l.Count})
	}
	return out, nil
}

// localBiclusters are the party's local biclusters under the final
// column order, recomputed from the history on first use.
func (s *session) localBiclusters(step job.Step) ([]Local, error) {
	if s.locals != nil {
		return s.locals, nil
	}
	it, err := s.iterations(step)
	if err != nil {
		return nil, err
	}
	if !it.done {
		return nil, fmt.Errorf("bicluster: the iterations are not over")
	}
	st, err := s.stateAfter(it.orders)
	if err != nil {
		return nil, err
	}
	_, bs, err := Finish(s.m, st, it.next, s.cfg.p)
	if err != nil {
		return nil, fmt.Errorf("party %s: %w", s.p.Self(), err)
	}
	s.locals = make([]Local, 0, len(bs))
	for _, b := range bs {
		s.locals = append(s.locals, NewLocal(s.index, s.m, b))
	}
	return s.locals, nil
}

// merge sums, per kept group and per published column of the group, the
// party's members' column sums, in one aggregation. It takes part only
// when every group gives its slots contributions from minContributors
// parties, the groups are those the committed history gives, and its
// node's floor on parties holds for each group's contributors
// (slotFloors).
func (s *session) merge(ctx context.Context, step job.Step, a mergeArgs) (aggOutput, error) {
	if s.loadErr != nil {
		return s.withdraw(ctx, step, s.loadErr)
	}
	for _, g := range a.Groups {
		if n, least := contributors(g), max(s.cfg.minGroupParties, minContributors); n < least {
			return aggOutput{}, fmt.Errorf("party %s refuses %s round %d: coordinator %s asks for the sums of a group with contributions from %d of the %d parties a decrypted slot needs",
				s.p.Self(), step.Phase, step.Round, step.Coordinator, n, least)
		}
	}
	public, err := committedLocals(s.p.History())
	if err != nil {
		return aggOutput{}, err
	}
	if err := s.checkBits(step); err != nil {
		return aggOutput{}, err
	}
	groups, err := mergeGroups(s.p.History(), public, s.cfg.keep())
	if err != nil {
		return aggOutput{}, err
	}
	if !sameArgs(step, mergeArgs{Groups: groups}) {
		return aggOutput{}, s.refuse(step, "groups")
	}
	if err := s.slotFloors(step, groups); err != nil {
		return aggOutput{}, err
	}
	slots, n := groupSlots(groups, public)
	if n == 0 {
		return aggOutput{}, nil
	}
	mine, err := s.localBiclusters(step)
	if err != nil {
		return s.withdraw(ctx, step, err)
	}
	v := make([]float64, 0, n)
	rows := 0
	for k, g := range groups {
		sums := make([]float64, len(slots[k]))
		for _, r := range g {
			if r.Party != s.index {
				continue
			}
			if r.Local >= len(mine) {
				return aggOutput{}, fmt.Errorf("bicluster: the committed locals name local %d of this party's %d", r.Local, len(mine))
			}
			l := mine[r.Local]
			rows += l.Count
			for i, j := range slots[k] {
				sums[i] += l.Rep[j] * float64(l.Count) // the column's sum over its rows
			}
		}
		v = append(v, sums...)
	}
	return s.aggregate(ctx, step, v, rows, 0)
}

// slotFloors asks this node's policy about every group of the merge on its
// own: each group's slots are decrypted as sums over its contributors
// alone, so the floor on parties (policy floors.min_parties) applies to
// them, not to the step's parties. The question names no table (Guard's
// floor-only check): the party's data in the merge is put to the policy,
// and recorded, once for the whole step (aggregate). A group below the
// floor is refused before anything of the step is sent, naming the rule,
// the group and the coordinator, never the floor or the group's count.
func (s *session) slotFloors(step job.Step, groups [][]Ref) error {
	names := s.p.Spec().PartyNames()
	for k, g := range groups {
		var parties []string
		for _, r := range g {
			if r.Party >= 0 && r.Party < len(names) && !slices.Contains(parties, names[r.Party]) {
				parties = append(parties, names[r.Party])
			}
		}
		if err := s.p.Guard().Aggregate(step, job.Aggregate{Parties: parties}); err != nil {
			return fmt.Errorf("party %s refuses %s round %d of coordinator %s: the sums of group %d: %w",
				s.p.Self(), step.Phase, step.Round, step.Coordinator, k, err)
		}
	}
	return nil
}

// rows is the party's rows of each global bicluster: its members' rows
// and the rows that fit the global's model (FitRows), as ids.
func (s *session) rows(step job.Step) (rowsOutput, error) {
	if s.loadErr != nil {
		return rowsOutput{}, s.loadErr
	}
	public, err := committedLocals(s.p.History())
	if err != nil {
		return rowsOutput{}, err
	}
	if err := s.checkBits(step); err != nil {
		return rowsOutput{}, err
	}
	globals, err := committedGlobals(s.p.History(), public, s.cfg.keep(), s.m.Cols)
	if err != nil {
		return rowsOutput{}, err
	}
	if !sameArgs(step, rowsArgs{Globals: globals}) {
		return rowsOutput{}, s.refuse(step, "global biclusters")
	}
	mine, err := s.localBiclusters(step)
	if err != nil {
		return rowsOutput{}, err
	}
	out := rowsOutput{Rows: make([][]string, len(globals))}
	for k, g := range globals {
		var rows []int
		for _, r := range g.Members {
			if r.Party == s.index && r.Local < len(mine) {
				rows = append(rows, mine[r.Local].Rows...)
			}
		}
		fit, err := FitRows(s.m, Global{Cols: g.Cols, Rep: g.Rep}, s.cfg.p)
		if err != nil {
			return rowsOutput{}, fmt.Errorf("party %s: %w", s.p.Self(), err)
		}
		rows = append(rows, fit...)
		slices.Sort(rows)
		ids := []string{}
		for _, r := range slices.Compact(rows) {
			ids = append(ids, s.rowID(r))
		}
		out.Rows[k] = ids
	}
	return out, nil
}

func (s *session) rowID(r int) string {
	if s.m.RowIDs != nil {
		return s.m.RowIDs[r]
	}
	return fmt.Sprint(r)
}
