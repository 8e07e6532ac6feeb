package probe

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/secureagg"
)

// Open opens a party's session: nothing to read, the vector is derived
// and the party's tables, if the spec gives it any, are checked when the
// step runs.
func (Kind) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	prm, err := parseParams(p.Spec())
	if err != nil {
		return nil, err
	}
	return &session{p: p, params: prm, js: jointSeed(p.JobID(), p.Spec())}, nil
}

type session struct {
	p      job.Participant
	params *Params
	js     job.JointSeed
}

// Step takes part in the joint seed's two steps, then checks the party's
// tables where they live (tables.go), aggregates its public vector and
// checks the total. It refuses the aggregation, naming the coordinator,
// until the log holds a joint seed its own contribution is in: the vectors
// are never the coordinator's choice. A table that fails its check makes
// the party withdraw from the aggregation, naming the table and why, so
// that the probe fails showing it.
func (s *session) Step(ctx context.Context, step job.Step) ([]byte, error) {
	if job.IsSeedStep(step) {
		return s.js.Serve(s.p, step)
	}
	return aggregate.Serve(step, func(struct{}) (output, error) {
		seed, err := s.js.Seed(s.p)
		if err != nil {
			return output{}, fmt.Errorf("probe: party %s refuses %s round %d of coordinator %s: %w", s.p.Self(), step.Phase, step.Round, step.Coordinator, err)
		}
		n := s.params.Values
		cfg, _, err := secureagg.Configure(s.p.Secrets(), s.p.Self(), step, secureagg.Setup{Backend: s.params.backend, Length: n,
			FracBits: 0, ValueBits: valueBits + 1})
		if err != nil {
			return output{}, err
		}
		checked, unusable := s.checkTables(ctx)
		if unusable != nil && ctx.Err() != nil {
			// The attempt ended while a database was checking: that is no
			// verdict on the table.
			return output{}, fmt.Errorf("probe: party %s: the attempt ended while it checked its tables: %w", s.p.Self(), context.Cause(ctx))
		}
		// No data of the party: the policy's guard checks the step's
		// parties only.
		c := secureagg.Contribution{Vector: Vector(seed, s.p.Self(), n), Unusable: unusable}
		res, o, err := secureagg.Contribute(ctx, s.p, step, cfg, c)
		if err != nil {
			return output{}, err
		}
		// Every party checks the total it got; the coordinator needs only
		// its digest.
		out := output{Outcome: *o, Checked: checked}
		out.Outcome.Sum = nil
		if res != nil {
			out.Digest = digest(res.Sum)
			out.Mismatch = check(res.Sum, seed, res.Included)
		}
		return out, nil
	})
}

// Close releases nothing.
func (s *session) Close() {}

// Vector is a party's public vector for a job: n integers in
// [0, 2^20), from ChaCha8 seeded by SHA-256 of the job's joint seed and
// the party's name. Every member can derive every party's.
func Vector(seed []byte, party string, n int) []float64 {
	h := sha256.New()
	h.Write([]byte("cohort/probe/vector/1"))
	binary.Write(h, binary.LittleEndian, uint64(len(seed)))
	h.Write(seed)
	h.Write([]byte(party))
	var key [32]byte
	h.Sum(key[:0])
	rng := rand.NewChaCha8(key)
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(rng.Uint64() >> (64 - valueBits))
	}
	return out
}

// check compares a total with the sum of the included parties' vectors
// and describes the first value that differs ("" when none does).
func check(sum []float64, seed []byte, included []string) string {
	want := make([]float64, len(sum))
	for _, p := range included {
		for i, x := range Vector(seed, p, len(sum)) {
			want[i] += x
		}
	}
	for i := range sum {
		if sum[i] != want[i] {
			return fmt.Sprintf("value %d of %d is off by %g", i, len(sum), sum[i]-want[i])
		}
	}
	return ""
}

// digest is the SHA-256 of a total's values (float64 bits, little-endian).
func digest(sum []float64) string {
	h := sha256.New()
	var b [8]byte
	for _, x := range sum {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}
