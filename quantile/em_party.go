package quantile

import (
	"context"
	"crypto/rand"
	"fmt"
	"math"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/mpc"
	"github.com/cohortdm/cohort/mpc/mpcjob"
	"github.com/cohortdm/cohort/secureagg"
)

// This file is a party's side of the exponential mechanism. Every party
// counts its values at every candidate of the grid and draws its shares of
// the noise; the parties share both among themselves (Shamir, package
// mpc), add them up, and compute for each quantile q and candidate y the
// score Z(y) − |S·c(y) − round(q·S)·N|, S = emScale, c(y) the pooled count
// of values ≤ y, N the pooled row count and Z(y) the sum of the parties'
// noise shares, Exp(2S/ε) for any honest parties' shares alone. The
// candidate of the largest score is opened and nothing else: no count, no
// utility, no noise. That is report-noisy-max with exponential noise
// (ε-DP; see emNoiseScale).

// exponential takes part in the mechanism's step.
func (s *session) exponential(ctx context.Context, step job.Step) ([]byte, error) {
	return emRound.Serve(step, func(a emArgs) (emOutput, error) {
		if !slices.Equal(slices.Sorted(slices.Values(step.Parties)), slices.Sorted(slices.Values(s.p.Spec().PartyNames()))) {
			return emOutput{}, fmt.Errorf("party %s refuses %s round %d: coordinator %s runs it over other parties than the spec's",
				s.p.Self(), step.Phase, step.Round, step.Coordinator)
		}
		if a.Rounds != s.params.rounds {
			return emOutput{}, fmt.Errorf("party %s refuses %s round %d: coordinator %s asks for a grid the spec does not determine",
				s.p.Self(), step.Phase, step.Round, step.Coordinator)
		}
		if s.loadErr != nil {
			// An error, not an output: the runtime tells the other
			// parties at once, who would otherwise wait in the
			// computation for this party's shares until the step's end.
			return emOutput{}, s.loadErr
		}
		input, err := s.emInput(ctx, step)
		if err != nil {
			return emOutput{}, err
		}
		idx, err := s.draw(ctx, step, input)
		if err != nil {
			return emOutput{}, fmt.Errorf("party %s: exponential mechanism: %w", s.p.Self(), err)
		}
		return emOutput{Indices: idx}, nil
	})
}

// emInput is the party's input to the computation, once its policy has
// admitted it: its row count, its counts at every candidate, then its
// noise shares, one per quantile and candidate, in the computation's
// whole units.
func (s *session) emInput(ctx context.Context, step job.Step) ([]mpc.Elem, error) {
	grid := s.params.emGrid()
	local, err := s.localCounts(ctx, &args{Total: true, Thresholds: grid})
	if err != nil {
		return nil, err
	}
	parties := len(step.Parties)
	if local[0] > float64(int64(1)<<emRowsBits/int64(parties)) {
		return nil, fmt.Errorf("party %s: the exponential mechanism takes at most 2^%d rows in all, %d parties' share of which this party exceeds",
			s.p.Self(), emRowsBits, parties)
	}
	// The draws spend when they are opened (open): an attempt cut short
	// before that has opened nothing, and its re-run spends once.
	c := secureagg.Contribution{}
	for _, t := range s.tables {
		c.Inputs = append(c.Inputs, job.Aggregate{Table: t.Table, Column: s.params.Column, Rows: t.Rows,
			Noised: true, Sensitivity: 1, PerRow: 1})
	}
	if err := secureagg.Admit(s.p.Guard(), step, c); err != nil {
		return nil, err
	}
	m := len(s.params.Quantiles) * len(grid)
	noise, err := secureagg.ExponentialShares(rand.Reader, m, s.params.emNoiseScale(), parties-s.params.emColluders(parties))
	if err != nil {
		return nil, err
	}
	out := make([]mpc.Elem, 0, len(local)+m)
	for _, v := range local {
		out = append(out, mpc.FromInt(int64(v)))
	}
	for _, z := range noise {
		out = append(out, mpc.FromInt(int64(math.Round(z))))
	}
	return out, nil
}

// draw runs the computation over the step's parties and returns the
// opened candidate of every quantile.
func (s *session) draw(ctx context.Context, step job.Step, input []mpc.Elem) ([]int, error) {
	net, self, err := mpcjob.New(s.p, step)
	if err != nil {
		return nil, err
	}
	n := len(step.Parties)
	party, err := mpc.NewParty(self, n, (n-1)/2, net, rand.Reader)
	if err != nil {
		return nil, err
	}
	all, err := party.InputAll(ctx, input)
	if err != nil {
		return nil, err
	}
	sum := make([]mpc.Elem, len(input))
	for _, sh := range all {
		sum = mpc.Add(sum, sh)
	}
	candidates := 1<<s.params.rounds + 1
	cells := 1 + candidates // N and the counts, then the noise
	counts := sum[1:cells]
	out := make([]int, len(s.params.Quantiles))
	for i, q := range s.params.Quantiles {
		// S·c(y) − round(q·S)·N, then its magnitude, below 2^44.
		target := mpc.MulPublic(mpc.FromInt(int64(math.Round(q*emScale))), sum[:1])[0]
		targets := make([]mpc.Elem, candidates)
		for j := range targets {
			targets[j] = target
		}
		diff := mpc.Sub(mpc.MulPublic(mpc.FromInt(emScale), counts), targets)
		util, err := party.Abs(ctx, diff, emBits-1)
		if err != nil {
			return nil, err
		}
		noise := sum[cells+i*candidates : cells+(i+1)*candidates]
		idx, _, err := party.Argmax(ctx, mpc.Sub(noise, util), emBits)
		if err != nil {
			return nil, err
		}
		if out[i], err = s.open(ctx, step, party, idx, candidates); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// open opens one quantile's draw, once this party's policy has recorded
// it: the draw spends ε/|quantiles| on each of the party's datasets'
// column (a refusal withholds this party's share of the index, and the
// draw is never opened), and it is formed from every party's data.
func (s *session) open(ctx context.Context, step job.Step, party *mpc.Party, idx mpc.Elem, candidates int) (int, error) {
	for _, t := range s.tables {
		if err := s.p.Guard().Spend(step, job.Spend{Table: t.Table, Column: s.params.Column, Epsilon: s.params.emEpsilon()}); err != nil {
			return 0, err
		}
	}
	if err := s.p.Guard().Formed(step); err != nil {
		return 0, err
	}
	return party.OpenIndex(ctx, idx, candidates)
}
