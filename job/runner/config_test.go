package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/runner"
)

func TestDefaultConfigValidates(t *testing.T) {
	c := runner.DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	// A step without a timeout commits the default: it must be one a spec
	// could set, and the grace must leave time for a report.
	if c.StepTimeout > job.MaxStepTimeout || c.Grace < time.Second {
		t.Fatalf("defaults %+v", c)
	}
}

func TestConfigRefusesWhatTheRuntimeCannotUse(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*runner.Config)
		field string
	}{
		{"zero step timeout", func(c *runner.Config) { c.StepTimeout = 0 }, "step timeout"},
		{"negative step timeout", func(c *runner.Config) { c.StepTimeout = -time.Second }, "step timeout"},
		{"step timeout under a millisecond", func(c *runner.Config) { c.StepTimeout = time.Microsecond }, "step timeout"},
		{"step timeout beyond a day", func(c *runner.Config) { c.StepTimeout = job.MaxStepTimeout + time.Millisecond }, "step timeout"},
		{"zero grace", func(c *runner.Config) { c.Grace = 0 }, "grace"},
		{"negative grace", func(c *runner.Config) { c.Grace = -1 }, "grace"},
		{"zero approval timeout", func(c *runner.Config) { c.ApprovalTimeout = 0 }, "approval timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := runner.DefaultConfig()
			tc.edit(&c)
			err := c.Validate()
			if !errors.Is(err, runner.ErrConfig) || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("got %v, want ErrConfig naming %q", err, tc.field)
			}
		})
	}
}

// A coordinator or worker with zero timeouts refuses to run before it
// touches the log or the network: neither is given here, so any use would
// panic.
func TestZeroConfigRunsNothing(t *testing.T) {
	ctx := context.Background()
	c := &runner.Coordinator{Self: "a"}
	if _, _, err := c.Run(ctx, "j"); !errors.Is(err, runner.ErrConfig) || errors.Is(err, runner.ErrDeposed) {
		t.Fatalf("coordinator: %v, want ErrConfig", err)
	}
	w := &runner.Worker{Self: "b", Job: runner.ActiveJob{ID: "j"}}
	w.Want([]job.Step{{Job: "j", Phase: "p", Attempt: 1, Parties: []string{"b"}, Coordinator: "a", TimeoutMS: 1000}})
	if err := w.Run(ctx); !errors.Is(err, runner.ErrConfig) {
		t.Fatalf("worker: %v, want ErrConfig", err)
	}
}
