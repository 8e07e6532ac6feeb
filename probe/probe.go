package probe

import (
	"context"
	"encoding/hex"
	"fmt"
	"maps"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/wire"
)

// Kind is the probe job.
type Kind struct{}

// UsesThresholdKey: the probe aggregates under the consortium's keys
// (job.KeyUser).
func (Kind) UsesThresholdKey() bool { return true }

const (
	// DefaultValues is the vector length when params.values is not given.
	DefaultValues = 10_000
	// MaxValues bounds params.values: 2^24 values are 128 MB of floats per
	// party before encryption.
	MaxValues = 1 << 24
	// valueBits bounds each public value: integers in [0, 2^20), so a sum
	// over the most members a lattice key holds stays exact in float64.
	valueBits = 20
)

// Params are the job's parameters (spec params).
type Params struct {
	// Values is the vector's length (default DefaultValues).
	Values int `yaml:"values"`
	// Backend is the aggregation's cryptosystem: auto (default), paillier
	// or lattice (secureagg.ParseBackend).
	Backend   string `yaml:"backend"`
	TimeoutMS int64  `yaml:"timeout_ms"`

	backend secureagg.Backend
}

func parseParams(spec *job.Spec) (*Params, error) {
	p := &Params{Values: DefaultValues}
	if err := spec.DecodeParams(p); err != nil {
		return nil, err
	}
	if p.Values < 1 || p.Values > MaxValues {
		return nil, spec.Errorf("params.values", "must be in [1, %d], not %d", MaxValues, p.Values)
	}
	if err := spec.CheckTimeoutMS(p.TimeoutMS); err != nil {
		return nil, err
	}
	var err error
	if p.backend, err = secureagg.ParseBackend(p.Backend); err != nil {
		return nil, spec.Errorf("params.backend", "%v", err)
	}
	if len(spec.Parties) < 2 {
		return nil, spec.Errorf("parties", "a probe aggregates over at least two parties, not %d", len(spec.Parties))
	}
	return p, nil
}

// Validate checks the params.
func (Kind) Validate(spec *job.Spec) error {
	_, err := parseParams(spec)
	return err
}

// aggregate is the probe's one step.
var aggregate = job.Round[struct{}, output, decision]{Phase: "aggregate"}

// output is a party's report: its aggregation's outcome without the sum
// (which every party checks itself), the sum's digest, the first value
// that differs from the expected total, if one does, and the spec's names
// of the tables it checked.
type output struct {
	Outcome  secureagg.Outcome `msgpack:"outcome"`
	Digest   string            `msgpack:"digest"`
	Mismatch string            `msgpack:"mismatch"`
	Checked  []string          `msgpack:"checked"`
}

// decision is what the log holds: the public total's digest and who is
// in it, and the tables each party checked (by the spec's names).
type decision struct {
	Digest   string              `msgpack:"digest"`
	Included []string            `msgpack:"included"`
	Excluded map[string]string   `msgpack:"excluded"`
	Tables   map[string][]string `msgpack:"tables"`
}

// jointSeed is the draw of the seed of the public vectors: one, round 0,
// over every party (job.JointSeed), so that no coordinator chooses the
// values every party aggregates and checks.
func jointSeed(jobID string, spec *job.Spec) job.JointSeed {
	return job.NewJointSeed(jobID, 0, spec.PartyNames())
}

// Coordinate draws the joint seed, runs the one aggregation and commits
// its digest, or fails naming what went wrong.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	p, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	if _, err := jointSeed(c.JobID(), c.Spec()).Draw(ctx, c, p.TimeoutMS); err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	call := job.Call[struct{}]{Round: 0, Parties: c.Spec().PartyNames(), TimeoutMS: p.TimeoutMS}
	done, err := aggregate.Run(ctx, c, call, func(o *job.Outcome[output]) (decision, error) { return decide(c.Spec(), o) })
	if err != nil {
		return nil, err
	}
	d := done.Decision
	out := job.Result{"values": p.Values, "backend": string(p.backend), "digest": d.Digest, "included": d.Included, "exact": true}
	if len(d.Excluded) > 0 {
		out["excluded"] = d.Excluded
	}
	if len(d.Tables) > 0 {
		out["tables"] = d.Tables
	}
	return out, nil
}

// decide folds the parties' reports: every party in the total, the
// root's digest, no party that found the total wrong, and every party's
// tables checked.
func decide(spec *job.Spec, o *job.Outcome[output]) (decision, error) {
	outcomes := map[string]*secureagg.Outcome{}
	for name, out := range o.Results {
		if out.Mismatch != "" {
			return decision{}, fmt.Errorf("party %s: the decrypted total is not the sum of the parties' vectors: %s", name, out.Mismatch)
		}
		outcomes[name] = &out.Outcome
	}
	v, err := secureagg.Fold(o.Step, outcomes, o.Failed, o.Silent)
	if err != nil {
		return decision{}, err
	}
	why := maps.Clone(v.Missing)
	maps.Copy(why, v.Failed)
	maps.Copy(why, v.Withdrew)
	if len(why) > 0 {
		return decision{}, fmt.Errorf("the aggregation did not complete at every party: %s", job.PartyCauses(why))
	}
	if v.Result == nil {
		return decision{}, fmt.Errorf("the root %s returned no result", secureagg.Root(o.Step))
	}
	root := o.Results[secureagg.Root(o.Step)]
	for name, out := range o.Results {
		if len(out.Outcome.Included) > 0 && out.Digest != root.Digest {
			return decision{}, fmt.Errorf("party %s got another total than the root %s", name, secureagg.Root(o.Step))
		}
	}
	if _, err := hex.DecodeString(root.Digest); err != nil || len(root.Digest) != 64 {
		return decision{}, fmt.Errorf("the root %s reported a malformed digest", secureagg.Root(o.Step))
	}
	if err := checkedAll(spec, o.Results); err != nil {
		return decision{}, err
	}
	tables := specTables(spec)
	if len(tables) == 0 {
		tables = nil
	}
	return decision{Digest: root.Digest, Included: v.Result.Included, Excluded: v.Result.Excluded, Tables: tables}, nil
}

// OutputDisclosure: a party's output is its view of the public result.
func (Kind) OutputDisclosure(job.Step) wire.Disclosure { return wire.DisclosePublicResult }

// Uses: a probe discloses no data of a party (job.Discloser): it only
// checks its tables at home, if the spec gives it any (tables.go); its
// aggregation's ciphertexts are of public values,
// declared with no table so that the node's guard lets them through while
// the policy's kinds rule decides whether the node takes part at all.
func (Kind) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	if _, err := parseParams(spec); err != nil {
		return nil, err
	}
	return []job.Use{{Form: wire.DiscloseCiphertext}}, nil
}
