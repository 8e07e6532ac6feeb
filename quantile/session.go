package quantile

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
	"github.com/cohortdm/cohort/secureagg"
)

// Open opens a party's session: its column, from every one of its tables
// that has it, loaded and sorted once, so each round's counts are binary
// searches. After a restart the session is rebuilt the same way: it holds
// nothing else. A party whose column cannot be read still opens, so that
// each round it withdraws at once and the job fails naming it.
func (Kind) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	prm, err := parseParams(p.Spec())
	if err != nil {
		return nil, err
	}
	s := &session{p: p}
	s.values, s.loadErr = loadColumn(ctx, p, prm.Column)
	return s, nil
}

// session is one party's state: its sorted column (or why it has none).
type session struct {
	p       job.Participant
	values  []float64
	loadErr error
}

// loadColumn collects the column's values over the party's tables that
// have it (job.NumericColumn), sorted.
func loadColumn(ctx context.Context, p job.Participant, col string) ([]float64, error) {
	out, err := job.NumericColumn(ctx, p, col)
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
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

// Step takes part in one counting round.
func (s *session) Step(ctx context.Context, step job.Step) ([]byte, error) {
	a, err := decodeArgs(step.Args)
	if err != nil {
		return nil, err
	}
	keys, err := secureagg.ReadKeys(s.p.Secrets())
	if err != nil {
		return nil, fmt.Errorf("party %s has no consortium threshold key (run 'cohort keys deal'): %w", s.p.Self(), err)
	}
	// Ask t+1 parties for decryption shares (more only if some fail): the
	// shares and their proofs are most of a round's cost.
	cfg := secureagg.Config{Keys: keys, FracBits: 0, ValueBits: countBits, Decryptors: keys.Public().Threshold + 1}
	if s.loadErr != nil {
		_ = secureagg.Withdraw(ctx, s.p, step, cfg, s.loadErr)
		return encodeOutput(&output{Unusable: s.loadErr.Error()})
	}
	res, err := secureagg.Aggregate(ctx, s.p, step, cfg, counts(s.values, a))
	rep, err := secureagg.EncodeReport(s.p.Self(), step, res, err)
	if err != nil {
		return nil, err
	}
	return encodeOutput(&output{Report: rep})
}

// Close drops the column.
func (s *session) Close() { s.values = nil }

// output is a party's step output, to the coordinator alone: the
// aggregation's outcome (secureagg.EncodeReport: the pooled counts from the
// root, whom it missed from the others), or why this party cannot count
// its column at all.
type output struct {
	Report   []byte `msgpack:"report"`
	Unusable string `msgpack:"unusable"`
}

func encodeOutput(o *output) ([]byte, error) {
	b, err := protocol.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("quantile: encode output: %w", err)
	}
	return b, nil
}

func decodeOutput(b []byte) (*output, error) {
	var o output
	if err := protocol.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("quantile: decode output: %w", err)
	}
	if (o.Unusable == "") == (o.Report == nil) {
		return nil, fmt.Errorf("quantile: decode output: %w: needs a report or a reason, not both", protocol.ErrMalformed)
	}
	return &o, nil
}
