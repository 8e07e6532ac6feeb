package integrate

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/psi"

	"github.com/cohortdm/cohort/job/jobtest"
)

// The PSI hub (north, the first party) restarted in the middle of the
// alignment, once it has sent a spoke its blinded ids: its new session runs
// psi.Align again with a fresh secret while the spokes finish the old run.
// Depending on timing the new run waits for a spoke's blinded set its old
// session consumed (the step times out, here after 3 s) or completes with a
// silently wrong, empty intersection; either way the job fails naming the
// alignment, or (should the runtime re-run the step) publishes the right
// table, never a wrong one.
func TestHubRestartMidAlign(t *testing.T) {
	t.Parallel()
	j := faultJob(t)
	var once sync.Once
	fired := false
	rep, err := j.run(t, jobtest.Options{StepTimeout: 3 * time.Second, OnSend: func(s jobtest.Sent) jobtest.Fault {
		f := jobtest.Fault{}
		if s.Message.Type == psi.TypeBlinded && s.From == "north" {
			once.Do(func() { f, fired = jobtest.Fault{Restart: []string{"north"}}, true })
		}
		return f
	}})
	if !fired {
		t.Fatal("the fault did not fire")
	}
	if err != nil {
		if !strings.Contains(err.Error(), "align") {
			t.Fatalf("the job failed without naming the alignment: %v", err)
		}
		t.Logf("job failed: %v", err)
		return
	}
	want, _ := j.central(t)
	sameTable(t, published(t, rep), want)
	t.Logf("attempts: %d log entries", len(rep.Log))
}
