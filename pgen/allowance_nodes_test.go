package pgen

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/internal/testkit/nodewatch"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// rerunPublish coordinates as pgen does, but runs the publish step twice,
// as a new leader does when the one before it fell between the parties'
// outputs and the commit: after the joint seed it starts the publish step
// and waits for every party's tree (an attempt it never commits), then
// coordinates as pgen does, which finds the step unfinished in the log and
// starts it again (the next attempt).
func rerunPublish(ctx context.Context, c job.Coordinator) (job.Result, error) {
	if _, err := jointSeed(c.JobID(), c.Spec()).Draw(ctx, c, 0); err != nil {
		return nil, err
	}
	args, err := wire.Marshal(&publishArgs{})
	if err != nil {
		return nil, err
	}
	a, err := c.Start(ctx, job.Step{Phase: publishRound.Phase, Args: args})
	if err != nil {
		return nil, err
	}
	if _, err := a.Wait(ctx); err != nil {
		return nil, err
	}
	return Kind{}.Coordinate(ctx, c)
}

// TestSyntheticAllowanceNodes: a published tree is a synthetic release of
// its party's rows (trees of the same rows under other params intersect),
// so over real nodes whose policy allows one per dataset, hub coordinating
// the marked job twice and running each job's publish step twice, the
// first job publishes every tree at its second attempt (its first attempt
// counted already: a re-run counts once), and the second job is refused
// at publish round 0 by every party, its policy naming the rule and not
// the dataset's file; no party outputs a tree in it (its ledger holds its
// refusal alone).
func TestSyntheticAllowanceNodes(t *testing.T) {
	t.Parallel()
	dir, spec, _ := markedJob(t)
	pol := policy.Default()
	pol.Kinds["pgen"] = []string{policy.Any}
	pol.SyntheticReleases = 1
	runs := simtest.RunWatchedJobs(t, append([]string{hub}, lyingParties...), hub, "pgen", nodewatch.Watch{Kind: Kind{}, Lead: rerunPublish},
		[][]byte{spec, spec}, sim.ClusterOptions{TablesDir: dir, Timing: nodeTiming, Policy: pol})
	first, second := runs[0], runs[1]
	if first.Rec.Status != node.StatusDone {
		t.Fatalf("the first job is %s: %s", first.Rec.Status, first.Rec.Error)
	}
	i := slices.IndexFunc(first.Rec.Steps, func(s *runner.StepRecord) bool { return s.Phase == publishRound.Phase && s.Round == 0 })
	if i < 0 || first.Rec.Steps[i].Attempt < 2 {
		t.Fatalf("the first job's publish step did not run twice: %+v", first.Rec.Steps)
	}
	trees := map[int]int{} // trees output in the first job, by attempt
	first.Capture.Mu.Lock()
	for _, o := range first.Capture.Outputs {
		if o.Job == first.ID && o.Phase == publishRound.Phase && o.Body != nil {
			trees[o.Attempt]++
		}
	}
	first.Capture.Mu.Unlock()
	if trees[1] != len(lyingParties) || trees[first.Rec.Steps[i].Attempt] != len(lyingParties) {
		t.Fatalf("trees output by attempt %v: every party must publish in the first attempt and in the committed one", trees)
	}
	second.Refused(t, publishRound.Phase, 0, lyingParties, "refused by PARTY's policy", "rule synthetic_releases")
	for _, p := range lyingParties {
		if why := second.Rec.Failures[p]; strings.Contains(why, ".csv") {
			t.Errorf("%s's refusal %q names its dataset's file", p, why)
		}
	}
	second.Undisclosed(t, publishRound.Phase, 0, lyingParties, hub, publishRound.Phase)
}
