package quantile

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/mpc/mpcjob"
	"github.com/cohortdm/cohort/wire"
)

// This file is the coordinator's side and the params of the exponential
// mechanism (params.noise.mechanism: exponential; the package doc's
// Differential privacy). Every quantile is drawn once, in one step, over
// the grid the noised search bisects; the party's side is em_party.go.

// Exponential is the mechanism that draws each quantile from the grid by
// report-noisy-max with exponential noise inside a multiparty computation
// (package mpc), instead of bisecting with noisy counts.
const Exponential = "exponential"

const (
	// maxEMRounds bounds the grid of the exponential mechanism: 2^12 cells,
	// 4,097 candidates, each one comparison in the computation's argmax.
	maxEMRounds = 12
	// emScale is the resolution of q in the computation: the utility
	// |c(y) − q·N| is computed as |emScale·c(y) − round(q·emScale)·N|, in
	// whole numbers, so q is taken to 1/65,536.
	emScale = 1 << 16
	// emRowsBits bounds the pooled row count (2^28) so that every utility
	// fits the computation's signed values (emBits).
	emRowsBits = 28
	// emBits is the width of the computation's signed values: scaled
	// utilities below 2^44 and noise below 2^44 in all.
	emBits = 47
	// emNoiseBits bounds the parties' noise shares together.
	emNoiseBits = 44
	// emTail is the bound, in units of the noise's scale, of one party's
	// share of the noise (secureagg's tailFactor).
	emTail = 64
)

// emArgs are the exponential mechanism's public input: the grid's depth,
// which every party derives from the spec too.
type emArgs struct {
	Rounds int `msgpack:"rounds"`
}

// emOutput is a party's output: the grid indices the computation opened,
// one per quantile. A party that cannot count its column fails the step
// instead, so that the runtime tells the others at once.
type emOutput struct {
	Indices []int `msgpack:"indices"`
}

// emDecision is what the coordinator commits: the indices every party
// opened, or the parties to wait for before a new draw.
type emDecision struct {
	Indices []int             `msgpack:"indices"`
	Retry   map[string]string `msgpack:"retry"`
}

// emRound is the mechanism's one step; a retry is a new draw (and spends
// again).
var emRound = job.Round[emArgs, emOutput, emDecision]{Phase: "em"}

// parseEM checks an exponential mechanism's params: ε only (no δ, no
// sensitivity: one row moves |c(y) − q·N| by at most 1), a public range
// and a precision fixing the grid, at least three parties (an honest
// majority of which the computation needs), and a budget per quantile that
// keeps the noise within the computation's values.
func (p *Params) parseEM(spec *job.Spec) error {
	n := p.Noise
	if !(n.Epsilon > 0) || math.IsInf(n.Epsilon, 0) {
		return spec.Errorf("params.noise.epsilon", "must be a finite number > 0")
	}
	if n.Delta != 0 {
		return spec.Errorf("params.noise.delta", "the exponential mechanism takes no delta (it is ε-DP)")
	}
	if n.Sensitivity != 0 {
		return spec.Errorf("params.noise.sensitivity", "is fixed by the job: one row moves each utility by at most 1, whatever its value")
	}
	parties := len(spec.PartyNames())
	if parties < 3 {
		return spec.Errorf("parties", "the exponential mechanism computes among the parties with an honest majority: it needs at least 3, not %d", parties)
	}
	if c := n.Colluders; c != nil && (*c < 0 || *c >= parties) {
		return spec.Errorf("params.noise.colluders", "must be in [0, %d]", parties-1)
	}
	if p.Range == nil {
		return spec.Errorf("params.range", "the exponential mechanism draws from a grid over a public range [a, b]")
	}
	if p.Precision == 0 {
		return spec.Errorf("params.precision", "must be > 0 for the exponential mechanism: it fixes the grid")
	}
	var err error
	if p.rounds, err = noisyRounds(p.Range[0], p.Range[1], p.Precision); err != nil || p.rounds > maxEMRounds {
		return spec.Errorf("params.precision", "is too fine for params.range: the exponential mechanism draws from at most 2^%d cells", maxEMRounds)
	}
	if float64(parties)*p.emNoiseScale()*emTail >= 1<<emNoiseBits {
		return spec.Errorf("params.noise.epsilon", "is too small per quantile for the computation's values")
	}
	return nil
}

// exponential reports whether the params ask for the exponential
// mechanism.
func (p *Params) exponential() bool { return p.Noise != nil && p.Noise.Mechanism == Exponential }

// emEpsilon is each quantile's share of ε (basic composition).
func (p *Params) emEpsilon() float64 { return p.Noise.Epsilon / float64(len(p.Quantiles)) }

// emNoiseScale is the scale of the exponential noise in the computation's
// units: report-noisy-max with Exp(2Δ/ε) noise is ε-DP (Ding, Kifer et
// al., "The permute-and-flip mechanism is identical to report-noisy-max
// with exponential noise"), Δ = 1, times emScale.
func (p *Params) emNoiseScale() float64 { return 2 * emScale / p.emEpsilon() }

// emColluders is how many parties' noise shares an adversary may know:
// the spec's, else the computation's threshold ⌊(n−1)/2⌋, the most
// parties that together learn nothing of it.
func (p *Params) emColluders(parties int) int {
	if c := p.Noise.Colluders; c != nil {
		return *c
	}
	return (parties - 1) / 2
}

// emGrid lists the candidates: the noised search's grid points value(j),
// j = 0 … 2^rounds.
func (p *Params) emGrid() []float64 {
	s := newNoisySearch(p.Quantiles, p.Range[0], p.Range[1], p.rounds)
	out := make([]float64, 0, 1<<p.rounds+1)
	for j := int64(0); j <= 1<<p.rounds; j++ {
		out = append(out, s.value(j))
	}
	return out
}

// emReport is the result's account of the mechanism.
func (p *Params) emReport(parties int) map[string]any {
	return map[string]any{"mechanism": Exponential, "epsilon": p.Noise.Epsilon, "quantile_epsilon": p.emEpsilon(),
		"candidates": 1<<p.rounds + 1, "colluders": p.emColluders(parties)}
}

// coordinateEM draws every quantile in one step over every party, again
// (a new draw, spending again) while parties are missing, up to
// params.retries times in a row.
func coordinateEM(ctx context.Context, c job.Coordinator, p *Params) (job.Result, error) {
	parties := c.Spec().PartyNames()
	grid := p.emGrid()
	for round := 0; ; round++ {
		call := job.Call[emArgs]{Round: round, Parties: parties, Args: emArgs{Rounds: p.rounds}, TimeoutMS: p.TimeoutMS}
		done, err := emRound.Run(ctx, c, call, func(o *job.Outcome[emOutput]) (emDecision, error) {
			return decideEM(o, len(p.Quantiles), len(grid))
		})
		if err != nil {
			return nil, err
		}
		d := done.Decision
		if d.Indices == nil {
			if round >= p.Retries {
				return nil, fmt.Errorf("quantile: the exponential mechanism produced no draw %d times in a row: %s", round+1, describe(d.Retry))
			}
			if !done.Replayed {
				if err := wait(ctx, round+1); err != nil {
					return nil, err
				}
			}
			continue
		}
		out := make([]Quantile, len(p.Quantiles))
		for i, q := range p.Quantiles {
			out[i] = Quantile{Q: q, Value: grid[d.Indices[i]]}
		}
		res := job.Result{"quantiles": out, "precision": p.Precision, "noise": p.emReport(len(parties))}
		if round > 0 {
			res["retried_rounds"] = round
		}
		return res, nil
	}
}

// decideEM reads the parties' outputs: the indices, when every party
// that reported opened the same ones; else, when every failed party was
// silent or lost a peer mid-computation, the parties to wait for; the job
// fails when a party refuses or cannot count, or two parties disagree.
func decideEM(o *job.Outcome[emOutput], quantiles, candidates int) (emDecision, error) {
	var indices []int
	for _, name := range slices.Sorted(maps.Keys(o.Results)) {
		out := o.Results[name]
		switch {
		case len(out.Indices) != quantiles || slices.ContainsFunc(out.Indices, func(i int) bool { return i < 0 || i >= candidates }):
			return emDecision{}, fmt.Errorf("quantile: party %s reported %d draws, want %d within the grid", name, len(out.Indices), quantiles)
		case indices == nil:
			indices = out.Indices
		case !slices.Equal(indices, out.Indices):
			return emDecision{}, errors.New("quantile: the parties opened different draws of the exponential mechanism")
		}
	}
	if indices != nil {
		// The draw was opened to every party that finished: a party whose
		// output is missing does not undo it, and a new draw would spend
		// again and tell more.
		return emDecision{Indices: indices}, nil
	}
	if !o.Curable(mpcjob.ErrPeer) {
		// A refusal, or a failure a new draw would meet again.
		return emDecision{}, fmt.Errorf("quantile: %s", describe(o.Failed))
	}
	retry := maps.Clone(o.Failed)
	if len(retry) == 0 {
		retry = map[string]string{"": "no party opened a draw"}
	}
	return emDecision{Retry: retry}, nil
}

// emUses is what the exponential mechanism discloses of a party's data:
// shares of its counts inside the computation (secret-share), and ε from
// each dataset's budget; no exact value.
func emUses(spec *job.Spec, party, column string, epsilon float64) []job.Use {
	uses := job.AggregateUses(spec, party, column, epsilon, 0)
	for i := range uses {
		uses[i].Form = wire.DiscloseSecretShare
	}
	return uses
}
