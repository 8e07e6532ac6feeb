package boost_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/internal/testkit/keytest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/wire"
)

// dealtSecrets deals the parties a threshold key into fresh data dirs.
func dealtSecrets(t *testing.T, parties []string) map[string]job.Secrets {
	t.Helper()
	s, _ := dealt(t, parties)
	return s
}

// dealt is dealtSecrets with the consortium's public key.
func dealt(t *testing.T, parties []string) (map[string]job.Secrets, *paillier.PublicKey) {
	t.Helper()
	pk, keys := keytest.Paillier(t, keyBits, parties)
	out := map[string]job.Secrets{}
	for _, p := range parties {
		dir := filepath.Join(t.TempDir(), p)
		if err := keyring.SavePaillier(dir, keys[p]); err != nil {
			t.Fatal(err)
		}
		out[p] = job.DirSecrets(dir)
	}
	return out, &pk.PublicKey
}

// TestLevelRerun: the leader changes while a level's split choices are
// being sent, after some tables may have split; the new leader re-runs the
// level as a new attempt, every party goes back to its state at the
// level's start, and the model is still the library's.
func TestLevelRerun(t *testing.T) {
	t.Parallel()
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

// tampering is boost.Kind whose class holder swaps the last two
// ciphertexts of every decryption request it sends: it asks values that
// are not the bin sums the parties sent it.
type tampering struct {
	boost.Kind
	pk *paillier.PublicKey
}

func (k tampering) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	return k.Kind.Open(ctx, &swapper{Participant: p, pk: k.pk})
}

type swapper struct {
	job.Participant
	pk *paillier.PublicKey
}

func (s *swapper) Send(ctx context.Context, to string, m *wire.Message, d wire.Disclosure) error {
	if m.Type == "secureagg/share-request" && s.Self() == "alice" {
		var req struct {
			C       []byte `msgpack:"c"`
			Release bool   `msgpack:"release"`
		}
		if err := wire.Unmarshal(m.Body, &req); err == nil && len(req.C) > 0 {
			if cts, err := s.pk.UnmarshalCiphertexts(req.C); err == nil && len(cts) > 1 {
				n := len(cts)
				cts[n-1], cts[n-2] = cts[n-2], cts[n-1]
				req.C, _ = s.pk.MarshalCiphertexts(cts)
				cp := *m
				cp.Body, _ = wire.Marshal(&req)
				m = &cp
			}
		}
	}
	return s.Participant.Send(ctx, to, m, d)
}

// TestVettedDecryption: a class holder that asks the decryptors for
// anything but the bin sums the parties sent it gets no share; the job
// fails naming the refusal.
func TestVettedDecryption(t *testing.T) {
	t.Parallel()
	c := starCase(t, 1, 60)
	dir := t.TempDir()
	for name, text := range c.csv {
		if err := os.WriteFile(filepath.Join(dir, name+".csv"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec := *c.spec
	spec.Dir, spec.Source = dir, "tamper.yaml"
	spec.Params = map[string]any{"trees": 1, "max_depth": 2, "bins": 8}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	secrets, pk := dealt(t, spec.PartyNames())
	_, err := jobtest.Run(ctx, tampering{pk: pk}, &spec, jobtest.Options{Leader: "bob", Secrets: secrets, StepTimeout: 15 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "refuses to decrypt") {
		t.Fatalf("error %v, want a decryptor's refusal", err)
	}
	t.Log(err)
}

// TestRestartFails: a party whose node restarts mid-tree has lost its
// signatures (they are not in the log): the job fails naming it, rather
// than growing a different tree.
func TestRestartFails(t *testing.T) {
	t.Parallel()
	c := chainCase(t, 2, 60)
	dir := t.TempDir()
	for name, text := range c.csv {
		if err := os.WriteFile(filepath.Join(dir, name+".csv"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec := *c.spec
	spec.Dir, spec.Source = dir, "restart.yaml"
	spec.Params = map[string]any{"trees": 2, "max_depth": 3, "bins": 8}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	restarted := false
	_, err := jobtest.Run(ctx, boost.Kind{}, &spec, jobtest.Options{
		Leader: "alice", Secrets: dealtSecrets(t, spec.PartyNames()), StepTimeout: 15 * time.Second,
		OnSend: func(s jobtest.Sent) jobtest.Fault {
			if !restarted && s.Message.Type == boost.TypeSplit && s.Message.Round == 1 {
				restarted = true
				return jobtest.Fault{Restart: []string{"bob"}}
			}
			return jobtest.Fault{}
		},
	})
	if !restarted {
		t.Fatal("no party was restarted")
	}
	if err == nil || !strings.Contains(err.Error(), "party bob: "+boost.ErrResume.Error()) {
		t.Fatalf("error %v, want the job to fail naming bob's restart", err)
	}
	t.Log(err)
}
