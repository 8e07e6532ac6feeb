package boost_test

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/keyring"
)

// dealtSecrets deals the parties a threshold key into fresh data dirs.
func dealtSecrets(t *testing.T, parties []string) map[string]job.Secrets {
	t.Helper()
	_, keys, err := keyring.Deal(rand.Reader, keyBits, parties, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]job.Secrets{}
	for _, p := range parties {
		dir := filepath.Join(t.TempDir(), p)
		if err := keyring.SavePaillier(dir, keys[p]); err != nil {
			t.Fatal(err)
		}
		out[p] = job.DirSecrets(dir)
	}
	return out
}

// TestLevelRerun: the leader changes while a level's split choices are
// being sent, after some tables may have split; the new leader re-runs the
// level as a new attempt, every party goes back to its state at the
// level's start, and the model is still the library's.
func TestLevelRerun(t *testing.T) {
	c := chainCase(t, 2, 60)
	p := testParams()
	p.Trees, p.Release = 2, true
	dir := t.TempDir()
	for name, text := range c.csv {
		if err := os.WriteFile(filepath.Join(dir, name+".csv"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec := *c.spec
	spec.Dir, spec.Source = dir, "rerun.yaml"
	spec.Params = map[string]any{"trees": p.Trees, "max_depth": p.MaxDepth, "bins": p.Bins, "release": true}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	moved, reruns := false, 0
	rep, err := jobtest.Run(ctx, boost.Kind{}, &spec, jobtest.Options{
		Leader: "alice", Secrets: dealtSecrets(t, spec.PartyNames()), StepTimeout: time.Minute,
		OnSend: func(s jobtest.Sent) jobtest.Fault {
			if !moved && s.Message.Type == boost.TypeSplit && s.Message.Round == 1 {
				moved = true
				return jobtest.Fault{Leader: "bob"}
			}
			return jobtest.Fault{}
		},
		OnStep: func(e jobtest.Event) jobtest.Fault {
			if e.Kind == jobtest.Starting && e.Step.Phase == "level" && e.Step.Attempt > 1 {
				reruns++
			}
			return jobtest.Fault{}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !moved || reruns == 0 {
		t.Fatalf("no level was re-run (leader moved %v, re-runs %d)", moved, reruns)
	}
	want, err := boost.Train(c.g, c.data, p)
	if err != nil {
		t.Fatal(err)
	}
	if got, w := modelOf(t, rep.Result), modelJSON(t, *want); got != w {
		t.Fatalf("after a re-run the model differs from the library's\n got: %s\nwant: %s", got, w)
	}
}
