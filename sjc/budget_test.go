package sjc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/tree"
)

// oneRow is the smallest memory budget: one row of a two-label
// partition (a row number and two counts), so that nearly every node's
// partitions are spilled.
const oneRow = 4 + 8*2

// spyKind is sjc.Kind whose sessions note, after every step, the spill
// files in their party's data dir: an event (a step done), not a clock,
// tells when to look.
type spyKind struct {
	sjc.Kind
	mu    sync.Mutex
	seen  map[string]int // most spill files a party had after a step, by party
	bytes int64          // most bytes in one party's spill files after a step
}

func (k *spyKind) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	s, err := k.Kind.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	sd, ok := p.Secrets().(job.ScratchDir)
	if !ok {
		return nil, errors.New("spy: the party's secrets are not in a data dir")
	}
	dir, err := sd.Dir(filepath.Join("jobs", p.JobID()))
	if err != nil {
		return nil, err
	}
	return &spySession{Session: s, k: k, party: p.Self(), dir: filepath.Join(dir, "sjc-spill")}, nil
}

type spySession struct {
	job.Session
	k     *spyKind
	party string
	dir   string
}

func (s *spySession) Step(ctx context.Context, step job.Step) ([]byte, error) {
	out, err := s.Session.Step(ctx, step)
	entries, _ := os.ReadDir(s.dir)
	var n int64
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			n += info.Size()
		}
	}
	s.k.mu.Lock()
	if s.k.seen == nil {
		s.k.seen = map[string]int{}
	}
	s.k.seen[s.party] = max(s.k.seen[s.party], len(entries))
	s.k.bytes = max(s.k.bytes, n)
	s.k.mu.Unlock()
	return out, err
}

// treeJSON is a tree's canonical JSON, for a byte-for-byte comparison.
func treeJSON(t *testing.T, tr *tree.Tree) []byte {
	t.Helper()
	b, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// spillDirsLeft lists the sjc spill directories anywhere under root.
func spillDirsLeft(t *testing.T, root string) []string {
	t.Helper()
	var left []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "sjc-spill" {
			left = append(left, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return left
}

// TestMemoryBudgetSameTree grows the chain case's tree over jobtest's
// parties with no budget, a budget of one row (every partition spilled
// but the smallest) and one that holds some: the trees are the same byte
// for byte, the spill files exist while the tree grows and none is left
// once the model is kept.
func TestMemoryBudgetSameTree(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	spec, want := chainCase(t, nil)
	free, err := runJob(t, ctx, spec, jobtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := tree.Diff(want, free.tree); d != "" {
		t.Fatalf("no budget: %s", d)
	}
	for _, budget := range []int64{oneRow, 2000} {
		root := t.TempDir()
		secrets := map[string]job.Secrets{}
		for _, p := range spec.PartyNames() {
			secrets[p] = job.DirSecrets(filepath.Join(root, p))
		}
		spy := &spyKind{Kind: sjc.Kind{MemoryBudget: budget}}
		run, err := runJobKind(t, ctx, spy, spec, jobtest.Options{Secrets: secrets})
		if err != nil {
			t.Fatalf("budget %d: %v", budget, err)
		}
		if got, w := treeJSON(t, run.tree), treeJSON(t, free.tree); !bytes.Equal(got, w) {
			t.Fatalf("budget %d: the tree differs from the unbudgeted one:\n%s\n%s", budget, got, w)
		}
		for _, p := range spec.PartyNames() {
			if spy.seen[p] == 0 {
				t.Errorf("budget %d: party %s never had a spill file after a step (seen %v)", budget, p, spy.seen)
			}
		}
		if left := spillDirsLeft(t, root); len(left) > 0 {
			t.Errorf("budget %d: spill dirs left after the job: %v", budget, left)
		}
		t.Logf("budget %d: most spill files after a step %v, most bytes %d", budget, spy.seen, spy.bytes)
	}
}

// TestMemoryBudgetPartyRestarted: parties restart between levels and in
// the middle of a split while nearly every partition is spilled; a
// reopened session reads its partitions back from the spill files its
// kept state names, and the tree is the one grown without faults.
func TestMemoryBudgetPartyRestarted(t *testing.T) {
	jobPartyRestarted(t, sjc.Kind{MemoryBudget: oneRow})
}

// TestMemoryBudgetTooSmall: a budget that holds no row of a partition
// fails the job, naming sjc_memory_budget and the party, not the budget; a
// negative one too.
func TestMemoryBudgetTooSmall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spec, _ := chainCase(t, nil)
	for _, budget := range []int64{oneRow - 1, -5} {
		_, err := runJobKind(t, ctx, sjc.Kind{MemoryBudget: budget}, spec, jobtest.Options{})
		if err == nil {
			t.Fatalf("budget %d: the job ran", budget)
		}
		msg := err.Error()
		if !strings.Contains(msg, "sjc_memory_budget") || !strings.Contains(msg, "party p") {
			t.Fatalf("budget %d: the failure does not name sjc_memory_budget and the party: %v", budget, err)
		}
		if strings.Contains(msg, "19") || strings.Contains(msg, "-5") {
			t.Fatalf("budget %d: the failure quotes the budget: %v", budget, err)
		}
	}
}

// TestSimRealNodesMemoryBudget runs the chain case on real nodes (libp2p,
// Raft) through sim.Run, every node with a one-row budget: result.json's
// tree is byte for byte the tree grown in process, every node had spill
// files while it grew, and no node's data dir keeps one after the job.
// A lost step output is re-run after 20 s (simRun).
func TestSimRealNodesMemoryBudget(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	spec, want := chainCase(t, nil)
	raw, err := spec.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(spec.Dir, "spec.yaml")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	spy := &spyKind{Kind: sjc.Kind{MemoryBudget: oneRow}}
	state, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	simRun(t, ctx, path, sim.RunOptions{Kinds: job.Registry{"sjc": spy}, Out: out, State: state})
	b, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var written struct {
		Tree json.RawMessage `json:"tree"`
	}
	if err := json.Unmarshal(b, &written); err != nil {
		t.Fatal(err)
	}
	var got tree.Tree
	if err := got.UnmarshalJSON(written.Tree); err != nil {
		t.Fatal(err)
	}
	if g, w := treeJSON(t, &got), treeJSON(t, want); !bytes.Equal(g, w) {
		t.Fatalf("the tree differs from the in-process one:\n%s\n%s", g, w)
	}
	for _, p := range spec.PartyNames() {
		if spy.seen[p] == 0 {
			t.Errorf("node %s never had a spill file after a step (seen %v)", p, spy.seen)
		}
	}
	if left := spillDirsLeft(t, state); len(left) > 0 {
		t.Errorf("spill dirs left in the nodes' data dirs: %v", left)
	}
}
