package runner

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/job"
)

// ErrReplay means a replayed Coordinate derived a step that differs from
// the one committed to the log: the kind's Coordinate is not deterministic.
var ErrReplay = errors.New("replayed step differs from the committed one")

// CheckReplay compares a step derived by a replayed Coordinate with the one
// the log holds for the same phase and round, naming the first field that
// differs. The attempt, job and coordinator are the runtime's, not the
// kind's, and are not compared.
func CheckReplay(committed, derived job.Step) error {
	switch {
	case committed.Phase != derived.Phase:
		return fmt.Errorf("%w: field phase: %q, committed %q", ErrReplay, derived.Phase, committed.Phase)
	case committed.Round != derived.Round:
		return fmt.Errorf("%w: field round: %d, committed %d", ErrReplay, derived.Round, committed.Round)
	case !slices.Equal(committed.Parties, derived.Parties):
		return fmt.Errorf("%w: step %s/%d field parties: %v, committed %v", ErrReplay, derived.Phase, derived.Round, derived.Parties, committed.Parties)
	case string(committed.Args) != string(derived.Args):
		return fmt.Errorf("%w: step %s/%d field args: %d bytes differ from the %d committed", ErrReplay, derived.Phase, derived.Round, len(derived.Args), len(committed.Args))
	case committed.TimeoutMS != derived.TimeoutMS:
		return fmt.Errorf("%w: step %s/%d field timeout_ms: %d, committed %d", ErrReplay, derived.Phase, derived.Round, derived.TimeoutMS, committed.TimeoutMS)
	}
	return nil
}

// NextAttempt derives the attempt a coordinator starts for step: the
// parties sorted (the spec's when empty), and, when the log already holds
// an attempt of the same phase and round (latest), the replay checked
// against it (ErrReplay) and the attempt numbered after it; a step without
// a timeout keeps the one the log holds, or takes defaultTimeoutMS. The
// caller answers a finished step from the log instead of starting the
// result.
func NextAttempt(step job.Step, latest *job.Step, spec *job.Spec, jobID, coordinator string, defaultTimeoutMS int64) (job.Step, error) {
	if len(step.Parties) == 0 {
		step.Parties = spec.PartyNames()
	} else {
		step.Parties = slices.Sorted(slices.Values(step.Parties))
	}
	step.Attempt = 1
	if latest != nil {
		if step.TimeoutMS == 0 {
			step.TimeoutMS = latest.TimeoutMS // the default of the leader that started it
		}
		if err := CheckReplay(*latest, step); err != nil {
			return job.Step{}, err
		}
		step.Attempt = latest.Attempt + 1
	}
	step.Job, step.Coordinator, step.Channel = jobID, coordinator, ""
	if step.TimeoutMS == 0 {
		step.TimeoutMS = defaultTimeoutMS
	}
	return step, nil
}
