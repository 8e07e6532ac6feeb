package keygen

import (
	"context"
	"encoding/hex"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/paillier/dealerless"
	"github.com/cohortdm/cohort/protocol"
)

// Kind is the keygen job.
type Kind struct{}

// Phases of the job: search runs as many steps (rounds 0, 1, ...) as it
// takes to find a modulus; finish and install are one step each.
const (
	PhaseSearch  = "search"
	PhaseFinish  = "finish"
	PhaseInstall = "install"
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

// defaultTimeout is how long one search or finish step may take: a chunk
// takes seconds, so a stalled step (a lost message, a hung party) is
// noticed within minutes.
const defaultTimeout = 2 * time.Minute

// maxStalls is how many search steps may end with every party stalled (no
// error but a timeout) before the job gives up naming them. A stall can be
// a message lost by the runtime; a party that hangs stalls every step.
const maxStalls = 2

// defaultChunk is the number of candidate pairs per search step: a few
// seconds of work, so that a fault (a leader change re-runs the step)
// loses little. With the distributed sieve a 2048-bit key takes about
// 4,000 pairs on average, so the first step finds one in most jobs.
const defaultChunk = 8192

// maxCandidates bounds the whole search.
const maxCandidates = dealerless.DefaultMaxCandidates

// maxTimeout bounds params.timeout_ms: a day.
const maxTimeout = 24 * time.Hour

// Params are the job's parameters.
type Params struct {
	// Bits is the modulus size (default 2048).
	Bits int `yaml:"bits"`
	// Batch is the number of candidate pairs per network round (default
	// dealerless.DefaultBatch).
	Batch int `yaml:"batch"`
	// Chunk is the number of candidate pairs per search step (default
	// 8192).
	Chunk int `yaml:"chunk"`
	// TimeoutMS bounds each search and finish step (default 2 minutes).
	TimeoutMS int64 `yaml:"timeout_ms"`
	// Scheme is the key generated: paillier (default, the threshold
	// Paillier key) or bgv (the lattice key of secureagg's lattice
	// backend; lattice.go).
	Scheme string `yaml:"scheme"`
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
	if p.Batch == 0 {
		p.Batch = dealerless.DefaultBatch
	}
	if p.Chunk < 0 || p.Chunk > maxCandidates {
		return nil, spec.Errorf("params.chunk", "must be in [1, %d], not %d", maxCandidates, p.Chunk)
	}
	if p.Chunk == 0 {
		p.Chunk = defaultChunk
	}
	if p.TimeoutMS < 0 || p.TimeoutMS > maxTimeout.Milliseconds() {
		return nil, spec.Errorf("params.timeout_ms", "must be in [1, %d] (a day), not %d", maxTimeout.Milliseconds(), p.TimeoutMS)
	}
	if p.TimeoutMS == 0 {
		p.TimeoutMS = defaultTimeout.Milliseconds()
	}
	switch p.Scheme {
	case "":
		p.Scheme = SchemePaillier
	case SchemePaillier, SchemeBGV:
	default:
		return nil, spec.Errorf("params.scheme", "must be paillier or bgv, not %q", p.Scheme)
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

// searchOutput is a party's output of a search step: public values only.
type searchOutput struct {
	Attempt  int              `msgpack:"attempt"`
	Tried    int              `msgpack:"tried"`
	N        []byte           `msgpack:"n"` // the modulus found, empty if none
	TimingMS map[string]int64 `msgpack:"timing_ms"`
}

// searchDecision is committed for a search step.
type searchDecision struct {
	Attempt  int              `msgpack:"attempt"`
	Tried    int              `msgpack:"tried"`
	N        []byte           `msgpack:"n"`
	TimingMS map[string]int64 `msgpack:"timing_ms"`
	Error    string           `msgpack:"error"`
	// Stalled: every party timed out or stopped on the step's end, none
	// failed otherwise (see stalled).
	Stalled bool `msgpack:"stalled"`
}

// finishArgs name the search step whose modulus the finish step converts.
type finishArgs struct {
	Round   int `msgpack:"round"`
	Attempt int `msgpack:"attempt"`
}

// finishOutput is a party's output of the finish step.
type finishOutput struct {
	Attempt  int              `msgpack:"attempt"`
	KeyID    []byte           `msgpack:"key_id"`
	TimingMS map[string]int64 `msgpack:"timing_ms"`
}

// finishDecision is committed for the finish step: the key every party
// holds (its id), or why it failed.
type finishDecision struct {
	Attempt  int              `msgpack:"attempt"`
	KeyID    []byte           `msgpack:"key_id"`
	TimingMS map[string]int64 `msgpack:"timing_ms"`
	Error    string           `msgpack:"error"`
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
	for _, name := range slices.Sorted(maps.Keys(outs.Failed)) {
		parts = append(parts, name+": "+outs.Failed[name])
	}
	for _, name := range outs.Silent {
		if _, ok := outs.Failed[name]; !ok {
			parts = append(parts, name+": no answer")
		}
	}
	return strings.Join(parts, "; ")
}

// Coordinate runs search steps until one finds a modulus, then finish and
// install. Any failure aborts the job naming the parties: a key needs every
// party, and a new job starts over.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	prm, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	if prm.Scheme == SchemeBGV {
		return coordinateLattice(ctx, c, prm)
	}
	parties := c.Spec().PartyNames()
	tried := 0
	timing := map[string]float64{}
	addTiming := func(ms map[string]int64) {
		for k, v := range ms {
			timing[k] += float64(v) / 1000
		}
	}
	var found searchDecision
	var foundRound, stalls int
	for round := 0; found.N == nil; round++ {
		if tried >= maxCandidates {
			return nil, fmt.Errorf("keygen: no biprime modulus in %d candidate pairs", tried)
		}
		d, _, err := job.Run(ctx, c, job.Step{Phase: PhaseSearch, Round: round, TimeoutMS: prm.TimeoutMS}, func(outs *job.Outputs) (searchDecision, error) {
			return decideSearch(outs, parties), nil
		})
		if err != nil {
			return nil, err
		}
		if d.Stalled && stalls < maxStalls {
			stalls++ // run the next chunk: nothing of this one is kept
			continue
		}
		if d.Error != "" {
			return nil, fmt.Errorf("keygen aborted in search round %d, no key installed: %s", round, d.Error)
		}
		tried += d.Tried
		addTiming(d.TimingMS)
		c.Progress(PhaseSearch, tried, maxCandidates) // pairs tried of the most the job will try
		if len(d.N) > 0 {
			found, foundRound = d, round
		}
	}
	args, err := protocol.Marshal(finishArgs{Round: foundRound, Attempt: found.Attempt})
	if err != nil {
		return nil, err
	}
	fin, _, err := job.Run(ctx, c, job.Step{Phase: PhaseFinish, Args: args, TimeoutMS: prm.TimeoutMS}, func(outs *job.Outputs) (finishDecision, error) {
		return decideFinish(outs, parties), nil
	})
	if err != nil {
		return nil, err
	}
	if fin.Error != "" {
		return nil, fmt.Errorf("keygen aborted, no key installed: %s", fin.Error)
	}
	addTiming(fin.TimingMS)
	args, err = protocol.Marshal(installArgs{Attempt: fin.Attempt, KeyID: fin.KeyID})
	if err != nil {
		return nil, err
	}
	inst, _, err := job.Run(ctx, c, job.Step{Phase: PhaseInstall, Args: args}, func(outs *job.Outputs) (installDecision, error) {
		if len(outs.Failed) > 0 || len(outs.Silent) > 0 || len(outs.Results) != len(parties) {
			return installDecision{Error: failures(outs)}, nil
		}
		for _, name := range parties {
			if string(outs.Results[name]) != string(fin.KeyID) {
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
	for k, v := range timing {
		timing[k] = math.Round(v*1000) / 1000
	}
	return job.Result{
		"key_id":            hex.EncodeToString(fin.KeyID),
		"bits":              prm.Bits,
		"threshold":         (len(parties)-1)/2 + 1,
		"candidates":        tried,
		"search_steps":      foundRound + 1,
		"generation_timing": timing,
		"made":              MadeDealerless,
	}, nil
}

// decideSearch accepts a search step only if every party reports the same
// outcome from the same attempt. The phase times are the slowest party's.
func decideSearch(outs *job.Outputs, parties []string) searchDecision {
	if len(outs.Failed) > 0 || len(outs.Silent) > 0 {
		return searchDecision{Error: failures(outs), Stalled: stalled(outs, parties)}
	}
	var d *searchDecision
	for _, name := range parties {
		b, ok := outs.Results[name]
		if !ok {
			return searchDecision{Error: name + ": no output"}
		}
		var o searchOutput
		if err := protocol.Unmarshal(b, &o); err != nil {
			return searchDecision{Error: fmt.Sprintf("%s: output: %v", name, err)}
		}
		if d == nil {
			d = &searchDecision{Attempt: o.Attempt, Tried: o.Tried, N: o.N, TimingMS: map[string]int64{}}
		} else if string(o.N) != string(d.N) || o.Attempt != d.Attempt || o.Tried != d.Tried {
			return searchDecision{Error: fmt.Sprintf("%s reports another outcome than %s", name, parties[0])}
		}
		for k, v := range o.TimingMS {
			d.TimingMS[k] = max(d.TimingMS[k], v)
		}
	}
	if d == nil {
		return searchDecision{Error: "no parties"}
	}
	return *d
}

// stalled reports whether no party returned an output and every party
// either went silent or failed only because the step's time ran out: what
// a message lost in transit looks like, as opposed to a party that failed
// or was unreachable.
func stalled(outs *job.Outputs, parties []string) bool {
	if len(outs.Results) > 0 {
		return false
	}
	for _, name := range parties {
		if slices.Contains(outs.Silent, name) {
			continue
		}
		why, ok := outs.Failed[name]
		if !ok || !(strings.Contains(why, context.DeadlineExceeded.Error()) || strings.Contains(why, context.Canceled.Error())) {
			return false
		}
	}
	return true
}

// decideFinish accepts the finish step only if every party holds the same
// verified key from the same attempt.
func decideFinish(outs *job.Outputs, parties []string) finishDecision {
	if len(outs.Failed) > 0 || len(outs.Silent) > 0 {
		return finishDecision{Error: failures(outs)}
	}
	var d *finishDecision
	for _, name := range parties {
		b, ok := outs.Results[name]
		if !ok {
			return finishDecision{Error: name + ": no output"}
		}
		var o finishOutput
		if err := protocol.Unmarshal(b, &o); err != nil {
			return finishDecision{Error: fmt.Sprintf("%s: output: %v", name, err)}
		}
		if d == nil {
			d = &finishDecision{Attempt: o.Attempt, KeyID: o.KeyID, TimingMS: map[string]int64{}}
		} else if string(o.KeyID) != string(d.KeyID) || o.Attempt != d.Attempt {
			return finishDecision{Error: fmt.Sprintf("%s holds another key than %s", name, parties[0])}
		}
		for k, v := range o.TimingMS {
			d.TimingMS[k] = max(d.TimingMS[k], v)
		}
	}
	if d == nil || len(d.KeyID) != 32 {
		return finishDecision{Error: "no key id"}
	}
	return *d
}

// OutputDisclosure: outputs are public values (key id, counts, timing).
func (Kind) OutputDisclosure(job.Step) protocol.Disclosure { return protocol.DisclosePublicResult }
