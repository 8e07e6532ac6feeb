package boost_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/wire"
)

// addLatticeKeys installs a dealt lattice key of the parties into their
// secrets (beside the Paillier key dealtSecrets put there).
func addLatticeKeys(t *testing.T, secrets map[string]job.Secrets) {
	t.Helper()
	keys, err := keyring.DealLattice(slices.Sorted(maps.Keys(secrets)), 0)
	if err != nil {
		t.Fatal(err)
	}
	for p, s := range secrets {
		if err := keyring.InstallLattice(s, keys[p], keyring.LatticeInfo(keys[p], keyring.MadeDealer, "")); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLevelRerunLattice: TestLevelRerun on the lattice path, over the
// three-party star (the re-run level goes back to the class holder's
// kept sibling sums of the level before).
func TestLevelRerunLattice(t *testing.T) {
	t.Parallel()
	runLevelRerun(t, starCase(t, 1, 60), boost.BackendLattice)
}

// TestRestartLattice: TestRestart on the lattice path, over the
// three-party star: the class holder restarted within a level of the
// second tree (as a table's bin sums reach it), a table's party within a
// level, every party between two levels; the level runs again or goes
// on, and the model is the library's.
func TestRestartLattice(t *testing.T) {
	t.Parallel()
	c := starCase(t, 1, 60)
	p := testParams()
	p.Trees, p.Release = 2, true
	want, err := boost.Train(c.g, c.data, p)
	if err != nil {
		t.Fatal(err)
	}
	cases := []restartCase{
		{name: "class holder mid-level, second tree", retried: true, backend: boost.BackendLattice, onSend: func(s jobtest.Sent) []string {
			if s.Message.Type == boost.TypeLatticeBins && s.From == "carol" && s.To == "alice" && s.Message.Round >= 5 {
				return []string{"alice"}
			}
			return nil
		}},
		{name: "a table's party mid-level", retried: true, backend: boost.BackendLattice, onSend: func(s jobtest.Sent) []string {
			if s.Message.Type == boost.TypeSplit && s.Message.Round == 1 && s.To == "bob" {
				return []string{"bob"}
			}
			return nil
		}},
		{name: "every party between levels", backend: boost.BackendLattice, onStep: everyPartyAfter(1, 0)},
	}
	for _, rc := range cases {
		t.Run(rc.name, func(t *testing.T) {
			t.Parallel()
			runRestart(t, c, p, rc, modelJSON(t, *want))
		})
	}
}

// TestSilentRetryLattice: one decryption share of a level is lost; the
// class holder waits for it until the step timeout, the level is
// committed as a retry and runs again, and the model is the library's.
func TestSilentRetryLattice(t *testing.T) {
	t.Parallel()
	c := starCase(t, 1, 60)
	p := testParams()
	p.Trees, p.Release = 1, true
	secrets := dealtSecrets(t, c.spec.PartyNames())
	addLatticeKeys(t, secrets)
	spec := writeSpec(t, c, "silent.yaml", map[string]any{"trees": p.Trees, "max_depth": p.MaxDepth, "bins": p.Bins, "release": true,
		"backend": boost.BackendLattice})
	silentRetry(t, c, p, spec, secrets, func(_ string, m *wire.Message) bool { return m.Type == boost.TypeLatticeShare })
}

// TestWrongShareLattice: a decryptor whose lattice decryption shares are
// wrong (one coefficient of its last share changed on the way) is
// detected by the verified plan's quorums, which then disagree: the job
// fails saying so, instead of training on wrong bin sums.
func TestWrongShareLattice(t *testing.T) {
	t.Parallel()
	c := starCase(t, 1, 60)
	p := testParams()
	p.Trees = 1
	secrets := dealtSecrets(t, c.spec.PartyNames())
	addLatticeKeys(t, secrets)
	spec := writeSpec(t, c, "wrong.yaml", map[string]any{"trees": p.Trees, "max_depth": p.MaxDepth, "bins": p.Bins,
		"backend": boost.BackendLattice})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var mu sync.Mutex
	changed := 0
	_, err := jobtest.Run(ctx, boost.Kind{}, &spec, jobtest.Options{
		Leader: "alice", Secrets: secrets, StepTimeout: time.Minute,
		OnStep: func(e jobtest.Event) jobtest.Fault {
			if e.Kind == jobtest.Starting && e.Step.Phase == "level" && e.Step.Round == 0 {
				e.Net.Intercept("bob", func(to string, m *wire.Message) *wire.Message {
					if m.Type != boost.TypeLatticeShare {
						return m
					}
					mu.Lock()
					changed++
					mu.Unlock()
					cp := *m
					cp.Body = slices.Clone(m.Body)
					cp.Body[len(cp.Body)-8] ^= 1 // the last share's last coefficient, little-endian
					return &cp
				})
			}
			return jobtest.Fault{}
		},
	})
	t.Log(err)
	if changed == 0 {
		t.Fatal("no share of bob's was changed: the test checks nothing")
	}
	if err == nil || !strings.Contains(err.Error(), "decryption share was wrong") {
		t.Fatalf("a wrong share: %v", err)
	}
}
