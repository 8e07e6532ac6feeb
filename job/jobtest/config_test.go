package jobtest_test

import (
	"errors"
	"testing"
	"time"

	jobrun "github.com/cohortdm/cohort/job/runner"
)

// A negative timeout is refused before anything is committed; zero takes
// jobtest's default, and the step committed carries it, never 0.
func TestRunTimeouts(t *testing.T) {
	spec, opts, _ := countJob(t, "a", "b")
	for _, bad := range [][2]time.Duration{{-time.Second, 0}, {0, -time.Millisecond}} {
		opts.StepTimeout, opts.Grace = bad[0], bad[1]
		if rep, err := run(t, &countKind{steps: 1, calls: newCalls()}, spec, opts); !errors.Is(err, jobrun.ErrConfig) || rep != nil {
			t.Fatalf("step timeout %v, grace %v: %v", bad[0], bad[1], err)
		}
	}
	opts.StepTimeout, opts.Grace = 0, 0
	rep, err := run(t, &countKind{steps: 1, calls: newCalls()}, spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	recs := rep.Records()
	if len(recs) != 1 || recs[0].Step.TimeoutMS != (10*time.Second).Milliseconds() {
		t.Fatalf("records %+v, want one step with jobtest's default timeout", recs)
	}
}
