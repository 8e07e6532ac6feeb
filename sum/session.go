package sum

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/table"
)

// Open opens a party's session: its local sum per table, read once, and
// what it remembers of rounds whose total it saw formed. A party that
// cannot compute its sum still opens, so that each round it withdraws from
// the aggregation at once and the others go on without it.
func (Kind) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	prm, err := parseParams(p.Spec())
	if err != nil {
		return nil, err
	}
	s := &session{p: p, params: prm}
	s.tables, s.localErr = localSums(ctx, p, prm.Column, prm.Noise != nil)
	if s.formed, err = s.readFormed(); err != nil {
		return nil, err
	}
	return s, nil
}

// session is one party's state.
type session struct {
	p        job.Participant
	params   *Params
	tables   []tableSum // this party's tables with the column
	localErr error
	// formed is the round whose total this party saw formed, if any:
	// no later round over other parties may run here.
	formed *formedRound
}

// tableSum is one table's share of the party's local sum. PerRow is, for
// a noised sum, how far one row can move it: its values are clamped to the
// bounds the organisation declares (0 when it declares none, and the
// policy then refuses the noise).
type tableSum struct {
	Table  string
	Rows   int
	Sum    float64
	PerRow float64
}

// formedRound is a round whose total a party saw formed, kept in its
// scratch so that a restart does not forget it.
type formedRound struct {
	Round   int      `json:"round"`
	Parties []string `json:"parties"`
}

// formedName is the scratch file that keeps formedRound.
func (s *session) formedName() string { return "jobs/" + s.p.JobID() + "/sum-formed.json" }

func (s *session) readFormed() (*formedRound, error) {
	b, err := s.p.Secrets().ReadSecret(s.formedName())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("party %s: read its record of a formed total: %w", s.p.Self(), err)
	}
	var f formedRound
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("party %s: its record of a formed total is unreadable: %w", s.p.Self(), err)
	}
	return &f, nil
}

// Step takes part in one aggregation round, unless it is a round over
// other parties than a round whose total this party saw formed.
func (s *session) Step(ctx context.Context, step job.Step) ([]byte, error) {
	return aggregate.Serve(step, func(struct{}) (output, error) {
		if f := s.formed; f != nil && !slices.Equal(f.Parties, step.Parties) {
			return output{}, fmt.Errorf("party %s refuses round %d over %v: round %d's total over %v was formed here, "+
				"and their difference would be the dropped parties' inputs (coordinator %s)", s.p.Self(), step.Round, step.Parties, f.Round, f.Parties, step.Coordinator)
		}
		cfg, t, err := secureagg.Configure(s.p.Secrets(), s.p.Self(), step, secureagg.Setup{Backend: s.params.backend, Length: 1,
			FracBits: s.params.FracBits, ValueBits: s.params.ValueBits, Noise: s.params.noise})
		if err != nil {
			return output{}, err
		}
		_, o, err := secureagg.Contribute(ctx, s.p, step, cfg, s.contribution(cfg.Noise))
		if err != nil {
			return output{}, err
		}
		if o.Formed {
			if err := s.rememberFormed(step); err != nil {
				return output{}, err
			}
		}
		return output{Outcome: *o, Threshold: t}, nil
	})
}

// contribution is the party's input to a round: its total, and what of
// its data the total sums (each table, with the noise's draw on it), for
// the policy's guard. A party that could not compute its sum withdraws.
func (s *session) contribution(noise *secureagg.Noise) secureagg.Contribution {
	c := secureagg.Contribution{Vector: []float64{s.total()}, Unusable: s.localErr}
	for _, t := range s.tables {
		a := job.Aggregate{Table: t.Table, Column: s.params.Column, Rows: t.Rows, Noised: noise != nil, PerRow: t.PerRow}
		if noise != nil {
			a.Sensitivity = noise.Sensitivity
			c.Spends = append(c.Spends, job.Spend{Table: t.Table, Column: s.params.Column, Epsilon: noise.Epsilon, Delta: noise.Delta})
		}
		c.Inputs = append(c.Inputs, a)
	}
	return c
}

// rememberFormed keeps, in the job's scratch, that this party saw a
// round's total formed.
func (s *session) rememberFormed(step job.Step) error {
	if s.formed != nil {
		return nil
	}
	s.formed = &formedRound{Round: step.Round, Parties: slices.Clone(step.Parties)}
	b, err := json.Marshal(s.formed)
	if err != nil {
		return err
	}
	if err := s.p.Secrets().WriteSecret(s.formedName(), b); err != nil {
		return fmt.Errorf("party %s: keep the record of a formed total: %w", s.p.Self(), err)
	}
	return nil
}

func (s *session) total() float64 {
	total := 0.0
	for _, t := range s.tables {
		total += t.Sum
	}
	return total
}

// Close releases nothing: the session holds a few numbers.
func (s *session) Close() {}

// localSums sums the column over each of the party's tables that has it,
// where the table lives (table.Aggregator: one query for a database, a
// stream for a file), so a sum never loads a table. A table with a header
// and no rows contributes zero; a party with no such table, or whose
// column is not numeric, gets an error naming it, as when the tables were
// loaded: any table's load error first, then the first not numeric. For a
// noised sum each value is first clamped to the bounds the organisation
// declares for the column (job.Guard.Bounds).
func localSums(ctx context.Context, p job.Participant, col string, noised bool) ([]tableSum, error) {
	spec := p.Spec()
	ps, ok := spec.Party(p.Self())
	if !ok {
		return nil, fmt.Errorf("party %q is not in the job spec", p.Self())
	}
	var out []tableSum
	var notNumeric error
	for _, ts := range ps.Tables {
		sum, err := tableSumOf(ctx, p, ts, col, noised)
		switch {
		case errors.Is(err, table.ErrNoColumn):
			continue
		case errors.Is(err, table.ErrNotNumeric):
			if notNumeric == nil {
				notNumeric = fmt.Errorf("party %s: column %s of table %s is not numeric", p.Self(), col, ts.Name)
			}
			continue
		case err != nil:
			return nil, err
		}
		out = append(out, sum)
	}
	if notNumeric != nil {
		return nil, notNumeric
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("party %s has no table with column %q", p.Self(), col)
	}
	return out, nil
}

// tableSumOf is one table's sum, its errors worded as job.LoadTables
// words them (the column's own are table.ErrNoColumn and ErrNotNumeric).
func tableSumOf(ctx context.Context, p job.Participant, ts job.TableSpec, col string, noised bool) (tableSum, error) {
	schema, err := p.Spec().TableSchema(ts.Name)
	if err != nil {
		return tableSum{}, err
	}
	src, err := p.TableSource(ts)
	if err != nil {
		return tableSum{}, fmt.Errorf("party %s: %w", p.Self(), err)
	}
	out := tableSum{Table: ts.Name}
	var clamp *[2]float64
	if lo, hi, bounded := p.Guard().Bounds(ts.Name, col); noised && bounded {
		out.PerRow = job.PerRow(lo, hi)
		clamp = &[2]float64{lo, hi}
	}
	agg, err := table.NewAggregator(src, schema, table.ReadOptions{Label: table.Label(src), Log: p.Log()})
	if err == nil {
		out.Sum, out.Rows, err = agg.ColumnSum(ctx, col, clamp)
		agg.Close() // one aggregate: nothing to keep its connection for
	}
	if err != nil && !errors.Is(err, table.ErrNoColumn) && !errors.Is(err, table.ErrNotNumeric) {
		return tableSum{}, fmt.Errorf("party %s: table %s: %w", p.Self(), ts.Name, err)
	}
	return out, err
}
