// Package sum is the plumbing job: every party sums one numeric column of
// its own tables and the consortium learns the total, over threshold secure
// aggregation (package secureagg).
//
// Leakage profile: a party sends only ciphertexts (its encrypted local sum,
// or its subtree's product), a decryption share with its proof, and the
// public result. Every party learns the total, which parties' inputs are in
// it and which were excluded; no party, the coordinator included, learns
// another party's local sum. With params.noise the total carries
// differential-privacy noise added inside the encryption.
//
// What goes where: each round is one step; every party's output (its
// secureagg outcome) goes to the coordinator alone; the log holds the
// round's public decision: the result (the total, who is in it, who was
// excluded from decryption and why), or the parties to drop before the next
// round, or why the aggregation failed. A party's session holds its local
// sum, read once from its tables.
//
// Faults: parties that report nothing in time, or whose subtree input never
// reached the root, are excluded and the aggregation is re-run without
// them (a new round), as long as enough remain to decrypt; the result names
// them. A party whose decryption share fails verification is excluded from
// decryption only (its input stays in the total) and named.
package sum

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
	"github.com/cohortdm/cohort/secureagg"
)

// Kind is the sum job.
type Kind struct{}

// UsesThresholdKey: every round is a secure aggregation under the
// consortium's threshold key (job.KeyUser).
func (Kind) UsesThresholdKey() bool { return true }

const phase = "aggregate"

// maxTimeout bounds params.timeout_ms: a day.
const maxTimeout = 24 * time.Hour

// Params are the job's parameters (spec params), with their defaults in
// defaultParams.
type Params struct {
	Column    string       `yaml:"column"`
	FracBits  int          `yaml:"frac_bits"`
	ValueBits int          `yaml:"value_bits"`
	TimeoutMS int64        `yaml:"timeout_ms"`
	Noise     *NoiseParams `yaml:"noise"`
}

// NoiseParams ask for differential-privacy noise inside the sum.
type NoiseParams struct {
	Mechanism   string  `yaml:"mechanism"`
	Epsilon     float64 `yaml:"epsilon"`
	Delta       float64 `yaml:"delta"`
	Sensitivity float64 `yaml:"sensitivity"`
}

func parseParams(spec *job.Spec) (*Params, error) {
	p := &Params{FracBits: 16, ValueBits: 62}
	if err := spec.DecodeParams(p); err != nil {
		return nil, err
	}
	if p.Column == "" {
		return nil, spec.Errorf("params.column", "the sum job needs the name of a numeric column")
	}
	if p.FracBits < 0 || p.FracBits > 1000 {
		return nil, spec.Errorf("params.frac_bits", "must be in [0, 1000], not %d", p.FracBits)
	}
	if p.ValueBits < 1 || p.ValueBits > 1000 {
		return nil, spec.Errorf("params.value_bits", "must be in [1, 1000], not %d", p.ValueBits)
	}
	if p.TimeoutMS < 0 || p.TimeoutMS > maxTimeout.Milliseconds() {
		return nil, spec.Errorf("params.timeout_ms", "must be in [1, %d] (a day), not %d", maxTimeout.Milliseconds(), p.TimeoutMS)
	}
	if n := p.Noise; n != nil {
		m := secureagg.Mechanism(n.Mechanism)
		if m != secureagg.Laplace && m != secureagg.Gaussian {
			return nil, spec.Errorf("params.noise.mechanism", "must be laplace or gaussian, not %q", n.Mechanism)
		}
	}
	return p, nil
}

func (p *Params) noise() *secureagg.Noise {
	if p.Noise == nil {
		return nil
	}
	return &secureagg.Noise{Mechanism: secureagg.Mechanism(p.Noise.Mechanism), Epsilon: p.Noise.Epsilon,
		Delta: p.Noise.Delta, Sensitivity: p.Noise.Sensitivity}
}

// Validate checks the params.
func (Kind) Validate(spec *job.Spec) error {
	_, err := parseParams(spec)
	return err
}

// decision is what the coordinator commits for one aggregation round:
// the public result, or the parties to drop before the next round, or
// why the aggregation failed.
type decision struct {
	Result  *secureagg.Result `msgpack:"result"`
	Missing []string          `msgpack:"missing"`
	Error   string            `msgpack:"error"`
}

// Coordinate runs the aggregation, re-running it without the parties that
// went silent or whose input never reached the root.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	p, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	parties := c.Spec().PartyNames()
	dropped := map[string]string{}
	for round := 0; len(parties) > 0; round++ {
		step := job.Step{Phase: phase, Round: round, Parties: parties, TimeoutMS: p.TimeoutMS}
		d, rec, err := job.Run(ctx, c, step, func(outs *job.Outputs) (decision, error) {
			return decide(outs, parties), nil
		})
		if err != nil {
			return nil, err
		}
		switch {
		case d.Error != "":
			return nil, errors.New(d.Error)
		case d.Result != nil:
			return result(d.Result, dropped), nil
		}
		for _, name := range d.Missing {
			if reason, ok := rec.Failed[name]; ok {
				dropped[name] = reason
			} else {
				dropped[name] = "its input did not reach the root"
			}
		}
		parties = slices.DeleteFunc(parties, func(n string) bool { _, gone := dropped[n]; return gone })
	}
	return nil, fmt.Errorf("no parties left to aggregate: %v", dropped)
}

// decide reads a round's outputs: the root's result, or the parties to
// drop before the next round. After a fault every live party names the
// parties missing from the aggregate, and the faulty party itself may
// report its own error (an out-of-range input, a timeout); dropping the
// named parties and re-running is the answer to both.
func decide(outs *job.Outputs, parties []string) decision {
	root := secureagg.Root(job.Step{Parties: parties, Coordinator: outs.Coordinator})
	missing := append([]string(nil), outs.Silent...)
	var res *secureagg.Result
	for _, name := range parties {
		b, ok := outs.Results[name]
		if !ok {
			continue
		}
		r, err := secureagg.DecodeOutcome(b)
		var miss *secureagg.MissingError
		switch {
		case errors.As(err, &miss):
			missing = append(missing, miss.Parties...)
		case err != nil:
			return decision{Error: fmt.Sprintf("outcome of %s: %v", name, err)}
		case name == root:
			res = r
		}
	}
	sort.Strings(missing)
	missing = slices.Compact(missing)
	if len(missing) > 0 {
		return decision{Missing: missing}
	}
	if res != nil && len(res.Sum) == 1 {
		return decision{Result: res}
	}
	var failed []string
	for _, name := range parties {
		if reason, ok := outs.Failed[name]; ok {
			failed = append(failed, name+": "+reason)
		}
	}
	if len(failed) > 0 {
		return decision{Error: "aggregation failed at " + strings.Join(failed, "; ")}
	}
	return decision{Error: fmt.Sprintf("the root %s returned no result", root)}
}

func result(res *secureagg.Result, dropped map[string]string) job.Result {
	out := job.Result{"sum": res.Sum[0], "included": res.Included}
	excluded := map[string]string{}
	for name, why := range dropped {
		excluded[name] = "input not in the sum: " + why
	}
	for name, why := range res.Excluded {
		excluded[name] = "decryption share excluded: " + why
	}
	if len(excluded) > 0 {
		out["excluded"] = excluded
	}
	if res.Noise != nil {
		out["noise"] = res.Noise
	}
	return out
}

// Open opens a party's session: its local sum over its own tables, read
// once. A party that cannot compute it still opens, so that each round it
// withdraws from the aggregation at once and the others go on without it.
func (Kind) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	prm, err := parseParams(p.Spec())
	if err != nil {
		return nil, err
	}
	s := &session{p: p, params: prm}
	s.local, s.localErr = localSum(ctx, p, prm.Column)
	return s, nil
}

// session is one party's state: its local sum (or why it has none).
type session struct {
	p        job.Participant
	params   *Params
	local    float64
	localErr error
}

// Step takes part in one aggregation round.
func (s *session) Step(ctx context.Context, step job.Step) ([]byte, error) {
	keys, err := secureagg.ReadKeys(s.p.Secrets())
	if err != nil {
		return nil, fmt.Errorf("party %s has no consortium threshold key (run 'cohort keys deal'): %w", s.p.Self(), err)
	}
	// Ask t+1 parties for decryption shares (more only if some fail): the
	// shares and their proofs are most of a round's cost.
	cfg := secureagg.Config{Keys: keys, FracBits: s.params.FracBits, ValueBits: s.params.ValueBits, Noise: s.params.noise(),
		Decryptors: keys.Public().Threshold + 1}
	if s.localErr != nil {
		return nil, secureagg.Withdraw(ctx, s.p, step, cfg, s.localErr)
	}
	res, err := secureagg.Aggregate(ctx, s.p, step, cfg, []float64{s.local})
	return secureagg.EncodeReport(s.p.Self(), step, res, err)
}

// Close releases nothing: the session holds one number.
func (s *session) Close() {}

// localSum sums the column over the party's tables that have it
// (job.NumericColumn): a table with a header and no rows contributes zero.
func localSum(ctx context.Context, p job.Participant, col string) (float64, error) {
	values, err := job.NumericColumn(ctx, p, col)
	if err != nil {
		return 0, err
	}
	total := 0.0
	for _, v := range values {
		total += v
	}
	return total, nil
}

// OutputDisclosure: every party's output is the public result.
func (Kind) OutputDisclosure(job.Step) protocol.Disclosure { return protocol.DisclosePublicResult }
