package integrate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
)

func faultJob(t *testing.T) *testJob {
	reqs := []anonymize.Requirement{{QID: []string{"noa", "soa", "wea"}, K: 5}, {QID: []string{"nob", "web"}, K: 4}}
	return randomJob(t, 5, 200, reqs, "")
}

// A leader killed at every kind of step boundary, and in the middle of the
// alignment and of a split, gives the same table.
func TestLeaderChange(t *testing.T) {
	t.Parallel()
	j := faultJob(t)
	cases := map[string]func(ev jobtest.Event) jobtest.Fault{
		"mid-align": func(ev jobtest.Event) jobtest.Fault {
			if ev.Kind == jobtest.Starting && ev.Step.Phase == phaseAlign && ev.Step.Attempt == 1 {
				return jobtest.Fault{Leader: "west"}
			}
			return jobtest.Fault{}
		},
		"after-score-2": func(ev jobtest.Event) jobtest.Fault {
			if ev.Kind == jobtest.Committed && ev.Step.Phase == phaseScore && ev.Step.Round == 2 && ev.Leader == "north" {
				return jobtest.Fault{Leader: "south"}
			}
			return jobtest.Fault{}
		},
		"mid-split-3": func(ev jobtest.Event) jobtest.Fault {
			if ev.Kind == jobtest.Starting && ev.Step.Phase == phaseSplit && ev.Step.Round == 3 && ev.Step.Attempt == 1 {
				return jobtest.Fault{Leader: "west"}
			}
			return jobtest.Fault{}
		},
		"before-publish": func(ev jobtest.Event) jobtest.Fault {
			if ev.Kind == jobtest.Starting && ev.Step.Phase == phasePublish && ev.Step.Attempt == 1 {
				return jobtest.Fault{Leader: "south"}
			}
			return jobtest.Fault{}
		},
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			rep := checkAgainstCentral(t, j, jobtest.Options{OnStep: f})
			if len(rep.Leaders) < 2 {
				t.Fatalf("leaders %v: the fault did not fire", rep.Leaders)
			}
		})
	}
}

// Parties restarted between rounds and in the middle of a split (the
// winner itself) rebuild from their table, the alignment they kept and the
// log, and the table is the same.
func TestRestart(t *testing.T) {
	t.Parallel()
	j := faultJob(t)
	fired := 0
	rep := checkAgainstCentral(t, j, jobtest.Options{OnStep: func(ev jobtest.Event) jobtest.Fault {
		switch {
		case ev.Kind == jobtest.Committed && ev.Step.Phase == phaseAlign:
			fired++
			return jobtest.Fault{Restart: []string{"north", "south", "west"}}
		case ev.Kind == jobtest.Committed && ev.Step.Phase == phaseSplit && ev.Step.Round == 1:
			fired++
			return jobtest.Fault{Restart: []string{"south"}}
		case ev.Kind == jobtest.Starting && ev.Step.Phase == phaseSplit && ev.Step.Round == 2 && ev.Step.Attempt == 1:
			fired++
			return jobtest.Fault{Restart: ev.Step.Parties}
		}
		return jobtest.Fault{}
	}})
	if fired != 3 {
		t.Fatalf("%d faults fired, want 3 (rounds %v)", fired, rep.Result["rounds"])
	}
}

// A party restarted whose kept alignment is gone cannot rebuild and says so.
func TestRestartWithoutAlignment(t *testing.T) {
	t.Parallel()
	j := faultJob(t)
	westDir := t.TempDir()
	secrets := map[string]job.Secrets{}
	for _, p := range j.parties {
		secrets[p.name] = jobtest.DirSecrets(t.TempDir())
	}
	secrets["west"] = jobtest.DirSecrets(westDir)
	_, err := j.run(t, jobtest.Options{Secrets: secrets, OnStep: func(ev jobtest.Event) jobtest.Fault {
		if ev.Kind == jobtest.Committed && ev.Step.Phase == phaseScore && ev.Step.Round == 0 {
			if err := os.RemoveAll(filepath.Join(westDir, "integrate")); err != nil {
				t.Error(err)
			}
			return jobtest.Fault{Restart: []string{"west"}}
		}
		return jobtest.Fault{}
	}})
	if err == nil || !strings.Contains(err.Error(), "alignment this node kept") {
		t.Fatalf("err = %v", err)
	}
}

// A consortium member that is not a party can coordinate: it sees the
// scores and commits the same table.
func TestNonPartyCoordinator(t *testing.T) {
	t.Parallel()
	j := faultJob(t)
	rep := checkAgainstCentral(t, j, jobtest.Options{Members: []string{"auditor"}, Leader: "auditor"})
	for _, s := range rep.Sent {
		if s.From == "auditor" {
			t.Errorf("the coordinator sent %s to %s", s.Message.Type, s.To)
		}
	}
}
