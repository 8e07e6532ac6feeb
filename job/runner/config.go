package runner

import (
	"errors"
	"fmt"
	"time"

	"github.com/cohortdm/cohort/job"
)

// ErrConfig marks a Coordinator or Worker whose Config is unusable; Run
// refuses it before it commits or sends anything.
var ErrConfig = errors.New("runner: bad config")

// Config holds a member's runtime timeouts, one value for its Coordinator
// and its Workers, so that a member's coordinator and parties agree on how
// long a message may take. Start from DefaultConfig: a zero field is
// refused, not defaulted, because a zero step timeout would be committed
// to the log (TimeoutMS 0) and a zero grace would end every wait at once.
type Config struct {
	// StepTimeout is the timeout of a step that sets none (coordinator).
	StepTimeout time.Duration
	// Grace is how long one message may take: the coordinator waits this
	// long for a report beyond the step's timeout (the report itself must
	// cross the network), and a worker gives up sending its report after
	// it.
	Grace time.Duration
	// ApprovalTimeout bounds how long a job waits for the parties whose
	// policy asks a person to approve it (coordinator).
	ApprovalTimeout time.Duration
}

// DefaultConfig is the runtime's one set of default timeouts: those of a
// node whose node.yaml sets none.
func DefaultConfig() Config {
	return Config{StepTimeout: 2 * time.Minute, Grace: 30 * time.Second, ApprovalTimeout: 24 * time.Hour}
}

// Validate checks that every timeout is positive and that the step
// timeout is one a spec could set (job.MaxStepTimeout at most), naming the
// field.
func (c Config) Validate() error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"step timeout", c.StepTimeout}, {"grace", c.Grace}, {"approval timeout", c.ApprovalTimeout}} {
		// Milliseconds, because that is what a committed step holds.
		if f.d.Milliseconds() <= 0 {
			return fmt.Errorf("%w: %s %v: want at least 1ms (runner.DefaultConfig has the defaults)", ErrConfig, f.name, f.d)
		}
	}
	if c.StepTimeout > job.MaxStepTimeout {
		return fmt.Errorf("%w: step timeout %v: want at most %v", ErrConfig, c.StepTimeout, job.MaxStepTimeout)
	}
	return nil
}
