package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/node"
)

// A step done with failed parties prints who failed and, under it, each
// one's report as the log holds it: why the step runs again.
func TestDescribeFailedStep(t *testing.T) {
	e := node.Event{Op: "done", Job: "j", Phase: "level", Round: 2, Failed: []string{"guest", "host"},
		Failures: map[string]string{"guest": "boost: no message from host within 10m0s"}}
	got := describeEvent(3*time.Second, e)
	want := "[  3.00s] job j: level round 2 done (failed: guest, host)\n    guest: boost: no message from host within 10m0s"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if strings.Contains(got, "host:") {
		t.Fatal("a party without a report text printed one")
	}
}
