package secureagg

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/cohortdm/cohort/lattice"
)

// Decryption on the lattice backend. A decryption share has no cheap
// validity proof, so the root compares the decryptions of several quorums
// (lattice.Plan, lattice.Verdict) instead of verifying proofs:
//
//   - Seq 0, the plan every party derives from the step: lattice.PlanVerified
//     over every party (quorums that no single member is in all of, so a
//     single wrong share is always detected), or lattice.PlanSingle when the
//     parties are exactly a quorum (nothing is then detected beyond the
//     range checks). Every party sends its shares at once.
//   - Seq 1: when some shares did not come (late, lost, malformed), the
//     root names those parties in Result.Excluded and asks the others for
//     the plan over the parties left (a share request naming them).
//   - Seq 2: when the quorums disagree and the verdict names nobody, the
//     root asks for lattice.PlanBlame over the same parties; its verdict names
//     the party whose shares were wrong (Result.Excluded), or, if it
//     cannot (three parties, or more than one faulty), the aggregation
//     fails naming the suspects.
//
// Every share of plan Seq for quorum q travels on the step's sub-channel
// "share/Seq/q", so shares of different plans never answer each other.

// plan is the plan over the available points: the blame plan, or the
// verified one, or a single quorum when only a quorum is available.
func (s *latticeAgg) plan(available []int, blame bool) (*lattice.Plan, error) {
	switch {
	case blame:
		return lattice.PlanBlame(s.keys.PublicKey, available)
	case len(available) > s.keys.Quorum:
		return lattice.PlanVerified(s.keys.PublicKey, available)
	}
	return lattice.PlanSingle(s.keys.PublicKey, available)
}

// shareChannel is the sub-channel of the shares of one quorum of plan
// seq.
func shareChannel(seq, quorum int) string {
	return "share/" + strconv.Itoa(seq) + "/" + strconv.Itoa(quorum)
}

// members lists the parties in plan's quorums other than this party,
// sorted.
func (s *latticeAgg) members(plan *lattice.Plan) []string {
	var out []string
	for _, q := range plan.Quorums {
		for _, p := range q {
			if name := s.nameOf(p); name != s.self && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}

func (s *latticeAgg) names(points []int) []string {
	out := make([]string, len(points))
	for i, p := range points {
		out[i] = s.nameOf(p)
	}
	return out
}

// result decodes the result from the parent: the message to pass down (as
// it came) and this party's outcome; nil frames and an error for a
// malformed result.
func (s *latticeAgg) result(data []byte, _ []string) (frames, *Result, error) {
	res, err := decodeLatticeResult(data, s.coeffs(), s.keys.Params.PlaintextModulus(), s.parties)
	if err != nil {
		return nil, nil, err
	}
	f, err := s.relayBlob(data)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case len(res.Missing) > 0:
		return f, nil, &MissingError{Parties: res.Missing, Formed: true}
	case res.Error != "":
		return f, nil, fmt.Errorf("%w: %s", ErrRoot, res.Error)
	}
	out, err := s.outcome(res)
	return f, out, err
}

// resultMissing is the verdict a party passes down when its parent never
// passed a result.
func (s *latticeAgg) resultMissing(missing []string) (frames, error) {
	data, err := encodeResult(&latticeResult{Missing: missing})
	if err != nil {
		return nil, err
	}
	return splitBlob(s.shape, data, s.partSize)
}

// outcome decodes and range-checks a result's sum.
func (s *latticeAgg) outcome(res *latticeResult) (*Result, error) {
	totals, err := s.layout.Decode(res.plain, len(s.parties))
	if err != nil {
		return nil, fmt.Errorf("%w: the root's result: %w: %w", ErrRoot, ErrRange, err)
	}
	sum := totals.Float64s()
	for i, v := range sum {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, fmt.Errorf("%w: decrypted sum[%d] is not a finite float", ErrRange, i)
		}
	}
	return &Result{Sum: sum, Included: res.Included, Excluded: res.Excluded, Noise: res.Noise}, nil
}
