package jobtest

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/cohortdm/cohort/job"
	jobrun "github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/wire"
)

// SecretsIn gives each party a data dir of its own, dir/PARTY, as its
// node's (for Options.Secrets): where a kind's sessions keep what they
// must across steps, a joint seed's contribution among them.
func SecretsIn(dir string, parties []string) map[string]job.Secrets {
	out := make(map[string]job.Secrets, len(parties))
	for _, p := range parties {
		out[p] = job.DirSecrets(filepath.Join(dir, p))
	}
	return out
}

// CheckJointSeed checks a finished job's draw js against its leakage
// profile (package job, reveal.go) and returns the joint seed:
//
//   - the log holds the draw's two records, every party's commitment and
//     every party's opening, each matching its commitment;
//   - the seed-reveal step started only after the commitments were
//     committed;
//   - every message of the two steps is a party's output to a coordinator,
//     disclosed as a public result (or the runtime's control, for a
//     failure);
//   - no contribution is in any other message, nor in any log entry before
//     the record of the seed-reveal step.
func (r *Report) CheckJointSeed(js job.JointSeed) ([]byte, error) {
	var com job.SeedCommitments
	var ops job.SeedOpenings
	comAt, revAt, revStart := -1, -1, -1
	for i, e := range r.Log {
		if e.Op == OpStart && e.Step != nil && e.Step.Phase == job.PhaseSeedReveal && e.Step.Round == js.Round && revStart < 0 {
			revStart = i
		}
		if e.Op != OpDone || e.Record == nil || e.Record.Step.Round != js.Round || e.Record.Error != "" {
			continue
		}
		var err error
		switch e.Record.Step.Phase {
		case job.PhaseSeedCommit:
			comAt, err = i, wire.Unmarshal(e.Record.Decision, &com)
		case job.PhaseSeedReveal:
			revAt, err = i, wire.Unmarshal(e.Record.Decision, &ops)
		}
		if err != nil {
			return nil, fmt.Errorf("the log's %s record: %w", e.Record.Step.Phase, err)
		}
	}
	switch {
	case comAt < 0 || revAt < 0:
		return nil, fmt.Errorf("the log holds no committed draw of round %d", js.Round)
	case revStart < comAt:
		return nil, errors.New("the seed-reveal step started before the commitments were committed")
	}
	seed, err := js.Fold(com, ops)
	if err != nil {
		return nil, err
	}
	for _, s := range r.Sent {
		if !job.IsSeedStep(job.Step{Phase: s.Message.Phase}) {
			continue
		}
		if s.Message.Type == jobrun.FailedType && s.Disclosure == wire.DiscloseControl && len(s.Message.Body) == 0 {
			continue // a party that failed the step tells the others
		}
		if s.Message.Type != jobrun.OutputType || !slices.Contains(r.Leaders, s.To) ||
			(s.Disclosure != wire.DisclosePublicResult && s.Disclosure != wire.DiscloseControl) {
			return nil, fmt.Errorf("%s sent %s of %s to %s as %s", s.From, s.Message.Type, s.Message.Phase, s.To, s.Disclosure)
		}
	}
	for _, op := range ops.Openings {
		for _, s := range r.SentHolding(op.Contribution) {
			if s.Message.Phase != job.PhaseSeedReveal || s.From != op.Party {
				return nil, fmt.Errorf("party %s's contribution is in a %s message of %s from %s", op.Party, s.Message.Type, s.Message.Phase, s.From)
			}
		}
		for i, e := range r.Log {
			if i < revAt && bytes.Contains(e.Data, op.Contribution) {
				return nil, fmt.Errorf("party %s's contribution is in log entry %d (%s), before the openings' record", op.Party, i, e.Op)
			}
		}
	}
	return seed, nil
}
