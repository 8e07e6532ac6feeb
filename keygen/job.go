package keygen

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/protocol"
)

// Kind is the keygen job.
type Kind struct{}

// Phases of the job: one step each.
const (
	PhaseGenerate = "generate"
	PhaseInstall  = "install"
)

// Disclosures of the job's messages.
const (
	// DiscloseShares: a pair seed, Shamir shares of secret candidate
	// shares, masked openings; each is uniform or statistically masked
	// to its recipient (see the leakage profile).
	DiscloseShares protocol.Disclosure = "keygen-share"
	// DiscloseBiprimality: g^((p_i+q_i)/4) mod N for a public g, and a
	// verification key and test decryption share of the new key.
	DiscloseBiprimality protocol.Disclosure = "keygen-public-value"
)

// defaultTimeout is how long the generate step may take (ten minutes: a
// 2048-bit key takes about half a minute on two loaded cores, a 4096-bit
// one many times that).
const defaultTimeout = 10 * time.Minute

// maxTimeout bounds params.timeout_ms: a day.
const maxTimeout = 24 * time.Hour

// Params are the job's parameters.
type Params struct {
	// Bits is the modulus size (default 2048).
	Bits int `yaml:"bits"`
	// Batch is the number of candidate pairs per network round (default
	// dealerless.DefaultBatch).
	Batch int `yaml:"batch"`
	// TimeoutMS bounds the generate step.
	TimeoutMS int64 `yaml:"timeout_ms"`
}

func parseParams(spec *job.Spec) (*Params, error) {
	p := &Params{Bits: 2048}
	if err := spec.DecodeParams(p); err != nil {
		return nil, err
	}
	if err := paillier.CheckModulusSize(p.Bits); err != nil {
		return nil, spec.Errorf("params.bits", "%v", err)
	}
	if p.Batch < 0 || p.Batch > 1<<16 {
		return nil, spec.Errorf("params.batch", "must be in [1, 65536], not %d", p.Batch)
	}
	if p.TimeoutMS < 0 || p.TimeoutMS > maxTimeout.Milliseconds() {
		return nil, spec.Errorf("params.timeout_ms", "must be in [1, %d] (a day), not %d", maxTimeout.Milliseconds(), p.TimeoutMS)
	}
	if p.TimeoutMS == 0 {
		p.TimeoutMS = defaultTimeout.Milliseconds()
	}
	n := len(spec.Parties)
	if n < 3 || n > paillier.MaxParties {
		return nil, spec.Errorf("parties", "dealerless key generation needs 3..%d parties (an honest majority), not %d; deal the key for two ('cohort keys deal')", paillier.MaxParties, n)
	}
	for i, party := range spec.Parties {
		if len(party.Tables) > 0 {
			return nil, spec.Errorf(fmt.Sprintf("parties[%d].tables", i), "keygen reads no tables")
		}
	}
	return p, nil
}

// Validate checks the params and the party count.
func (Kind) Validate(spec *job.Spec) error {
	_, err := parseParams(spec)
	return err
}

// genOutput is a party's output of the generate step: public values only.
type genOutput struct {
	Attempt    int              `msgpack:"attempt"`
	KeyID      []byte           `msgpack:"key_id"`
	Candidates int              `msgpack:"candidates"`
	TimingMS   map[string]int64 `msgpack:"timing_ms"`
}

// genDecision is committed for the generate step: the key every party
// holds (its id), or why generation failed.
type genDecision struct {
	Attempt    int              `msgpack:"attempt"`
	KeyID      []byte           `msgpack:"key_id"`
	Candidates int              `msgpack:"candidates"`
	TimingMS   map[string]int64 `msgpack:"timing_ms"`
	Error      string           `msgpack:"error"`
}

// installArgs are the install step's public arguments.
type installArgs struct {
	Attempt int    `msgpack:"attempt"`
	KeyID   []byte `msgpack:"key_id"`
}

// installDecision is committed for the install step.
type installDecision struct {
	Error string `msgpack:"error"`
}

// failures describes the parties that failed or went silent, sorted.
func failures(outs *job.Outputs) string {
	var parts []string
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range outs.Failed {
			if !yield(k) {
				return
			}
		}
	}) {
		parts = append(parts, name+": "+outs.Failed[name])
	}
	for _, name := range outs.Silent {
		if _, ok := outs.Failed[name]; !ok {
			parts = append(parts, name+": no answer")
		}
	}
	return strings.Join(parts, "; ")
}

// Coordinate runs generate then install. Any failure aborts the job naming
// the parties: a key needs every party, and a new job starts over.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	prm, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	parties := c.Spec().PartyNames()
	gen, _, err := job.Run(ctx, c, job.Step{Phase: PhaseGenerate, TimeoutMS: prm.TimeoutMS}, func(outs *job.Outputs) (genDecision, error) {
		return decideGenerate(outs, parties), nil
	})
	if err != nil {
		return nil, err
	}
	if gen.Error != "" {
		return nil, fmt.Errorf("keygen aborted, no key installed: %s", gen.Error)
	}
	args, err := protocol.Marshal(installArgs{Attempt: gen.Attempt, KeyID: gen.KeyID})
	if err != nil {
		return nil, err
	}
	inst, _, err := job.Run(ctx, c, job.Step{Phase: PhaseInstall, Args: args}, func(outs *job.Outputs) (installDecision, error) {
		if len(outs.Failed) > 0 || len(outs.Silent) > 0 || len(outs.Results) != len(parties) {
			return installDecision{Error: failures(outs)}, nil
		}
		for _, name := range parties {
			if string(outs.Results[name]) != string(gen.KeyID) {
				return installDecision{Error: name + " installed another key"}, nil
			}
		}
		return installDecision{}, nil
	})
	if err != nil {
		return nil, err
	}
	if inst.Error != "" {
		return nil, fmt.Errorf("keygen: install failed (parties that did install keep the new key; run keygen again): %s", inst.Error)
	}
	timing := map[string]float64{}
	for k, ms := range gen.TimingMS {
		timing[k] = float64(ms) / 1000
	}
	return job.Result{
		"key_id":            hex.EncodeToString(gen.KeyID),
		"bits":              prm.Bits,
		"threshold":         (len(parties)-1)/2 + 1,
		"candidates":        gen.Candidates,
		"generation_timing": timing,
		"made":              MadeDealerless,
	}, nil
}

// decideGenerate accepts the generation only if every party reports the
// same key from the same attempt.
func decideGenerate(outs *job.Outputs, parties []string) genDecision {
	if len(outs.Failed) > 0 || len(outs.Silent) > 0 {
		return genDecision{Error: failures(outs)}
	}
	var d *genDecision
	for _, name := range parties {
		b, ok := outs.Results[name]
		if !ok {
			return genDecision{Error: name + ": no output"}
		}
		var o genOutput
		if err := protocol.Unmarshal(b, &o); err != nil {
			return genDecision{Error: fmt.Sprintf("%s: output: %v", name, err)}
		}
		if d == nil {
			d = &genDecision{Attempt: o.Attempt, KeyID: o.KeyID, Candidates: o.Candidates, TimingMS: map[string]int64{}}
		} else if string(o.KeyID) != string(d.KeyID) || o.Attempt != d.Attempt {
			return genDecision{Error: fmt.Sprintf("%s holds another key than %s", name, parties[0])}
		}
		for k, v := range o.TimingMS { // the slowest party's time per phase
			d.TimingMS[k] = max(d.TimingMS[k], v)
		}
	}
	return *d
}

// OutputDisclosure: outputs are public values (key id, counts, timing).
func (Kind) OutputDisclosure(job.Step) protocol.Disclosure { return protocol.DisclosePublicResult }
