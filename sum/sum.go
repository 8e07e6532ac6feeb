// Package sum is the plumbing job: every party sums one numeric column of
// its own tables and the consortium learns the total, over threshold secure
// aggregation (package secureagg). Start with Kind.Coordinate and
// session.Step.
//
// Leakage profile: a party sends only ciphertexts (its encrypted local sum,
// or its subtree's product), a digest of its product when it is a child of
// the aggregation's root, a decryption share with its proof, and the public
// result. Every member learns the total and which parties' inputs are in
// it and which were excluded. With N parties, every party also learns the
// sum of the other N−1 inputs (the total less its own): so each node's
// policy refuses an aggregate over fewer parties than its floor (3 by
// default: with two, the other's input is the total less one's own), and
// one whose party set differs too little from an earlier one's over the
// same column (the difference of two totals is the difference of their
// parties' inputs) unless it is noised. No party, the coordinator
// included, learns another party's local sum beyond that.
//
// With params.noise the total carries differential-privacy noise drawn
// inside the encryption by every party, sized so that the parties outside
// a coalition of params.noise.colluders (default: the key's threshold t,
// the coalition the threshold decryption already tolerates) add the full
// noise alone; each draw, re-runs included, spends ε and δ of the dataset
// column's budget at every node (policy.Guard.Spend), and the result
// reports what was spent. The noise counts only as its owner sized it: a
// party clamps every value to the bounds its organisation declares for the
// column (job.Guard.Bounds) and its policy refuses the noise when there are
// none or params.noise.sensitivity is below max(|lo|, |hi|); a spec can
// raise the sensitivity, never lower it.
//
// params.backend picks secureagg's cryptosystem (auto, paillier or
// lattice; auto is Paillier for one value): on the lattice backend the
// decryption shares carry no proof, and a wrong one is found by comparing
// quorums, and the digests give way to a sketch check (a random key from
// each party to each child of the root, and that child's sketch of its
// subtree's sum under it: secureagg's package doc, Lattice backend); the
// rest holds.
//
// What goes where: each round is one step; every party's output (its
// secureagg outcome and the key's threshold) goes to the coordinator
// alone; the log holds the round's public decision: the result (the total,
// who is in it, who was excluded from decryption and why), or the parties
// to drop before the next round.
//
// Faults: parties that report nothing in time, or whose input never
// reached the total, are dropped and the aggregation re-run without them
// (a new round), as long as t+1 parties remain to decrypt; a failed job
// names every party's cause over all its rounds. A round whose total was
// formed is never re-run over other parties, whatever failed after it:
// the two totals' difference would be the dropped parties' inputs. Every
// party remembers (in its scratch, across restarts) that it saw the total
// formed and refuses such a round from any coordinator. A party whose
// decryption share fails verification is excluded from decryption only
// (its input stays in the total) and named.
package sum

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/wire"
)

// Kind is the sum job.
type Kind struct{}

// UsesThresholdKey: every round is a secure aggregation under the
// consortium's threshold key (job.KeyUser).
func (Kind) UsesThresholdKey() bool { return true }

// Params are the job's parameters (spec params), with their defaults in
// parseParams.
type Params struct {
	Column    string               `yaml:"column"`
	FracBits  int                  `yaml:"frac_bits"`
	ValueBits int                  `yaml:"value_bits"`
	TimeoutMS int64                `yaml:"timeout_ms"`
	Noise     *secureagg.NoiseSpec `yaml:"noise"`
	// Backend is the aggregation's cryptosystem: auto (default), paillier
	// or lattice (secureagg.ParseBackend; auto is Paillier for one value).
	Backend string `yaml:"backend"`

	backend secureagg.Backend
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
	if err := spec.CheckTimeoutMS(p.TimeoutMS); err != nil {
		return nil, err
	}
	var err error
	if p.backend, err = secureagg.ParseBackend(p.Backend); err != nil {
		return nil, spec.Errorf("params.backend", "%v", err)
	}
	if n := p.Noise; n != nil {
		if err := n.Check(spec); err != nil {
			return nil, err
		}
		if n.Sensitivity == 0 {
			return nil, spec.Errorf("params.noise.sensitivity", "must be > 0: how far one row can move the total")
		}
	}
	return p, nil
}

// noise is the noise each party adds, sized for the colluders the spec
// states, or for t.
func (p *Params) noise(threshold int) *secureagg.Noise {
	if p.Noise == nil {
		return nil
	}
	return p.Noise.Noise(threshold)
}

// Validate checks the params.
func (Kind) Validate(spec *job.Spec) error {
	_, err := parseParams(spec)
	return err
}

// aggregate is the job's one round: a secure aggregation over the round's
// parties.
var aggregate = job.Round[struct{}, output, decision]{Phase: "aggregate"}

// output is a party's report of a round: its aggregation's outcome and
// the key's threshold, so the coordinator starts no round that too few
// parties can decrypt.
type output struct {
	Outcome   secureagg.Outcome `msgpack:"outcome"`
	Threshold int               `msgpack:"threshold"`
}

// decision is what the coordinator commits for one aggregation round: the
// public result, or the parties to drop before the next round.
type decision struct {
	Result  *secureagg.Result `msgpack:"result"`
	Missing []string          `msgpack:"missing"`
}

// Coordinate runs the aggregation, re-running it without the parties that
// went silent or whose input never reached the total, as long as no total
// was formed and enough parties remain.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	p, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	parties := c.Spec().PartyNames()
	dropped := map[string]string{}
	for round := 0; ; round++ {
		call := job.Call[struct{}]{Round: round, Parties: parties, TimeoutMS: p.TimeoutMS}
		done, err := aggregate.Run(ctx, c, call, func(o *job.Outcome[output]) (decision, error) { return decide(o, parties) })
		if err != nil {
			return nil, err
		}
		d := done.Decision
		if d.Result != nil {
			return result(d.Result, dropped), nil
		}
		for _, name := range d.Missing {
			if reason, ok := done.Record.Failed[name]; ok {
				dropped[name] = reason
			} else {
				dropped[name] = "its input did not reach the total"
			}
		}
		if len(d.Missing) == 0 {
			return nil, fmt.Errorf("round %d dropped no party and produced no result", round) // decide never commits this
		}
		parties = slices.DeleteFunc(parties, func(n string) bool { _, gone := dropped[n]; return gone })
	}
}

// decide folds a round's outcomes: the root's result, or the parties to
// drop before the next round, or why the job fails: a total that was
// formed (never re-run over other parties), or too few parties left to
// decrypt.
func decide(o *job.Outcome[output], parties []string) (decision, error) {
	outcomes := map[string]*secureagg.Outcome{}
	threshold := 0
	for name, out := range o.Results {
		outcomes[name] = &out.Outcome
		threshold = max(threshold, out.Threshold)
	}
	v, err := secureagg.Fold(o.Step, outcomes, o.Failed, o.Silent)
	switch {
	case err != nil:
		return decision{}, err
	case v.Result != nil && len(v.Result.Sum) == 1:
		return decision{Result: v.Result}, nil
	case v.Result != nil:
		return decision{}, fmt.Errorf("the root's sum has %d values, not one", len(v.Result.Sum))
	case v.Formed:
		return decision{}, fmt.Errorf("round %d's total was formed and may have been decrypted, so it is not re-run over fewer parties "+
			"(the two totals' difference would be the dropped parties' inputs)%s", o.Step.Round, describe(v.Failed))
	case len(v.Missing) == 0:
		return decision{}, fmt.Errorf("round %d: the root %s returned no result", o.Step.Round, secureagg.Root(o.Step))
	}
	missing := slices.Sorted(maps.Keys(v.Missing))
	// At least two parties, whatever the key: a sum of one is its input.
	if left, need := len(parties)-len(missing), max(2, threshold+1); left < need {
		return decision{}, fmt.Errorf("without %v %s, and %d are needed to decrypt%s", missing, remain(left), need, describe(v.Missing))
	}
	return decision{Missing: missing}, nil
}

// remain says how many parties are left.
func remain(n int) string {
	switch n {
	case 0:
		return "no party remains"
	case 1:
		return "only 1 party remains"
	}
	return fmt.Sprintf("only %d parties remain", n)
}

// describe lists parties and their errors after a colon, or nothing.
func describe(why map[string]string) string {
	if len(why) == 0 {
		return ""
	}
	return ": " + job.PartyCauses(why)
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

// OutputDisclosure: every party's output is the public result (the root's
// total, the others' view of who is in it).
func (Kind) OutputDisclosure(job.Step) wire.Disclosure { return wire.DisclosePublicResult }
