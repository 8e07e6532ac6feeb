package job

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
)

// A joint seed is public randomness that no party chose: every party
// draws a contribution, commits to it, and opens it only once every
// party's commitment is in the log (coin flipping by commitment, after
// Blum, "Coin flipping by telephone", CRYPTO 1981). The seed is a hash
// of all the openings, so it is uniform as long as one party drew its
// contribution honestly and kept it to itself until every commitment was
// fixed: nobody else, the coordinator included, can steer it.
//
// The job's seed (Participant.Seed) is the leader's alone; a kind whose
// parties rely on public randomness for their security (keygen's
// biprimality bases, pgen's pseudo-rows, coherence's public draw) draws
// a joint seed instead, with two steps (JointSeed.Draw and
// JointSeed.Serve): seed-commit, then seed-reveal.
//
// What it does not prevent: the last party to open, or a coordinator,
// can see the seed before anyone else and abort the job. An abort is a
// failed job in every member's log, and a new job draws every
// contribution afresh; a party never opens a second contribution within
// one job (it keeps its one contribution in its Secrets), so no re-run of
// a step, no leader change and no restart gives anyone a second draw.

// ContributionSize is the size of a party's contribution to a joint seed.
const ContributionSize = 32

// Phases of a joint seed's two steps.
const (
	PhaseSeedCommit = "seed-commit"
	PhaseSeedReveal = "seed-reveal"
)

// Domain separators of the two hashes.
const (
	commitDomain = "cohort/job/seed-commit/v1"
	foldDomain   = "cohort/job/joint-seed/v1"
)

// Errors of the joint seed. Their texts name parties, never a value.
var (
	// ErrSeedOpening means an opening does not match its party's
	// commitment, or a contribution has the wrong size.
	ErrSeedOpening = errors.New("an opening does not match its commitment")
	// ErrSeedParties means a list of commitments or openings does not
	// hold exactly the draw's parties, each once, in name order.
	ErrSeedParties = errors.New("the joint seed's parties do not match")
	// ErrSeedNotOwn means the log holds another commitment in a party's
	// name than the one to its own contribution: the party refuses.
	ErrSeedNotOwn = errors.New("its own commitment is not the committed one")
)

// Contribution is one party's secret share of a joint seed, drawn from
// crypto/rand. It stays with its party until every party's commitment is
// committed; then it is opened, and is public.
type Contribution [ContributionSize]byte

// NewContribution draws a contribution from r (crypto/rand.Reader when
// nil).
func NewContribution(r io.Reader) (Contribution, error) {
	if r == nil {
		r = rand.Reader
	}
	var c Contribution
	if _, err := io.ReadFull(r, c[:]); err != nil {
		return c, fmt.Errorf("draw a seed contribution: %w", err)
	}
	return c, nil
}

// KeptRandom returns the ContributionSize random bytes a party keeps in
// its Secrets under name (the job's scratch, "jobs/JOBID/..."), drawing
// them from crypto/rand and keeping them first when it has none and
// create is set: a re-run of a step (a new leader, a restart) then uses
// the same bytes, not new ones. Without create, having none is an error
// wrapping os.ErrNotExist.
func KeptRandom(sec Secrets, name string, create bool) (Contribution, error) {
	var c Contribution
	b, err := sec.ReadSecret(name)
	switch {
	case err == nil && len(b) == ContributionSize:
		copy(c[:], b)
		return c, nil
	case err == nil:
		return c, fmt.Errorf("its kept %s is %d bytes, not %d", path.Base(name), len(b), ContributionSize)
	case !errors.Is(err, os.ErrNotExist):
		return c, fmt.Errorf("read its kept %s: %w", path.Base(name), err)
	case !create:
		return c, err
	}
	if c, err = NewContribution(nil); err != nil {
		return c, err
	}
	if err := sec.WriteSecret(name, c[:]); err != nil {
		return c, fmt.Errorf("keep its %s: %w", path.Base(name), err)
	}
	return c, nil
}

// SeedCommitment is a party's commitment to its contribution, public: a
// party's output of the seed-commit step, and an entry of its decision.
type SeedCommitment struct {
	Party  string `msgpack:"party"`
	Digest []byte `msgpack:"digest"`
}

// SeedOpening is a party's contribution, opened: a party's output of the
// seed-reveal step, and an entry of its decision. Public.
type SeedOpening struct {
	Party        string `msgpack:"party"`
	Contribution []byte `msgpack:"contribution"`
}

// SeedCommitments is the seed-commit step's decision: every party's
// commitment, in party name order.
type SeedCommitments struct {
	Commitments []SeedCommitment `msgpack:"commitments"`
}

// SeedOpenings is the seed-reveal step's decision: every party's opening,
// in party name order.
type SeedOpenings struct {
	Openings []SeedOpening `msgpack:"openings"`
}

// JointSeed is one draw of a joint seed: its public parameters only (the
// job, the draw's round, the parties that must contribute). Its methods
// here do no I/O; Draw and Serve (revealround.go) run its two steps.
type JointSeed struct {
	Job   string
	Round int
	// Parties contribute, sorted; every one of them must.
	Parties []string
}

// NewJointSeed sets up draw round of job over parties (sorted and
// deduplicated here).
func NewJointSeed(jobID string, round int, parties []string) JointSeed {
	ps := slices.Compact(slices.Sorted(slices.Values(parties)))
	return JointSeed{Job: jobID, Round: round, Parties: ps}
}

// hasher writes length-prefixed fields, so that no two inputs share an
// encoding.
type hasher struct{ b []byte }

func (h *hasher) bytes(b []byte) {
	h.b = binary.BigEndian.AppendUint32(h.b, uint32(len(b)))
	h.b = append(h.b, b...)
}

func (h *hasher) str(s string) { h.bytes([]byte(s)) }

func (h *hasher) uint(v uint64) { h.b = binary.BigEndian.AppendUint64(h.b, v) }

func (h *hasher) sum() []byte {
	d := sha256.Sum256(h.b)
	return d[:]
}

// digest is party's commitment to c:
//
//	SHA-256(⟨"cohort/job/seed-commit/v1"⟩ ‖ ⟨job⟩ ‖ ⟨party⟩ ‖ round ‖ ⟨c⟩)
//
// where ⟨x⟩ is x prefixed with its length (4 bytes, big-endian) and round
// is 8 bytes, big-endian. c is 32 uniform bytes, so the digest hides it
// (SHA-256 as a random oracle) and binds party to it (collision
// resistance); job, party and round keep a commitment from being replayed
// in another job, by another party or in another draw.
func (js JointSeed) digest(party string, c []byte) []byte {
	var h hasher
	h.str(commitDomain)
	h.str(js.Job)
	h.str(party)
	h.uint(uint64(js.Round))
	h.bytes(c)
	return h.sum()
}

// Commit is party's commitment to c.
func (js JointSeed) Commit(party string, c Contribution) SeedCommitment {
	return SeedCommitment{Party: party, Digest: js.digest(party, c[:])}
}

// Open is party's opening of c.
func (js JointSeed) Open(party string, c Contribution) SeedOpening {
	return SeedOpening{Party: party, Contribution: slices.Clone(c[:])}
}

// CheckCommitments checks that d holds one commitment of SHA-256's size
// for every party of the draw, in party order, and nothing else.
func (js JointSeed) CheckCommitments(d SeedCommitments) error {
	if err := js.checkParties(len(d.Commitments), func(i int) string { return d.Commitments[i].Party }); err != nil {
		return fmt.Errorf("commitments: %w", err)
	}
	for _, c := range d.Commitments {
		if len(c.Digest) != sha256.Size {
			return fmt.Errorf("%w: party %s's commitment is %d bytes, not %d", ErrSeedParties, c.Party, len(c.Digest), sha256.Size)
		}
	}
	return nil
}

// checkParties checks that a list of n entries, whose i-th names party
// name(i), names the draw's parties in order.
func (js JointSeed) checkParties(n int, name func(int) string) error {
	for i, p := range js.Parties {
		switch {
		case i >= n:
			return fmt.Errorf("%w: party %s is missing", ErrSeedParties, p)
		case name(i) != p:
			if slices.Contains(js.Parties, name(i)) {
				return fmt.Errorf("%w: party %s is missing or out of order", ErrSeedParties, p)
			}
			return fmt.Errorf("%w: %.64q is no party of the draw", ErrSeedParties, name(i))
		}
	}
	if n > len(js.Parties) {
		return fmt.Errorf("%w: %d entries for %d parties", ErrSeedParties, n, len(js.Parties))
	}
	return nil
}

// Verify checks o against its party's commitment in d (checked with
// CheckCommitments).
func (js JointSeed) Verify(d SeedCommitments, o SeedOpening) error {
	i := slices.IndexFunc(d.Commitments, func(c SeedCommitment) bool { return c.Party == o.Party })
	if i < 0 {
		return fmt.Errorf("%w: %.64q has no commitment", ErrSeedParties, o.Party)
	}
	if len(o.Contribution) != ContributionSize {
		return fmt.Errorf("%w: party %s's contribution is %d bytes, not %d", ErrSeedOpening, o.Party, len(o.Contribution), ContributionSize)
	}
	// Commitments are public; a comparison in constant time is not needed.
	if !slices.Equal(js.digest(o.Party, o.Contribution), d.Commitments[i].Digest) {
		return fmt.Errorf("%w: party %s's opening", ErrSeedOpening, o.Party)
	}
	return nil
}

// Fold verifies every opening of o against its commitment in d and
// returns the joint seed:
//
//	SHA-256(⟨"cohort/job/joint-seed/v1"⟩ ‖ ⟨job⟩ ‖ round ‖ n ‖ ⟨p_1⟩ ‖ ⟨c_1⟩ ‖ … ‖ ⟨p_n⟩ ‖ ⟨c_n⟩)
//
// with the parties p_1 < … < p_n of the draw, c_i party p_i's opened
// contribution, n 4 bytes big-endian and the rest as in the commitment.
// It fails, naming the party, when a commitment or an opening is missing
// or an opening does not match.
func (js JointSeed) Fold(d SeedCommitments, o SeedOpenings) ([]byte, error) {
	if err := js.CheckCommitments(d); err != nil {
		return nil, err
	}
	if err := js.checkParties(len(o.Openings), func(i int) string { return o.Openings[i].Party }); err != nil {
		return nil, fmt.Errorf("openings: %w", err)
	}
	var h hasher
	h.str(foldDomain)
	h.str(js.Job)
	h.uint(uint64(js.Round))
	h.b = binary.BigEndian.AppendUint32(h.b, uint32(len(o.Openings)))
	for _, op := range o.Openings {
		if err := js.Verify(d, op); err != nil {
			return nil, err
		}
		h.str(op.Party)
		h.bytes(op.Contribution)
	}
	return h.sum(), nil
}
