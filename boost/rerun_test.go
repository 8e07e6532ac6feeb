package boost_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/internal/testkit"
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
	runLevelRerun(t, chainCase(t, 2, 60), "")
}

// runLevelRerun runs TestLevelRerun's case on c with params.backend
// backend ("": the default; lattice deals a lattice key too).
func runLevelRerun(t *testing.T, c *joinCase, backend string) {
	p := testParams()
	p.Trees, p.Release = 2, true
	params := map[string]any{"trees": p.Trees, "max_depth": p.MaxDepth, "bins": p.Bins, "release": true}
	secrets := dealtSecrets(t, c.spec.PartyNames())
	if backend != "" {
		params["backend"] = backend
		addLatticeKeys(t, secrets)
	}
	spec := writeSpec(t, c, "rerun.yaml", params)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	moved, reruns := false, 0
	rep, err := jobtest.Run(ctx, boost.Kind{}, &spec, jobtest.Options{
		Leader: "alice", Secrets: secrets, StepTimeout: time.Minute,
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
	spec := writeSpec(t, c, "tamper.yaml", map[string]any{"trees": 1, "max_depth": 2, "bins": 8})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	secrets, pk := dealt(t, spec.PartyNames())
	_, err := jobtest.Run(ctx, tampering{pk: pk}, &spec, jobtest.Options{Leader: "bob", Secrets: secrets, StepTimeout: 15 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "refuses to decrypt") {
		t.Fatalf("error %v, want a decryptor's refusal", err)
	}
	t.Log(err)
}

// restartCase is one restart of TestRestart: fault decides, from a sent
// message or a starting step, which party's node restarts.
type restartCase struct {
	name   string
	onSend func(s jobtest.Sent) []string
	onStep func(e jobtest.Event) []string
	// retried: the restart cuts a level short, which must run again (a
	// new attempt, or a retry after a silence).
	retried bool
	// kind is the parties' Kind (nil: boost.Kind{}, auto grouping).
	kind job.Kind
	// backend is params.backend ("": the default); lattice deals the
	// parties a lattice key too.
	backend string
}

// everyPartyAfter restarts every party once the level of the tree and
// depth given is committed: between two levels, with no session holding a
// message of the next one. (A restart at the next level's start would race
// its first messages, which a busy machine lets a party send first.)
func everyPartyAfter(tree, depth int) func(jobtest.Event) []string {
	return func(e jobtest.Event) []string {
		if tr, d, ok := levelOf(e, jobtest.Committed); ok && tr == tree && d == depth {
			return []string{"alice", "bob", "carol"}
		}
		return nil
	}
}

// levelOf decodes the tree and depth of a level step at an event of the
// kind given.
func levelOf(e jobtest.Event, kind jobtest.EventKind) (tree, depth int, ok bool) {
	if e.Kind != kind || e.Step.Phase != "level" {
		return 0, 0, false
	}
	var a struct {
		Tree  int `msgpack:"tree"`
		Depth int `msgpack:"depth"`
	}
	if err := wire.Unmarshal(e.Step.Args, &a); err != nil {
		return 0, 0, false
	}
	return a.Tree, a.Depth, true
}

// TestRestart: a party's node restarts mid-tree (within a level, or
// between two levels; the class holder, a middle table's party that
// re-uses the tree's first-level ciphertexts, the far table's); the level
// runs again (a retry) or goes on, the restarted party resumes from the
// state it kept, and the model is the one an uninterrupted run grows (the
// library's).
func TestRestart(t *testing.T) {
	t.Parallel()
	c := chainCase(t, 2, 60)
	p := testParams()
	p.Trees, p.Release = 2, true
	want, err := boost.Train(c.g, c.data, p)
	if err != nil {
		t.Fatal(err)
	}
	cases := []restartCase{
		{name: "middle party mid-level", retried: true, onSend: func(s jobtest.Sent) []string {
			if s.Message.Type == boost.TypeSplit && s.Message.Round == 1 && s.To == "bob" {
				return []string{"bob"}
			}
			return nil
		}},
		{name: "class holder mid-level, second tree", retried: true, onSend: func(s jobtest.Sent) []string {
			if s.Message.Type == boost.TypeBins && s.From == "carol" && s.Message.Round >= 5 {
				return []string{"alice"}
			}
			return nil
		}},
		{name: "every party between levels", onStep: everyPartyAfter(1, 0)},
		// Grouped tables (grouped.go) resume from the same kept state.
		{name: "grouped, middle party mid-level", retried: true, kind: boost.Kind{GroupRows: boost.GroupOn}, onSend: func(s jobtest.Sent) []string {
			if s.Message.Type == boost.TypeSplit && s.Message.Round == 1 && s.To == "bob" {
				return []string{"bob"}
			}
			return nil
		}},
		{name: "grouped, every party between levels", kind: boost.Kind{GroupRows: boost.GroupOn}, onStep: everyPartyAfter(1, 0)},
		// Every party reads its tables row by row, then, restarted, as
		// binned groups: the kept state fits either read.
		{name: "row by row, then grouped after a restart", kind: &switching{opened: map[string]int{}}, onStep: everyPartyAfter(1, 0)},
	}
	for _, rc := range cases {
		t.Run(rc.name, func(t *testing.T) {
			t.Parallel()
			runRestart(t, c, p, rc, modelJSON(t, *want))
		})
	}
}

func runRestart(t *testing.T, c *joinCase, p boost.Params, rc restartCase, want string) {
	params := map[string]any{"trees": p.Trees, "max_depth": p.MaxDepth, "bins": p.Bins, "release": true}
	secrets := dealtSecrets(t, c.spec.PartyNames())
	if rc.backend != "" {
		params["backend"] = rc.backend
		addLatticeKeys(t, secrets)
	}
	spec := writeSpec(t, c, "restart.yaml", params)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var mu sync.Mutex
	restarted, reruns := false, 0
	fault := func(names []string) jobtest.Fault {
		mu.Lock()
		defer mu.Unlock()
		if restarted || len(names) == 0 {
			return jobtest.Fault{}
		}
		restarted = true
		return jobtest.Fault{Restart: names}
	}
	kind := rc.kind
	if kind == nil {
		kind = boost.Kind{}
	}
	rep, err := jobtest.Run(ctx, kind, &spec, jobtest.Options{
		Leader: "alice", Secrets: secrets, StepTimeout: time.Minute,
		OnSend: func(s jobtest.Sent) jobtest.Fault {
			if rc.onSend == nil {
				return jobtest.Fault{}
			}
			return fault(rc.onSend(s))
		},
		OnStep: func(e jobtest.Event) jobtest.Fault {
			var d struct {
				Winners []int `msgpack:"winners"`
				Closed  bool  `msgpack:"closed"`
				Retry   bool  `msgpack:"retry"`
			}
			rerun := e.Kind == jobtest.Starting && e.Step.Phase == "level" && e.Step.Attempt > 1
			retry := e.Kind == jobtest.Committed && e.Step.Phase == "level" && wire.Unmarshal(e.Record.Decision, &d) == nil && d.Retry
			if rerun || retry {
				mu.Lock()
				reruns++
				mu.Unlock()
			}
			if rc.onStep == nil {
				return jobtest.Fault{}
			}
			return fault(rc.onStep(e))
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !restarted || rc.retried != (reruns > 0) {
		t.Fatalf("restarted %v, levels re-run %d, want a re-run %v", restarted, reruns, rc.retried)
	}
	if got := modelOf(t, rep.Result); got != want {
		t.Fatalf("after a restart the model differs from an uninterrupted run's\n got: %s\nwant: %s", got, want)
	}
}

// TestSilentRetry: one gradient message of a level is lost, so the party
// below waits in vain and the class holder waits for its bin sums until
// the step timeout; every failure is a missing message, so the level is
// committed as a retry and runs again, and the model is the library's.
func TestSilentRetry(t *testing.T) {
	t.Parallel()
	c := chainCase(t, 2, 60)
	p := testParams()
	p.Trees, p.Release = 1, true
	spec := writeSpec(t, c, "silent.yaml", map[string]any{"trees": p.Trees, "max_depth": p.MaxDepth, "bins": p.Bins, "release": true})
	silentRetry(t, c, p, spec, dealtSecrets(t, spec.PartyNames()), func(to string, m *wire.Message) bool {
		return m.Type == boost.TypeGradients && to == "carol"
	})
}

// silentRetry runs spec in jobtest with bob's first message that lost
// picks dropped in the second level step, and checks that a level was
// committed as a retry and that the model is the library's. The retry
// waits out the step timeout, so the test starts with a short one and
// lengthens it only if the verdict is wrong (testkit.RetryLonger): a
// loaded machine may time a slow level out too, which is a retry as well.
func silentRetry(t *testing.T, c *joinCase, p boost.Params, spec job.Spec, secrets map[string]job.Secrets, lost func(to string, m *wire.Message) bool) {
	t.Helper()
	want, err := boost.Train(c.g, c.data, p)
	if err != nil {
		t.Fatal(err)
	}
	testkit.RetryLonger(t, 3*time.Second, func(timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		var mu sync.Mutex
		dropped, retries := false, 0
		spec := spec
		rep, err := jobtest.Run(ctx, boost.Kind{}, &spec, jobtest.Options{
			Leader: "alice", Secrets: secrets, StepTimeout: timeout,
			OnStep: func(e jobtest.Event) jobtest.Fault {
				mu.Lock()
				defer mu.Unlock()
				if e.Kind == jobtest.Starting && e.Step.Phase == "level" && e.Step.Round == 1 && !dropped {
					e.Net.Intercept("bob", func(to string, m *wire.Message) *wire.Message {
						mu.Lock()
						defer mu.Unlock()
						if !dropped && lost(to, m) {
							dropped = true
							return nil
						}
						return m
					})
				}
				var d struct {
					Winners []int `msgpack:"winners"`
					Closed  bool  `msgpack:"closed"`
					Retry   bool  `msgpack:"retry"`
				}
				if e.Kind == jobtest.Committed && e.Step.Phase == "level" && wire.Unmarshal(e.Record.Decision, &d) == nil && d.Retry {
					retries++
				}
				return jobtest.Fault{}
			},
		})
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if !dropped || retries == 0 {
			return fmt.Errorf("dropped %v, retries %d: no level ran again", dropped, retries)
		}
		if got, w := modelOf(t, rep.Result), modelJSON(t, *want); got != w {
			return fmt.Errorf("after a retry the model differs from the library's\n got: %s\nwant: %s", got, w)
		}
		return nil
	})
}

// writeSpec writes c's tables into a fresh directory and returns c's spec
// over them, named source, with params.
func writeSpec(t *testing.T, c *joinCase, source string, params map[string]any) job.Spec {
	t.Helper()
	dir := t.TempDir()
	for name, text := range c.csv {
		if err := os.WriteFile(filepath.Join(dir, name+".csv"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec := *c.spec
	spec.Dir, spec.Source, spec.Params = dir, source, params
	return spec
}

// switching is boost.Kind whose parties read their tables row by row the
// first time they open a session and as binned groups after that (a
// node restarted with boost_group_rows changed).
type switching struct {
	boost.Kind
	mu     sync.Mutex
	opened map[string]int
}

func (k *switching) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	k.mu.Lock()
	n := k.opened[p.Self()]
	k.opened[p.Self()]++
	k.mu.Unlock()
	mode := boost.GroupOff
	if n > 0 {
		mode = boost.GroupOn
	}
	return boost.Kind{GroupRows: mode}.Open(ctx, p)
}
