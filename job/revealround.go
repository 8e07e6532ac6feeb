package job

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
)

// The two steps of a joint seed, as typed rounds:
//
//  1. seed-commit (round: the draw's): each party draws its contribution
//     (once per job and draw: it keeps it in its Secrets, so a re-run
//     attempt, a new leader or a restart gets the same one back) and
//     returns its commitment to the coordinator, which commits the list
//     of every party's commitment;
//  2. seed-reveal (same round): each party reads that list in the log,
//     checks that it holds every party's commitment and its own, and
//     returns its opening; the coordinator checks every opening against
//     its commitment and commits the list of openings.
//
// Then every party folds the committed openings into the joint seed
// (Seed), checking each against its commitment and its own against its
// contribution; the coordinator does the same (Draw returns it), and a new
// leader replaying Coordinate reads both steps from the log and gets the
// same seed.
var (
	seedCommitRound = Round[seedArgs, SeedCommitment, SeedCommitments]{Phase: PhaseSeedCommit}
	seedRevealRound = Round[seedArgs, SeedOpening, SeedOpenings]{Phase: PhaseSeedReveal}
)

// seedArgs are the args of both steps: a party takes everything else from
// the log.
type seedArgs struct{}

// IsSeedStep reports whether step is one of a joint seed's two steps.
func IsSeedStep(step Step) bool {
	return step.Phase == PhaseSeedCommit || step.Phase == PhaseSeedReveal
}

// Draw runs the draw's two steps on the coordinator (timeoutMS bounds each,
// the node's default when zero) and returns the joint seed. Every party of
// the draw must take part: a step where one fails, times out or sends a
// commitment or opening that does not check fails, naming it, and so does
// the job (a new job draws afresh).
func (js JointSeed) Draw(ctx context.Context, c Coordinator, timeoutMS int64) ([]byte, error) {
	call := Call[seedArgs]{Round: js.Round, Parties: js.Parties, TimeoutMS: timeoutMS}
	com, err := seedCommitRound.Run(ctx, c, call, js.decideCommit)
	if err != nil {
		return nil, err
	}
	rev, err := seedRevealRound.Run(ctx, c, call, func(o *Outcome[SeedOpening]) (SeedOpenings, error) {
		return js.decideReveal(com.Decision, o)
	})
	if err != nil {
		return nil, err
	}
	seed, err := js.Fold(com.Decision, rev.Decision)
	if err != nil {
		return nil, fmt.Errorf("joint seed round %d, as committed: %w", js.Round, err)
	}
	return seed, nil
}

// decideCommit gathers every party's commitment, in party order.
func (js JointSeed) decideCommit(o *Outcome[SeedCommitment]) (SeedCommitments, error) {
	var d SeedCommitments
	if err := o.Err(); err != nil {
		return d, fmt.Errorf("joint seed: %w", err)
	}
	for _, p := range js.Parties {
		c, ok := o.Results[p]
		switch {
		case !ok:
			return d, fmt.Errorf("joint seed: %w: party %s sent no commitment", ErrSeedParties, p)
		case c.Party != p:
			return d, fmt.Errorf("joint seed: %w: party %s sent a commitment in another party's name", ErrSeedParties, p)
		}
		d.Commitments = append(d.Commitments, c)
	}
	if err := js.CheckCommitments(d); err != nil {
		return SeedCommitments{}, fmt.Errorf("joint seed: %w", err)
	}
	return d, nil
}

// decideReveal gathers every party's opening, in party order, each checked
// against the committed commitments com.
func (js JointSeed) decideReveal(com SeedCommitments, o *Outcome[SeedOpening]) (SeedOpenings, error) {
	var d SeedOpenings
	if err := o.Err(); err != nil {
		return d, fmt.Errorf("joint seed: %w", err)
	}
	for _, p := range js.Parties {
		op, ok := o.Results[p]
		switch {
		case !ok:
			return d, fmt.Errorf("joint seed: %w: party %s sent no opening", ErrSeedParties, p)
		case op.Party != p:
			return d, fmt.Errorf("joint seed: %w: party %s sent an opening in another party's name", ErrSeedParties, p)
		}
		if err := js.Verify(com, op); err != nil {
			return d, fmt.Errorf("joint seed: %w", err)
		}
		d.Openings = append(d.Openings, op)
	}
	return d, nil
}

// contributionName is where a party keeps its contribution to the draw:
// the job's scratch, removed by the node once the job has ended.
func (js JointSeed) contributionName() string {
	return "jobs/" + js.Job + "/joint-seed/" + strconv.Itoa(js.Round)
}

// contribution returns the party's contribution to the draw, drawing and
// keeping it first when create is set and it has none.
func (js JointSeed) contribution(sec Secrets, create bool) (Contribution, error) {
	c, err := KeptRandom(sec, js.contributionName(), create)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return c, fmt.Errorf("it holds no contribution to joint seed round %d", js.Round)
	case err != nil:
		return c, fmt.Errorf("joint seed round %d: %w", js.Round, err)
	}
	return c, nil
}

// Serve runs a party's side of the draw's seed-commit or seed-reveal step
// (a kind's Session.Step hands it the steps IsSeedStep picks out). It
// refuses, naming the coordinator, a step of another round or other
// parties than the draw's, a step the log holds finished already, and a
// reveal unless the log holds the commitments of every party of the draw,
// its own among them.
func (js JointSeed) Serve(p Participant, step Step) ([]byte, error) {
	refuse := func(err error) error {
		return fmt.Errorf("party %s refuses %s round %d: %w (coordinator %s)", p.Self(), step.Phase, step.Round, err, step.Coordinator)
	}
	if step.Round != js.Round || !slices.Equal(step.Parties, js.Parties) || !slices.Contains(js.Parties, p.Self()) {
		return nil, refuse(fmt.Errorf("the draw is round %d over %v", js.Round, js.Parties))
	}
	hist := p.History()
	switch step.Phase {
	case PhaseSeedCommit:
		if len(js.records(seedCommitRound, hist)) > 0 {
			return nil, refuse(errors.New("the log holds the commitments already"))
		}
		return seedCommitRound.Serve(step, func(seedArgs) (SeedCommitment, error) {
			c, err := js.contribution(p.Secrets(), true)
			if err != nil {
				return SeedCommitment{}, refuse(err)
			}
			return js.Commit(p.Self(), c), nil
		})
	case PhaseSeedReveal:
		if len(js.records(seedRevealRound, hist)) > 0 {
			return nil, refuse(errors.New("the log holds the openings already"))
		}
		com, err := js.committed(hist)
		if err != nil {
			return nil, refuse(err)
		}
		return seedRevealRound.Serve(step, func(seedArgs) (SeedOpening, error) {
			c, err := js.own(p, com)
			if err != nil {
				return SeedOpening{}, refuse(err)
			}
			return js.Open(p.Self(), c), nil
		})
	}
	return nil, refuse(errors.New("it is no step of a joint seed"))
}

// own returns the party's contribution after checking that com holds its
// commitment to it.
func (js JointSeed) own(p Participant, com SeedCommitments) (Contribution, error) {
	c, err := js.contribution(p.Secrets(), false)
	if err != nil {
		return c, err
	}
	mine := js.Commit(p.Self(), c)
	i := slices.IndexFunc(com.Commitments, func(x SeedCommitment) bool { return x.Party == p.Self() })
	if i < 0 || !slices.Equal(com.Commitments[i].Digest, mine.Digest) {
		return c, ErrSeedNotOwn
	}
	return c, nil
}

// records returns the draw's records of round r in hist.
func (js JointSeed) records(r interface{ History([]*Record) []*Record }, hist []*Record) []*Record {
	var out []*Record
	for _, rec := range r.History(hist) {
		if rec.Step.Round == js.Round {
			out = append(out, rec)
		}
	}
	return out
}

// one returns the one record of round r in hist, which must have
// succeeded.
func one[A, O, D any](js JointSeed, r Round[A, O, D], hist []*Record) (D, error) {
	var d D
	recs := js.records(r, hist)
	if len(recs) != 1 {
		return d, fmt.Errorf("the log holds %d %s records of round %d, not 1", len(recs), r.Phase, js.Round)
	}
	if !slices.Equal(recs[0].Step.Parties, js.Parties) {
		return d, fmt.Errorf("the log holds %s round %d over %v, not the draw's %v", r.Phase, js.Round, recs[0].Step.Parties, js.Parties)
	}
	return r.Decision(recs[0])
}

// committed returns the draw's commitments from the log, checked.
func (js JointSeed) committed(hist []*Record) (SeedCommitments, error) {
	com, err := one(js, seedCommitRound, hist)
	if err != nil {
		return com, err
	}
	if err := js.CheckCommitments(com); err != nil {
		return SeedCommitments{}, fmt.Errorf("the committed list: %w", err)
	}
	return com, nil
}

// Seed is the joint seed as a party recomputes it from the log: every
// opening checked against its commitment, its own against the contribution
// it keeps. A kind calls it before it uses the seed, and refuses the step
// when it fails (the draw is not finished, a party is missing, an opening
// does not match, or the log holds another commitment in its name).
func (js JointSeed) Seed(p Participant) ([]byte, error) {
	hist := p.History()
	com, err := js.committed(hist)
	if err != nil {
		return nil, fmt.Errorf("party %s: joint seed round %d: %w", p.Self(), js.Round, err)
	}
	rev, err := one(js, seedRevealRound, hist)
	if err != nil {
		return nil, fmt.Errorf("party %s: joint seed round %d: %w", p.Self(), js.Round, err)
	}
	seed, err := js.Fold(com, rev)
	if err != nil {
		return nil, fmt.Errorf("party %s: joint seed round %d: %w", p.Self(), js.Round, err)
	}
	if slices.Contains(js.Parties, p.Self()) {
		if _, err := js.own(p, com); err != nil {
			return nil, fmt.Errorf("party %s: joint seed round %d: %w", p.Self(), js.Round, err)
		}
	}
	return seed, nil
}

// Drawn reports whether hist holds both of the draw's steps finished
// (not whether they check: Seed says that).
func (js JointSeed) Drawn(hist []*Record) bool {
	return len(js.records(seedCommitRound, hist)) > 0 && len(js.records(seedRevealRound, hist)) > 0
}
