package console

import (
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/api"
)

// A job whose leader changed mid-way: the timeline marks the change, notes
// the retried attempt and the failed party, takes the coordinator of a
// finished step from the ledger when the log no longer has it, and keeps
// every bar inside the chart.
func TestTimelineMarksLeaderChanges(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	js := &Job{JobStatus: &api.JobStatus{JobRecord: &api.JobRecord{ID: "j", Kind: "sum", Status: api.StatusRunning, Submitted: t0, Steps: []*api.StepRecord{
		{Phase: "admit", Round: 0, Attempt: 1, Started: at(0.1), Finished: at(0.3), Done: true}, // compacted: coordinator from the ledger
		{Phase: "aggregate", Round: 0, Attempt: 1, Started: at(0.4), Finished: at(2), Done: true, Failed: []string{"org2"}},
		{Phase: "aggregate", Round: 1, Attempt: 2, Started: at(3)},
	}}}, Coordinators: []string{"", "org1", "org3"}}
	members := []string{"org1", "org2", "org3"}
	c, rows := timeline(js, map[stepRef]string{{"admit", 0}: "org1"}, nil, members, at(4))
	if len(c.Rows) != 3 || len(rows) != 3 {
		t.Fatalf("%d bars, %d rows", len(c.Rows), len(rows))
	}
	if len(c.Marks) != 1 || c.Marks[0].Label != "→ org3" || c.Marks[0].X != c.Rows[2].Bar.X {
		t.Fatalf("leader changes %+v", c.Marks)
	}
	if rows[0].Coordinator != "org1" || !strings.Contains(c.Rows[1].Note, "failed: org2") || !strings.Contains(c.Rows[2].Note, "attempt 2") {
		t.Fatalf("rows %+v\nbars %+v", rows, c.Rows)
	}
	if !strings.Contains(c.Rows[1].Bar.Class, "failed") || !strings.Contains(c.Rows[2].Bar.Class, "open") || c.Rows[0].Bar.Class != "p0" {
		t.Fatalf("classes %q %q %q", c.Rows[0].Bar.Class, c.Rows[1].Bar.Class, c.Rows[2].Bar.Class)
	}
	for _, r := range c.Rows {
		if r.Bar.X < c.X1 || r.Bar.X+r.Bar.W > c.X2+0.001 {
			t.Fatalf("bar %+v outside %v..%v", r.Bar, c.X1, c.X2)
		}
	}
	if len(c.Legend) != 2 {
		t.Fatalf("legend %+v", c.Legend)
	}
}

// A finished step the ledger says nothing of takes the leader this node
// saw when it started; one that started before any change seen stays
// unknown.
func TestTimelineNamesTheLeaderSeen(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	js := &Job{JobStatus: &api.JobStatus{JobRecord: &api.JobRecord{ID: "j", Kind: "sum", Status: api.StatusDone, Submitted: t0, Finished: at(9), Steps: []*api.StepRecord{
		{Phase: "admit", Round: 0, Attempt: 1, Started: at(0.5), Finished: at(1), Done: true},
		{Phase: "admit", Round: 1, Attempt: 1, Started: at(2), Finished: at(3), Done: true},
		{Phase: "aggregate", Round: 0, Attempt: 1, Started: at(5), Finished: at(6), Done: true},
		{Phase: "aggregate", Round: 1, Attempt: 1, Started: at(7), Finished: at(8), Done: true},
	}}}}
	events := []Event{
		{Time: at(1.5), What: "leader is now org2", LeaderChange: true, Leader: "org2"},
		{Time: at(4), What: "heartbeats to org1 failing"},
		{Time: at(4.5), What: "leader is now none", LeaderChange: true},
		{Time: at(4.8), What: "leader is now org3", LeaderChange: true, Leader: "org3"},
		{Time: at(6.5), What: "leader is now none", LeaderChange: true},
	}
	c, rows := timeline(js, nil, events, []string{"org1", "org2", "org3"}, at(10))
	var got []string
	for _, r := range rows {
		got = append(got, r.Coordinator)
	}
	if strings.Join(got, ",") != ",org2,org3," {
		t.Fatalf("coordinators %q", got)
	}
	if len(c.Marks) != 1 || c.Marks[0].Label != "→ org3" {
		t.Fatalf("leader changes %+v", c.Marks)
	}
	if c.Rows[0].Bar.Class != "p-unknown" || c.Rows[3].Bar.Class != "p-unknown" {
		t.Fatalf("classes %q %q", c.Rows[0].Bar.Class, c.Rows[3].Bar.Class)
	}
}
