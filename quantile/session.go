package quantile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/table"
)

// Open opens a party's session: its column from every one of its file
// tables that has it, loaded and sorted once, so each round's counts are
// binary searches; a database table's counts are one query per round,
// pushed to the database, so its values never reach the node. After a
// restart the session is rebuilt the same way, and reads the pooled counts
// it received in earlier rounds from its job scratch when it needs them. A
// party whose column cannot be read still opens, so that each round it
// withdraws at once and the job fails naming it.
func (Kind) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	prm, err := parseParams(p.Spec())
	if err != nil {
		return nil, err
	}
	s := &session{p: p, params: prm, views: map[int][]int64{}}
	s.values, s.tables, s.loadErr = loadColumn(ctx, p, prm.Column)
	return s, nil
}

// session is one party's state: its files' sorted column and its database
// tables (or why it has none), and the pooled counts it received, by round
// (kept in its job scratch too: vouch.go).
type session struct {
	p       job.Participant
	params  *Params
	values  []float64
	tables  []tableRows // the party's tables with the column, for its policy
	loadErr error

	mu    sync.Mutex
	views map[int][]int64
}

// tableRows is how many of the column's values one table holds, and, for
// a database table, its Aggregator: its counts are computed by the
// database each round instead of from the sorted values.
type tableRows struct {
	Table string
	Rows  int
	agg   table.Aggregator
}

// loadColumn collects the column's values over the party's file tables
// that have it, sorted, and how many each table holds; a database table's
// values stay in the database and only its row count is taken. A table
// with the column that is not numeric fails as when every table was
// loaded first: after any table's load error.
func loadColumn(ctx context.Context, p job.Participant, col string) ([]float64, []tableRows, error) {
	ps, ok := p.Spec().Party(p.Self())
	if !ok {
		return nil, nil, fmt.Errorf("party %q is not in the job spec", p.Self())
	}
	var out []float64
	var rows []tableRows
	var notNumeric error
	for _, ts := range ps.Tables {
		vals, tr, err := tableColumn(ctx, p, ts, col)
		switch {
		case errors.Is(err, table.ErrNoColumn):
			continue
		case errors.Is(err, table.ErrNotNumeric):
			if notNumeric == nil {
				notNumeric = fmt.Errorf("party %s: column %s of table %s is not numeric", p.Self(), col, ts.Name)
			}
			continue
		case err != nil:
			closeTables(rows)
			return nil, nil, err
		}
		out = append(out, vals...)
		rows = append(rows, tr)
	}
	if notNumeric != nil {
		closeTables(rows)
		return nil, nil, notNumeric
	}
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("party %s has no table with column %q", p.Self(), col)
	}
	slices.Sort(out)
	return out, rows, nil
}

// loadFileRows is the most rows of a file table whose values a party
// loads: a round's counts are then a binary search, where streaming the
// file again each round re-reads it whole. A larger file is streamed every
// round, as a database table is counted where it lives, so that a node's
// memory stays that of the counts: loading took about 110 bytes a row
// (2.4 GB per node for a 20,000,000-row Parquet file), and at 50,000,000
// rows the nodes, starved, stopped answering the coordinator's probes.
const loadFileRows = 1_000_000

// tableColumn reads one table's column: a small file's values, or a large
// file's or a database table's row count and Aggregator (the count is
// streamed, or pushed to the database, first). Errors are worded as job.LoadTables words them, but for the
// column's own (table.ErrNoColumn, ErrNotNumeric).
func tableColumn(ctx context.Context, p job.Participant, ts job.TableSpec, col string) ([]float64, tableRows, error) {
	schema, err := p.Spec().TableSchema(ts.Name)
	if err != nil {
		return nil, tableRows{}, err
	}
	src, err := p.TableSource(ts)
	if err != nil {
		return nil, tableRows{}, fmt.Errorf("party %s: %w", p.Self(), err)
	}
	tr := tableRows{Table: ts.Name}
	opts := table.ReadOptions{Label: table.Label(src), Log: p.Log()}
	var vals []float64
	if tr.agg, err = table.NewAggregator(src, schema, opts); err == nil {
		tr.Rows, _, err = tr.agg.CountsAtMost(ctx, col, nil)
	}
	typ := src.Type()
	if err == nil && typ != table.Postgres && typ != table.SQLite && typ != table.ClickHouse && tr.Rows <= loadFileRows {
		var t *table.Table
		tr.agg.Close()
		tr.agg = nil
		if t, err = table.Open(ctx, src, ts.Name, schema, opts); err == nil {
			vals, tr.Rows, err = numericColumn(t, col)
		}
	}
	if err != nil && tr.agg != nil {
		tr.agg.Close() // the table is not counted: no round asks it
		tr.agg = nil
	}
	if err != nil && !errors.Is(err, table.ErrNoColumn) && !errors.Is(err, table.ErrNotNumeric) {
		return nil, tableRows{}, fmt.Errorf("party %s: table %s: %w", p.Self(), ts.Name, err)
	}
	return vals, tr, err
}

// numericColumn is a loaded table's column and row count, with the
// Aggregator's errors for a missing or non-numeric column.
func numericColumn(t *table.Table, col string) ([]float64, int, error) {
	c, err := t.Column(col)
	if err != nil {
		return nil, 0, err
	}
	if t.NumRows() > 0 && c.Num == nil {
		return nil, 0, table.ErrNotNumeric
	}
	return c.Num, t.NumRows(), nil
}

// localCounts is counts over the sorted file values plus each database
// table's counts, computed by the database. A database table whose row
// count is not the one the session opened with has changed under the job,
// and its counts would not be of one table: the party withdraws.
func (s *session) localCounts(ctx context.Context, a *args) ([]float64, error) {
	out := counts(s.values, a)
	th := out
	if a.Total {
		th = out[1:]
	}
	for _, t := range s.tables {
		if t.agg == nil {
			continue
		}
		total, cs, err := t.agg.CountsAtMost(ctx, s.params.Column, a.Thresholds)
		if err != nil {
			return nil, fmt.Errorf("party %s: table %s: %w", s.p.Self(), t.Table, err)
		}
		if total != t.Rows {
			return nil, fmt.Errorf("party %s: table %s changed while the job ran; counts over it would not be of one table", s.p.Self(), t.Table)
		}
		if a.Total {
			out[0] += float64(total)
		}
		for i, c := range cs {
			th[i] += float64(c)
		}
	}
	return out, nil
}

// counts is the party's local count vector for a round: its row count when
// asked, then how many of its values are ≤ each threshold.
func counts(sorted []float64, a *args) []float64 {
	out := make([]float64, 0, a.slots())
	if a.Total {
		out = append(out, float64(len(sorted)))
	}
	for _, t := range a.Thresholds {
		out = append(out, float64(sort.Search(len(sorted), func(i int) bool { return sorted[i] > t })))
	}
	return out
}

// Step takes part in one step: a counting round, or the release.
func (s *session) Step(ctx context.Context, step job.Step) ([]byte, error) {
	switch step.Phase {
	case releaseRound.Phase:
		return s.release(step)
	case emRound.Phase:
		if !s.params.exponential() {
			return nil, fmt.Errorf("party %s refuses %s round %d: the spec asks for no exponential mechanism", s.p.Self(), step.Phase, step.Round)
		}
		return s.exponential(ctx, step)
	}
	if s.params.exponential() {
		return nil, fmt.Errorf("party %s refuses %s round %d: the spec asks for the exponential mechanism, not a search", s.p.Self(), step.Phase, step.Round)
	}
	return s.count(ctx, step)
}

// replay checks that step runs over every party of the spec, then replays
// the search over the committed rounds, vetting each round's counts
// against those this party received (vouch).
func (s *session) replay(step job.Step) (searcher, error) {
	if !slices.Equal(slices.Sorted(slices.Values(step.Parties)), slices.Sorted(slices.Values(s.p.Spec().PartyNames()))) {
		return nil, fmt.Errorf("party %s refuses %s round %d: coordinator %s runs it over other parties than the spec's "+
			"(counts at the same thresholds without a party would give away its own)", s.p.Self(), step.Phase, step.Round, step.Coordinator)
	}
	var refusal error
	srch, _, err := bisection(s.params, s.p.History(), func(rec *job.Record, d *decision) error {
		refusal = s.vouch(step, rec, d)
		return refusal
	})
	switch {
	case refusal != nil:
		return nil, refusal
	case err != nil:
		return nil, fmt.Errorf("party %s: replay the search: %w", s.p.Self(), err)
	}
	return srch, nil
}

// count takes part in one counting round, once it has checked that the
// round's thresholds are those the log determines, and keeps and reports
// the pooled counts it receives.
func (s *session) count(ctx context.Context, step job.Step) ([]byte, error) {
	return count.Serve(step, func(a args) (output, error) {
		srch, err := s.replay(step)
		if err != nil {
			return output{}, err
		}
		want := args{Total: srch.needsTotal(), Thresholds: srch.thresholds()}
		if srch.finished() || want.Total != a.Total || !slices.Equal(want.Thresholds, a.Thresholds) {
			return output{}, fmt.Errorf("party %s refuses round %d: coordinator %s asks counts at %d thresholds the log does not determine",
				s.p.Self(), step.Round, step.Coordinator, len(a.Thresholds))
		}
		var local []float64
		if exact, ok := srch.(*search); ok {
			if err := s.checkBrackets(step, exact); err != nil {
				return output{}, err
			}
			if err := s.spendBeforeLast(step, exact, a.Thresholds); err != nil {
				return output{}, err
			}
			if local, err = s.checkedCounts(ctx, step, exact, &a); err != nil {
				return output{}, err
			}
		}
		setup := secureagg.Setup{Backend: s.params.backend, Length: a.slots(), FracBits: 0, ValueBits: countBits}
		if s.params.Noise != nil {
			// Noise shares are fixed point: whole-number shares would round
			// each party's draw, and their sum would not be the mechanism's.
			setup.FracBits = noiseFracBits
			setup.Noise = func(t int) *secureagg.Noise { return s.params.roundNoise(t, a.slots()) }
		}
		cfg, _, err := secureagg.Configure(s.p.Secrets(), s.p.Self(), step, setup)
		if err != nil {
			return output{}, err
		}
		c, err := s.contribution(ctx, &a, cfg.Noise, local)
		if err != nil {
			return output{}, err
		}
		res, o, err := secureagg.Contribute(ctx, s.p, step, cfg, c)
		if w := (*secureagg.Withdrawn)(nil); errors.As(err, &w) {
			// A party that cannot count, or whose policy refuses, stays
			// out of every later round and says why.
			s.loadErr = w.Cause
			return output{Unusable: w.Cause.Error()}, nil
		}
		if err != nil {
			return output{}, err
		}
		out := output{Outcome: o}
		if res != nil && len(res.Sum) == a.slots() {
			pooled, err := s.params.pooledCounts(res.Sum)
			if err != nil {
				return output{}, fmt.Errorf("party %s: round %d: %w", s.p.Self(), step.Round, err)
			}
			if err := s.remember(step.Round, pooled); err != nil {
				return output{}, err
			}
			out.Counts = countsDigest(step, pooled)
		}
		return out, nil
	})
}

// contribution is the party's input to a round: its count vector (local,
// when the brackets' check counted it already), and
// what of its data the vector counts (each table, with the noise's draw on
// it), for the policy's guard. A party that could not read its column
// withdraws, and stays out of every later round.
//
// A count that fails because the round's context ended is not that: the
// log moved on to a new attempt of the round (a leader change, a party
// found unreachable) or the step's time ran out while the database was
// counting. The error is then this attempt's only: the party does not
// withdraw, and counts again in the round's next attempt. (Taking it for
// an unreadable column made every later attempt withdraw at once with
// "context canceled", and so failed the job: a large table's count takes
// seconds, long enough for a busy machine to re-run a step meanwhile.)
func (s *session) contribution(ctx context.Context, a *args, noise *secureagg.Noise, local []float64) (secureagg.Contribution, error) {
	c := secureagg.Contribution{Unusable: s.loadErr, Vector: local}
	if s.loadErr != nil {
		return c, nil
	}
	if c.Vector == nil {
		c.Vector, c.Unusable = s.localCounts(ctx, a)
	}
	if c.Unusable != nil {
		if ctx.Err() != nil {
			return c, fmt.Errorf("party %s: the attempt ended while it counted: %w", s.p.Self(), context.Cause(ctx))
		}
		return c, nil
	}
	for _, t := range s.tables {
		in := job.Aggregate{Table: t.Table, Column: s.params.Column, Rows: t.Rows}
		if noise != nil {
			// One row moves each count by at most 1: this party knows the
			// sensitivity without the owner's bounds or the spec's word.
			in.Noised, in.Sensitivity = true, noise.Sensitivity
			in.PerRow = countSensitivity(noise.Mechanism, a.slots())
			c.Spends = append(c.Spends, job.Spend{Table: t.Table, Column: s.params.Column, Epsilon: noise.Epsilon, Delta: noise.Delta})
		}
		c.Inputs = append(c.Inputs, in)
	}
	return c, nil
}

// Close drops the column and closes the database tables' Aggregators,
// which kept a connection each from round to round (the session is
// their owner: it asks them for every round's counts).
func (s *session) Close() {
	s.values = nil
	closeTables(s.tables)
}

// closeTables closes the tables' Aggregators.
func closeTables(tables []tableRows) {
	for _, t := range tables {
		if t.agg != nil {
			t.agg.Close()
		}
	}
}

// checkBrackets asks this node's policy, once the pooled count is known,
// whether the search may narrow every unfinished quantile's bracket
// further: not when its rank lies within the policy's k rows of either
// end, nor when the bracket holds fewer than k rows. Else the next round's
// counts would pin down a few rows' values, whether or not the value were
// released at the end (job.Release.Searching: a check, not a release).
func (s *session) checkBrackets(step job.Step, srch *search) error {
	if !srch.counted {
		return nil
	}
	for i := range srch.qs {
		if srch.done(srch.brackets[i]) {
			continue
		}
		if err := s.askRelease(step, srch, i, true); err != nil {
			return err
		}
	}
	return nil
}

// askRelease asks this node's policy, for each of the party's tables,
// about quantile i's value as the search stands: released, or still being
// searched for (checked, not counted).
func (s *session) askRelease(step job.Step, srch *search, i int, searching bool) error {
	rank, rows, in := srch.release(i)
	for _, t := range s.tables {
		r := job.Release{Table: t.Table, Column: s.params.Column, Rank: int(rank), Rows: int(rows), Bracket: int(in), Searching: searching}
		if err := s.p.Guard().Release(step, r); err != nil {
			return err
		}
	}
	return nil
}
