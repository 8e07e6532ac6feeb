package runner

import "testing"

// A failed job's error names every party that failed, with its causes,
// even those that failed a step before the one whose error ends the job.
func TestFailedJobErrorNamesEveryFailedParty(t *testing.T) {
	failures := map[string]string{
		"north":  "aggregate/1: refused by north's policy",
		"west":   "admit/0: cannot take part: no space left on device",
		"west-2": "aggregate/0: unreachable",
	}
	got := withOtherCauses("party north: refused by north's policy; party west-2: unreachable", failures)
	want := "party north: refused by north's policy; party west-2: unreachable; earlier, west: admit/0: cannot take part: no space left on device"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if got := withOtherCauses("party north: x", map[string]string{"north": "y"}); got != "party north: x" {
		t.Fatalf("an error naming every failed party changed: %q", got)
	}
}
