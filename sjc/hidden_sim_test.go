package sjc_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/tree"
)

// splitGains is the gain of every split of t, from its counts (the gain
// the clear mode commits for it).
func splitGains(t *tree.Tree) []float64 {
	var out []float64
	var walk func(n *tree.Node)
	walk = func(n *tree.Node) {
		if n.IsLeaf() {
			return
		}
		out = append(out, sjc.Gain(n.Counts, n.Left.Counts, n.Right.Counts))
		walk(n.Left)
		walk(n.Right)
	}
	walk(t.Root)
	return out
}

// simKept runs spec on real nodes (libp2p, Raft) keeping their data dirs,
// and returns the assembled tree and the kept state directory.
func simKept(t *testing.T, ctx context.Context, spec *job.Spec) (*tree.Tree, string) {
	t.Helper()
	raw, err := spec.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(spec.Dir, "spec.yaml")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out, state := filepath.Join(t.TempDir(), "out"), t.TempDir()
	simRun(t, ctx, path, sim.RunOptions{Kinds: job.Registry{"sjc": sjc.Kind{}}, Out: out, State: state})
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
		t.Fatalf("result.json tree: %v", err)
	}
	return &got, state
}

// stateHolding counts the files under dir (every node's Raft log,
// snapshots and kept state) whose bytes contain b.
func stateHolding(t *testing.T, dir string, b []byte) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(data, b) {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSimRealNodesHiddenGains runs the chain on real nodes with and
// without hide_gains: both grow the in-process tree, and the split gains
// the clear run's Raft logs hold are nowhere in the hidden run's nodes'
// data dirs (Raft log, snapshots, kept state).
func TestSimRealNodesHiddenGains(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// A long step timeout: on a machine busy with other work a step that
	// waits on the CPU must not be taken for a silent party.
	spec, want := chainCase(t, map[string]any{"timeout_ms": 120000})
	gains := splitGains(want)
	clearTree, clearState := simKept(t, ctx, spec)
	if d := tree.Diff(want, clearTree); d != "" {
		t.Fatalf("clear real-node tree differs from the in-process tree: %s", d)
	}
	inClear := 0
	for _, g := range gains {
		if stateHolding(t, clearState, binary.BigEndian.AppendUint64(nil, math.Float64bits(g))) > 0 {
			inClear++
		}
	}
	if inClear == 0 {
		t.Fatal("no split gain in the clear run's Raft logs: the search below could not fail")
	}
	spec.Params["hide_gains"] = true
	hiddenTree, hiddenState := simKept(t, ctx, spec)
	if d := tree.Diff(want, hiddenTree); d != "" {
		t.Fatalf("hide_gains real-node tree differs from the in-process tree: %s", d)
	}
	for _, g := range gains {
		for _, b := range gainForms(g) {
			if n := stateHolding(t, hiddenState, b); n > 0 {
				t.Errorf("%d files of the nodes' data dirs hold gain %v (as % x)", n, g, b)
			}
		}
	}
	t.Logf("%d split gains: %d in the clear run's data dirs, none in the hidden run's", len(gains), inClear)
}
