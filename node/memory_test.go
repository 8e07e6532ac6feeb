package node_test

import (
	"context"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
)

// A node reports its process's resident memory in /status, and the peak
// seen while a job of each kind ran on it.
func TestStatusReportsMemoryPerKind(t *testing.T) {
	c := startCluster(t, 3, job.Registry{"stepper": &stepper{}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// A step held for a second spans several samples on every party.
	submitAndWait(t, ctx, c.Node("org1"), stepperSpec([]string{"org1", "org2", "org3"}, 1000))
	for _, name := range []string{"org1", "org2", "org3"} {
		m := c.Node(name).Status().Memory
		if m == nil {
			t.Skip("this system does not report a process's memory (/proc/self/status)")
		}
		if m.RSS == 0 || m.PeakRSS < m.RSS {
			t.Errorf("%s: resident %d, peak %d", name, m.RSS, m.PeakRSS)
		}
		if p := m.PeakJobs["stepper"]; p == 0 || p > m.PeakRSS {
			t.Errorf("%s: peak while stepper ran %d, process peak %d", name, p, m.PeakRSS)
		}
	}
}
