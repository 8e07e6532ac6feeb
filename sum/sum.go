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

const phase = "aggregate"

// params are the job's parameters with their defaults.
type params struct {
	column    string
	fracBits  int
	valueBits int
	timeout   time.Duration
	noise     *secureagg.Noise
}

func parseParams(spec *job.Spec) (*params, error) {
	p := &params{fracBits: 16, valueBits: 62}
	c, ok := spec.Params["column"].(string)
	if !ok || c == "" {
		return nil, spec.Errorf("params.column", "the sum job needs the name of a numeric column")
	}
	p.column = c
	for name, dst := range map[string]*int{"frac_bits": &p.fracBits, "value_bits": &p.valueBits} {
		if v, ok := spec.Params[name]; ok {
			n, ok := v.(int)
			if !ok || n < 0 || n > 1000 {
				return nil, spec.Errorf("params."+name, "must be a small non-negative integer, not %v", v)
			}
			*dst = n
		}
	}
	if v, ok := spec.Params["timeout_ms"]; ok {
		n, ok := v.(int)
		if !ok || n <= 0 {
			return nil, spec.Errorf("params.timeout_ms", "must be a positive integer, not %v", v)
		}
		p.timeout = time.Duration(n) * time.Millisecond
	}
	if v, ok := spec.Params["noise"]; ok {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, spec.Errorf("params.noise", "must be a mapping {mechanism, epsilon, delta, sensitivity}")
		}
		n := &secureagg.Noise{Mechanism: secureagg.Mechanism(fmt.Sprint(m["mechanism"]))}
		for key, dst := range map[string]*float64{"epsilon": &n.Epsilon, "delta": &n.Delta, "sensitivity": &n.Sensitivity} {
			if x, ok := m[key]; ok {
				f, ok := toFloat(x)
				if !ok {
					return nil, spec.Errorf("params.noise."+key, "must be a number, not %v", x)
				}
				*dst = f
			}
		}
		if n.Mechanism != secureagg.Laplace && n.Mechanism != secureagg.Gaussian {
			return nil, spec.Errorf("params.noise.mechanism", "must be laplace or gaussian, not %q", n.Mechanism)
		}
		p.noise = n
	}
	return p, nil
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// Validate checks the params.
func (Kind) Validate(spec *job.Spec) error {
	_, err := parseParams(spec)
	return err
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
		step := job.Step{Phase: phase, Round: round, Parties: parties}
		if p.timeout > 0 {
			step.TimeoutMS = p.timeout.Milliseconds()
		}
		outs, err := c.Run(ctx, step)
		if err != nil {
			return nil, err
		}
		// Outcomes first: after a fault every live party names the parties
		// missing from the aggregate, and the faulty party itself may report
		// its own error (an out-of-range input, a timeout). Dropping the
		// named parties and re-running is the answer to both.
		res, missing, err := outcome(outs, parties, secureagg.Root(job.Step{Parties: parties, Coordinator: outs.Coordinator}))
		if err != nil {
			return nil, err
		}
		if res != nil {
			return result(res, dropped), nil
		}
		if len(missing) == 0 {
			var failed []string
			for _, name := range parties {
				if reason, ok := outs.Failed[name]; ok {
					failed = append(failed, name+": "+reason)
				}
			}
			return nil, fmt.Errorf("aggregation failed at %s", strings.Join(failed, "; "))
		}
		for _, name := range missing {
			if reason, ok := outs.Failed[name]; ok {
				dropped[name] = reason
			} else {
				dropped[name] = "its input did not reach the root"
			}
		}
		parties = slices.DeleteFunc(parties, func(n string) bool { _, gone := dropped[n]; return gone })
	}
	return nil, fmt.Errorf("no parties left to aggregate: %v", dropped)
}

// outcome reads the step's outputs: the root's result, or the parties to
// drop before the next round.
func outcome(outs *job.Outputs, parties []string, root string) (*secureagg.Result, []string, error) {
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
			return nil, nil, fmt.Errorf("outcome of %s: %w", name, err)
		case name == root:
			res = r
		}
	}
	sort.Strings(missing)
	missing = slices.Compact(missing)
	if len(missing) > 0 {
		return nil, missing, nil
	}
	if res == nil || len(res.Sum) != 1 {
		return nil, nil, fmt.Errorf("the root %s returned no result", root)
	}
	return res, nil, nil
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

// Participate sums the column over the party's tables that have it and
// takes part in the secure aggregation.
func (Kind) Participate(ctx context.Context, p job.Participant, step job.Step) ([]byte, error) {
	prm, err := parseParams(p.Spec())
	if err != nil {
		return nil, err
	}
	local, err := localSum(p, prm.column)
	if err != nil {
		return nil, err
	}
	keys, err := secureagg.ReadKeys(p.Secrets())
	if err != nil {
		return nil, fmt.Errorf("party %s has no consortium threshold key (run 'cohort keys deal'): %w", p.Self(), err)
	}
	// Ask t+1 parties for decryption shares (more only if some fail): the
	// shares and their proofs are most of a round's cost.
	cfg := secureagg.Config{Keys: keys, FracBits: prm.fracBits, ValueBits: prm.valueBits, Noise: prm.noise,
		Decryptors: keys.Public().Threshold + 1}
	res, err := secureagg.Aggregate(ctx, p, step, cfg, []float64{local})
	return secureagg.EncodeReport(p.Self(), step, res, err)
}

func localSum(p job.Participant, col string) (float64, error) {
	tables, err := job.LoadTables(p)
	if err != nil {
		return 0, err
	}
	total, found := 0.0, false
	for _, t := range tables {
		c, err := t.Column(col)
		if err != nil {
			continue
		}
		if c.Num == nil {
			return 0, fmt.Errorf("column %s of table %s is not numeric", col, t.Name)
		}
		found = true
		for _, v := range c.Num {
			total += v
		}
	}
	if !found {
		return 0, fmt.Errorf("party %s has no table with column %q", p.Self(), col)
	}
	return total, nil
}

// OutputDisclosure: every party's output is the public result.
func (Kind) OutputDisclosure(job.Step) protocol.Disclosure { return protocol.DisclosePublicResult }
