package nodewatch

import (
	"context"
	"errors"

	"github.com/cohortdm/cohort/job"
)

// ForgeSeedCommitments is a lying coordinator (Watch.Lead) for a kind
// whose first steps draw a joint seed: it commits, in every party's name,
// a commitment that is not the party's own (to a contribution it chose),
// then asks the parties to open theirs: had they opened, it could open its
// own contributions in their names and choose the joint seed, and with it
// whatever the kind draws from it. Every honest party refuses the opening
// (job.ErrSeedNotOwn); if they open, the job fails saying so. seed is the
// kind's joint seed of a job.
func ForgeSeedCommitments(seed func(jobID string, spec *job.Spec) job.JointSeed) func(context.Context, job.Coordinator) (job.Result, error) {
	return func(ctx context.Context, c job.Coordinator) (job.Result, error) {
		js := seed(c.JobID(), c.Spec())
		call := job.Call[struct{}]{Parties: js.Parties}
		commit := job.Round[struct{}, job.SeedCommitment, job.SeedCommitments]{Phase: job.PhaseSeedCommit}
		if _, err := commit.Run(ctx, c, call, func(o *job.Outcome[job.SeedCommitment]) (job.SeedCommitments, error) {
			var d job.SeedCommitments
			if err := o.Err(); err != nil {
				return d, err
			}
			for _, p := range js.Parties {
				d.Commitments = append(d.Commitments, js.Commit(p, job.Contribution{1, 2, 3})) // not the party's
			}
			return d, nil
		}); err != nil {
			return nil, err
		}
		reveal := job.Round[struct{}, job.SeedOpening, job.SeedOpenings]{Phase: job.PhaseSeedReveal}
		if _, err := reveal.Run(ctx, c, call, func(o *job.Outcome[job.SeedOpening]) (job.SeedOpenings, error) {
			return job.SeedOpenings{}, o.Err()
		}); err != nil {
			return nil, err
		}
		return nil, errors.New("test: the parties opened their contributions under forged commitments")
	}
}
