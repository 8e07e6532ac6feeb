package runner

import (
	"errors"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/job"
)

func TestCheckReplayNamesTheField(t *testing.T) {
	base := job.Step{Job: "j", Phase: "p", Round: 2, Attempt: 1, Parties: []string{"a", "b"}, Coordinator: "a", Args: []byte{1, 2}, TimeoutMS: 5}
	// The runtime's fields may differ: a new leader, a new attempt.
	same := base
	same.Attempt, same.Coordinator, same.Job = 3, "b", ""
	if err := CheckReplay(base, same); err != nil {
		t.Fatalf("runtime fields compared: %v", err)
	}
	for field, change := range map[string]func(*job.Step){
		"phase":      func(s *job.Step) { s.Phase = "q" },
		"round":      func(s *job.Step) { s.Round = 3 },
		"parties":    func(s *job.Step) { s.Parties = []string{"a"} },
		"args":       func(s *job.Step) { s.Args = []byte{1, 3} },
		"timeout_ms": func(s *job.Step) { s.TimeoutMS = 6 },
	} {
		d := base
		d.Parties = append([]string(nil), base.Parties...)
		change(&d)
		err := CheckReplay(base, d)
		if !errors.Is(err, ErrReplay) || !strings.Contains(err.Error(), "field "+field) {
			t.Errorf("%s changed: %v", field, err)
		}
	}
}
