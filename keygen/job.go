package keygen

import (
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/paillier/dealerless"
	"github.com/cohortdm/cohort/wire"
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
	DiscloseShares wire.Disclosure = "keygen-share"
	// DiscloseBiprimality: g^((p_i+q_i)/4) mod N for a public g, and a
	// verification key and test decryption share of the new key.
	DiscloseBiprimality wire.Disclosure = "keygen-public-value"
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
	if err := spec.CheckTimeoutMS(p.TimeoutMS); err != nil {
		return nil, err
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

// The job's rounds, typed as job.Round (args, one party's output, the
// committed decision).
var (
	searchRound  = job.Round[none, searchOutput, searchDecision]{Phase: PhaseSearch}
	finishRound  = job.Round[finishArgs, finishOutput, finishDecision]{Phase: PhaseFinish}
	installRound = job.Round[installArgs, installOutput, installDecision]{Phase: PhaseInstall}
)

// none is the args of the search round.
type none struct{}

// searchOutput is a party's output of a search step: public values only.
type searchOutput struct {
	Attempt  int              `msgpack:"attempt"`
	Tried    int              `msgpack:"tried"`
	N        []byte           `msgpack:"n"` // the modulus found, empty if none
	TimingMS map[string]int64 `msgpack:"timing_ms"`
}

// searchDecision is committed for a search step: the pairs tried and the
// modulus, if one was found, in the step's attempt; or that the step
// stalled (see stalled), when the next chunk runs instead.
type searchDecision struct {
	Attempt  int              `msgpack:"attempt"`
	Tried    int              `msgpack:"tried"`
	N        []byte           `msgpack:"n"`
	TimingMS map[string]int64 `msgpack:"timing_ms"`
	Stalled  bool             `msgpack:"stalled"`
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
// holds (its id), staged in the step's attempt.
type finishDecision struct {
	Attempt  int              `msgpack:"attempt"`
	KeyID    []byte           `msgpack:"key_id"`
	TimingMS map[string]int64 `msgpack:"timing_ms"`
}

// installArgs are the install step's public arguments: the finish
// attempt whose staged key to install, and its id.
type installArgs struct {
	Attempt int    `msgpack:"attempt"`
	KeyID   []byte `msgpack:"key_id"`
}

// check verifies the form of the install step's arguments.
func (a installArgs) check() error {
	if a.Attempt < 1 || len(a.KeyID) != 32 {
		return fmt.Errorf("keygen: install arguments: attempt %d, key id of %d bytes", a.Attempt, len(a.KeyID))
	}
	return nil
}

// installOutput is a party's output of the install step: the id of the key
// it installed.
type installOutput struct {
	KeyID []byte `msgpack:"key_id"`
}

// installDecision is committed for the install step: the key every party
// installed.
type installDecision struct {
	KeyID []byte `msgpack:"key_id"`
}

// Coordinate draws the joint seed, then runs search steps until one finds
// a modulus, then finish and install. Any failure aborts the job naming the parties: a key needs every
// party, and a new job starts over.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	prm, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	// The public randomness every party relies on (biprimality bases,
	// the lattice key's common reference polynomial) is drawn jointly
	// first: the leader's job seed is not used.
	if _, err := jointSeed(c.JobID(), c.Spec()).Draw(ctx, c, prm.TimeoutMS); err != nil {
		return nil, fmt.Errorf("keygen aborted, no key installed: %w", err)
	}
	if prm.Scheme == SchemeBGV {
		return coordinateLattice(ctx, c, prm)
	}
	parties := c.Spec().PartyNames()
	found, foundRound, tried, timing, err := searchRounds(ctx, c, prm, parties)
	if err != nil {
		return nil, err
	}
	fin, err := finishRound.Run(ctx, c, job.Call[finishArgs]{Parties: parties, Args: finishArgs{Round: foundRound, Attempt: found.Attempt}, TimeoutMS: prm.TimeoutMS},
		func(o *job.Outcome[finishOutput]) (finishDecision, error) { return decideFinish(o, parties) })
	if err != nil {
		return nil, err
	}
	for k, v := range fin.Decision.TimingMS {
		timing[k] += float64(v) / 1000
	}
	call := job.Call[installArgs]{Parties: parties, Args: installArgs{Attempt: fin.Decision.Attempt, KeyID: fin.Decision.KeyID}}
	if _, err := installRound.Run(ctx, c, call, func(o *job.Outcome[installOutput]) (installDecision, error) {
		return decideInstall(o, parties, fin.Decision.KeyID)
	}); err != nil {
		return nil, err
	}
	for k, v := range timing {
		timing[k] = math.Round(v*1000) / 1000
	}
	return job.Result{
		"key_id":            hex.EncodeToString(fin.Decision.KeyID),
		"bits":              prm.Bits,
		"threshold":         (len(parties)-1)/2 + 1,
		"candidates":        tried,
		"search_steps":      foundRound + 1,
		"generation_timing": timing,
		"made":              keyring.MadeDealerless,
	}, nil
}

// searchRounds runs search steps until one finds a modulus and returns
// that step's decision and round, the pairs tried over all steps and the
// phase times (seconds, summed over steps).
func searchRounds(ctx context.Context, c job.Coordinator, prm *Params, parties []string) (searchDecision, int, int, map[string]float64, error) {
	tried, stalls := 0, 0
	timing := map[string]float64{}
	for round := 0; ; round++ {
		if tried >= maxCandidates {
			return searchDecision{}, 0, 0, nil, fmt.Errorf("keygen: no biprime modulus in %d candidate pairs", tried)
		}
		tolerate := stalls < maxStalls
		done, err := searchRound.Run(ctx, c, job.Call[none]{Round: round, Parties: parties, TimeoutMS: prm.TimeoutMS},
			func(o *job.Outcome[searchOutput]) (searchDecision, error) { return decideSearch(o, parties, tolerate) })
		if err != nil {
			return searchDecision{}, 0, 0, nil, err
		}
		d := done.Decision
		if d.Stalled {
			stalls++ // run the next chunk: nothing of this one is kept
			continue
		}
		tried += d.Tried
		for k, v := range d.TimingMS {
			timing[k] += float64(v) / 1000
		}
		c.Progress(PhaseSearch, tried, maxCandidates) // pairs tried of the most the job will try
		if len(d.N) > 0 {
			return d, round, tried, timing, nil
		}
	}
}

// decideSearch accepts a search step only if every party reports the same
// outcome from the same attempt. The phase times are the slowest party's.
// A step in which every party stalled is committed as stalled while
// tolerate holds (see maxStalls); any other failure aborts the job.
func decideSearch(o *job.Outcome[searchOutput], parties []string, tolerate bool) (searchDecision, error) {
	if err := o.Err(); err != nil {
		if tolerate && stalled(o, parties) {
			return searchDecision{Stalled: true}, nil
		}
		return searchDecision{}, fmt.Errorf("keygen aborted, no key installed: %w", err)
	}
	var d *searchDecision
	for _, name := range parties {
		out, ok := o.Results[name]
		if !ok {
			return searchDecision{}, fmt.Errorf("keygen aborted, no key installed: %s sent no output", name)
		}
		if d == nil {
			d = &searchDecision{Attempt: out.Attempt, Tried: out.Tried, N: out.N, TimingMS: map[string]int64{}}
		} else if string(out.N) != string(d.N) || out.Attempt != d.Attempt || out.Tried != d.Tried {
			return searchDecision{}, fmt.Errorf("keygen aborted, no key installed: %s reports another outcome than %s", name, parties[0])
		}
		for k, v := range out.TimingMS {
			d.TimingMS[k] = max(d.TimingMS[k], v)
		}
	}
	if d == nil {
		return searchDecision{}, fmt.Errorf("keygen aborted: no parties")
	}
	return *d, nil
}

// stalled reports whether no party returned an output and every party
// either went silent or failed only because the step's time ran out: what
// a message lost in transit looks like, as opposed to a party that failed
// or was unreachable. A party in neither Results nor Failed was cut short
// by another's failure (runner.ErrPeerFailed), which decides.
func stalled(o *job.Outcome[searchOutput], parties []string) bool {
	if len(o.Results) > 0 || len(o.Failed) == 0 {
		return false
	}
	for _, name := range parties {
		if slices.Contains(o.Silent, name) {
			continue
		}
		why, ok := o.Failed[name]
		if ok && !(strings.Contains(why, context.DeadlineExceeded.Error()) || strings.Contains(why, context.Canceled.Error())) {
			return false
		}
	}
	return true
}

// decideFinish accepts the finish step only if every party holds the same
// verified key from the same attempt.
func decideFinish(o *job.Outcome[finishOutput], parties []string) (finishDecision, error) {
	if err := o.Err(); err != nil {
		return finishDecision{}, fmt.Errorf("keygen aborted, no key installed: %w", err)
	}
	var d *finishDecision
	for _, name := range parties {
		out, ok := o.Results[name]
		if !ok {
			return finishDecision{}, fmt.Errorf("keygen aborted, no key installed: %s sent no output", name)
		}
		if d == nil {
			d = &finishDecision{Attempt: out.Attempt, KeyID: out.KeyID, TimingMS: map[string]int64{}}
		} else if string(out.KeyID) != string(d.KeyID) || out.Attempt != d.Attempt {
			return finishDecision{}, fmt.Errorf("keygen aborted, no key installed: %s holds another key than %s", name, parties[0])
		}
		for k, v := range out.TimingMS {
			d.TimingMS[k] = max(d.TimingMS[k], v)
		}
	}
	if d == nil || len(d.KeyID) != 32 {
		return finishDecision{}, fmt.Errorf("keygen aborted, no key installed: no key id")
	}
	return *d, nil
}

// decideInstall accepts the install step only if every party installed
// the agreed key.
func decideInstall(o *job.Outcome[installOutput], parties []string, keyID []byte) (installDecision, error) {
	const failed = "keygen: install failed (parties that did install keep the new key; run keygen again)"
	if err := o.Err(); err != nil {
		return installDecision{}, fmt.Errorf("%s: %w", failed, err)
	}
	for _, name := range parties {
		if out, ok := o.Results[name]; !ok || string(out.KeyID) != string(keyID) {
			return installDecision{}, fmt.Errorf("%s: %s installed another key", failed, name)
		}
	}
	return installDecision{KeyID: keyID}, nil
}

// OutputDisclosure: outputs are public values (key id, counts, timing).
func (Kind) OutputDisclosure(job.Step) wire.Disclosure { return wire.DisclosePublicResult }
