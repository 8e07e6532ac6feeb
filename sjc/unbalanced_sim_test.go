package sjc_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/psi"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/tree"
	"github.com/cohortdm/cohort/wire"
)

// TestSimUnbalanced runs a join whose target table T1 holds 40 join
// values and T2 about 4,300 on real nodes (libp2p, Raft; sim.Run): with psi
// forced to ECDH, and twice with the default (auto), which picks psi's
// unbalanced mode for this edge: T2's owner serves from a key and
// encodings it keeps in its data dir, T1's owner fetches the filter and
// keeps it in its own. The second auto run starts the same nodes again
// on the same data dirs: the key is not rotated (the set did not change)
// and the filter is not fetched again. Every run grows the tree grown in
// process, so the intersection is ECDH's. A last run names T2 otherwise
// in the spec, over the same file: the key is kept by the data, not by a
// spec's name, so it is neither rotated nor a filter fetched again.
func TestSimUnbalanced(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	path, want := unbalancedCase(t)
	state := t.TempDir()
	var files []os.FileInfo
	for i, mode := range []string{"ecdh", "", "", "renamed"} {
		opts := sim.RunOptions{Kinds: job.Registry{"sjc": sjc.Kind{}}, Out: filepath.Join(t.TempDir(), "out")}
		p := path
		switch mode {
		case "ecdh":
			p = withParam(t, path, "psi", mode)
		case "renamed":
			p, opts.State = renamedTable(t, path, "T2", "Tz"), state
		default:
			opts.State = state
		}
		simRun(t, ctx, p, opts)
		w := want
		if mode == "renamed" {
			w = renamedTree(t, want, "T2", "Tz") // the tree names tables as the spec does
		}
		if d := tree.Diff(w, resultTree(t, opts.Out)); d != "" {
			t.Fatalf("run %d (psi %q): the tree differs from the in-process tree: %s", i, mode, d)
		}
		if mode != "ecdh" {
			got := []os.FileInfo{stateFile(t, state, "p2", "psi/unbalanced/*/key"), stateFile(t, state, "p1", "psi/unbalanced-cache/*/*/meta")}
			if files != nil && (!os.SameFile(files[0], got[0]) || !os.SameFile(files[1], got[1])) {
				t.Errorf("run %d (%q): on the same sets the key was rotated or the filter fetched again", i, mode)
			}
			files = got
		}
	}
}

// unbalancedCase writes a two-table chain whose T1 keeps 40 of T2's
// 5,000 join groups (about 4,300 of them with rows), with its spec, and returns the spec's path and the
// tree grown in process.
func unbalancedCase(t *testing.T) (string, *tree.Tree) {
	t.Helper()
	ch, err := sjc.GenChain(sjc.ChainParams{Tables: 2, N: 10000, V: 5000, X: 1, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, tb := range ch.Train {
		writeTable(t, filepath.Join(dir, name+".csv"), tb)
	}
	// T1 keeps the rows of its first 40 join values (k1 is its first
	// column).
	lines := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(dir, "T1.csv"))), "\n")
	keep, vals := lines[:1], map[string]bool{}
	for _, l := range lines[1:] {
		k, _, _ := strings.Cut(l, ",")
		if len(vals) < 40 {
			vals[k] = true
		}
		if vals[k] {
			keep = append(keep, l)
		}
	}
	t1 := strings.Join(keep, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "T1.csv"), []byte(t1), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := *ch.Spec
	spec.Dir, spec.Source, spec.Test = dir, "unbalanced.yaml", nil
	raw, err := spec.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := sjc.NewGraph(&spec)
	if err != nil {
		t.Fatal(err)
	}
	p, err := sjc.ParseParams(&spec)
	if err != nil {
		t.Fatal(err)
	}
	tables := loadTables(t, &spec, map[string]string{"T1": t1, "T2": readFile(t, filepath.Join(dir, "T2.csv"))})
	want, err := sjc.Build(g, tables, p)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := want.Size(); n < 3 {
		t.Fatalf("the tree has %d nodes: the case is too small to tell intersections apart", n)
	}
	return path, want
}

// renamedTable writes a copy of the spec at path in which table from is
// called to, over the same file.
func renamedTable(t *testing.T, path, from, to string) string {
	t.Helper()
	spec, err := job.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range spec.Parties {
		for j := range spec.Parties[i].Tables {
			if ts := &spec.Parties[i].Tables[j]; ts.Name == from {
				ts.Name = to
			}
		}
	}
	spec.Schema[to] = spec.Schema[from]
	delete(spec.Schema, from)
	for i, j := range spec.Join {
		spec.Join[i] = strings.ReplaceAll(j, from+".", to+".")
	}
	raw, err := spec.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(filepath.Dir(path), "renamed.yaml")
	if err := os.WriteFile(out, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// renamedTree is tr with table from's splits naming table to.
func renamedTree(t *testing.T, tr *tree.Tree, from, to string) *tree.Tree {
	t.Helper()
	raw, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var got tree.Tree
	if err := got.UnmarshalJSON([]byte(strings.ReplaceAll(string(raw), `"table":"`+from+`"`, `"table":"`+to+`"`))); err != nil {
		t.Fatal(err)
	}
	return &got
}

// withParam writes a copy of the spec at path with params[key] = value.
func withParam(t *testing.T, path, key string, value any) string {
	t.Helper()
	spec, err := job.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	spec.Params = map[string]any{key: value}
	raw, err := spec.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(filepath.Dir(path), key+"-"+value.(string)+".yaml")
	if err := os.WriteFile(out, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// resultTree reads the tree of a run's result.json.
func resultTree(t *testing.T, out string) *tree.Tree {
	t.Helper()
	var written struct {
		Tree json.RawMessage `json:"tree"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(out, "result.json"))), &written); err != nil {
		t.Fatal(err)
	}
	var got tree.Tree
	if err := got.UnmarshalJSON(written.Tree); err != nil {
		t.Fatal(err)
	}
	return &got
}

// stateFile returns the one file matching pattern in node name's data dir
// under state, which must have mode 0600.
func stateFile(t *testing.T, state, name, pattern string) os.FileInfo {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(state, "*", name, pattern))
	if err == nil && len(m) == 0 {
		m, err = filepath.Glob(filepath.Join(state, name, pattern))
	}
	if err != nil || len(m) != 1 {
		t.Fatalf("node %s: files %s: %v %v", name, pattern, m, err)
	}
	st, err := os.Stat(m[0])
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("node %s: %s: %v %v", name, pattern, st, err)
	}
	return st
}

// TestJobLeakageUnbalanced runs the unbalanced case as a job (jobtest):
// the edge's PSI runs psi's unbalanced mode, every message of it carries
// the psi-blinded disclosure and every other message one of the kind's
// profile, and the server's long-term key, kept in its data dir, is in no
// message and no log entry.
func TestJobLeakageUnbalanced(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	path, want := unbalancedCase(t)
	spec, err := job.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{"p1": t.TempDir(), "p2": t.TempDir()}
	secrets := map[string]job.Secrets{}
	for p, d := range dirs {
		secrets[p] = job.DirSecrets(d)
	}
	// The server's first exchange prepares its set (a hash to the group
	// and a scalar multiplication per value) inside the step: a loaded
	// machine took more than jobtest's 10 s step for it, which this
	// test, whose every step ends on messages, never needs to wait out.
	run, err := runJob(t, ctx, spec, jobtest.Options{Secrets: secrets, StepTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if d := tree.Diff(want, run.tree); d != "" {
		t.Fatalf("the tree differs from the in-process tree: %s", d)
	}
	seen := map[string]int{}
	for _, s := range run.rep.Sent {
		if strings.HasPrefix(s.Message.Type, "psi/") {
			seen[s.Message.Type]++
			if s.Disclosure != wire.DisclosePSIBlinded {
				t.Errorf("%s from %s discloses %s", s.Message.Type, s.From, s.Disclosure)
			}
		}
	}
	for _, typ := range []string{psi.TypeSize, psi.TypeUpOffer, psi.TypeUpFetch, psi.TypeUpFilter, psi.TypeUpQuery, psi.TypeUpEval, psi.TypeUpMatch} {
		if seen[typ] == 0 {
			t.Errorf("no %s message: the unbalanced mode did not run (%v)", typ, seen)
		}
	}
	allowed := []wire.Disclosure{wire.DiscloseClassSummary, wire.DiscloseSplitSummary, wire.DiscloseScore,
		wire.DisclosePSIBlinded, wire.DisclosePublicResult, wire.DiscloseControl}
	if out := run.rep.SentOutside(allowed...); len(out) > 0 {
		t.Errorf("%d messages outside the profile, first %s (%s)", len(out), out[0].Message.Type, out[0].Disclosure)
	}
	m, err := filepath.Glob(filepath.Join(dirs["p2"], "psi", "unbalanced", "*", "key"))
	if err != nil || len(m) != 1 {
		t.Fatalf("the server's key files: %v %v", m, err)
	}
	var file map[string]any // psi's key file, read without psi's type
	if err := wire.Unmarshal([]byte(readFile(t, m[0])), &file); err != nil {
		t.Fatalf("the server's key file: %v", err)
	}
	k, _ := file["k"].([]byte)
	if len(k) != 32 {
		t.Fatalf("the server's key file holds a key of %d bytes", len(k))
	}
	if ss := run.rep.SentHolding(k); len(ss) > 0 {
		t.Errorf("a message holds the server's key: %s from %s", ss[0].Message.Type, ss[0].From)
	}
	if es := run.rep.LogHolding(k); len(es) > 0 {
		t.Errorf("the log holds the server's key (%s)", es[0].Op)
	}
}
