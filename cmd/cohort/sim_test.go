package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/examples"
)

// runEnv is run with extra environment variables.
func runEnv(t *testing.T, env []string, bin string, args ...string) (string, string, error) {
	t.Helper()
	// A guard against a hung command, as run's: the demo took more than
	// 60 s at load 20 (28 Nov 2026) and was killed here.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// Text output shows objects in a result (excluded parties, noise) as
// indented lines, never as Go's map[...].
func TestPrintResultObjects(t *testing.T) {
	var stdout bytes.Buffer
	a := &app{format: "text", stdout: &stdout, stderr: &stdout}
	res := map[string]any{
		"job": "j1", "kind": "sum", "sum": 12.5, "parties": []any{"north", "south", "west"},
		"included": []any{"south", "west"},
		"excluded": map[string]any{"north": "did not answer in time"},
		"noise":    map[string]any{"mechanism": "laplace", "epsilon": 1.0},
		"timing":   map[string]any{"aggregate": 0.5}, "bytes": map[string]any{"south": 100.0},
	}
	if err := a.printResult(res, "/tmp/o"); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	for _, want := range []string{"excluded:\n  north:", "did not answer in time", "included:  south, west", "  mechanism: laplace", "sum:       12.5"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "map[") || strings.Contains(out, "[south west]") {
		t.Errorf("Go syntax in text output:\n%s", out)
	}
}

// Bad specs fail with messages that say what is wrong.
func TestSimSpecMessages(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	_, stderr, err := run(t, bin, "sim", write("nosuch.yaml", "kind: nosuch\nparties: [{name: a}]\n"), "--out", filepath.Join(dir, "o1"))
	if err == nil || !strings.Contains(stderr, `unknown job kind "nosuch"`) || !strings.Contains(stderr, "runs "+strings.Join(kinds().Names(), ", ")) {
		t.Errorf("kind nosuch: %v %q; want the kinds this binary runs", err, stderr)
	}
	_, stderr, err = run(t, bin, "sim", write("empty.yaml", ""), "--out", filepath.Join(dir, "o2"))
	if err == nil || !strings.Contains(stderr, "empty") || strings.Contains(stderr, "EOF") {
		t.Errorf("empty spec: %v %q", err, stderr)
	}
	_, stderr, err = run(t, bin, "sim", write("t.yaml", "kind: sum\nparties: [{name: a, tables: [{name: t, path: data/wset.csv}]}]\nparams: {column: v}\n"), "--out", filepath.Join(dir, "o3"))
	if err == nil || strings.Count(stderr, "wset.csv") != 1 {
		t.Errorf("missing table: %v %q; want the path named once", err, stderr)
	}
	_, stderr, err = run(t, bin, "sim", write("nosuch2.yaml", "kind: nosuch\nparties: [{name: a}]\n"), "--out", filepath.Join(dir, "o4"), "--raft-timeout", "5ms")
	if err == nil || !strings.Contains(stderr, "--raft-timeout 5ms") {
		t.Errorf("--raft-timeout 5ms: %v %q; want it refused, naming the flag", err, stderr)
	}
}

// sim --out never mixes runs: a non-empty directory is refused without
// --force, replaced whole with it, and kept as it was when a run fails.
func TestSimOutDir(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	spec := "../../examples/sum/spec.yaml"
	out := filepath.Join(t.TempDir(), "o")
	if _, stderr, err := run(t, bin, "sim", spec, "--out", out); err != nil {
		t.Fatalf("first run: %v\n%s", err, stderr)
	}
	first, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := run(t, bin, "sim", spec, "--out", out); err == nil || !strings.Contains(stderr, "not empty") || !strings.Contains(stderr, "--force") {
		t.Errorf("second run into a non-empty --out: %v %q", err, stderr)
	}
	// A run that fails (here: out of time) leaves the earlier output whole.
	if _, _, err := run(t, bin, "sim", spec, "--out", out, "--force", "--timeout", "1ms"); err == nil {
		t.Fatal("a 1ms run succeeded")
	}
	if b, err := os.ReadFile(filepath.Join(out, "result.json")); err != nil || !bytes.Equal(b, first) {
		t.Errorf("a failed --force run changed the earlier result: %v", err)
	}
	os.WriteFile(filepath.Join(out, "stale.txt"), []byte("old"), 0o644)
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	if _, stderr, err := run(t, bin, "sim", spec, "--out", out, "--force", "--cpuprofile", prof); err != nil {
		t.Fatalf("--force run: %v\n%s", err, stderr)
	}
	// --cpuprofile (hidden) wrote a profile: gzip, as pprof writes it.
	if b, err := os.ReadFile(prof); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("--cpuprofile: %d bytes, %v", len(b), err)
	}
	if _, err := os.Stat(filepath.Join(out, "stale.txt")); err == nil {
		t.Error("--force kept a file of the earlier output")
	}
	// One job per ledger: the earlier run's entries are gone.
	b, err := os.ReadFile(filepath.Join(out, "audit", "north.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	jobs := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e struct{ Job string }
		json.Unmarshal([]byte(line), &e)
		jobs[e.Job] = true
	}
	if len(jobs) != 1 {
		t.Errorf("north's ledger holds %d jobs, want 1", len(jobs))
	}
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 1 {
		t.Errorf("left beside --out: %v", entries)
	}
}

// demo writes into a fresh directory of its own (not one fixed path under
// the shared temp dir) and says where.
func TestDemoFreshDir(t *testing.T) {
	t.Parallel()
	d := runDemo(t) // TMPDIR=d.tmp, no --out
	tmp, out := d.tmp, d.stdout
	if d.err != nil {
		t.Fatalf("demo: %v\n%s\n%s", d.err, out, d.stderr)
	}
	first, _, _ := strings.Cut(out, "\n")
	dir, ok := strings.CutPrefix(first, "writing results under ")
	if !ok || filepath.Dir(dir) != tmp || !strings.HasPrefix(filepath.Base(dir), "cohort-demo-out-") || filepath.Base(dir) == "cohort-demo-out-" {
		t.Fatalf("demo does not name a fresh directory of its own: %q", first)
	}
	if _, err := os.Stat(filepath.Join(dir, "sum", "result.json")); err != nil {
		t.Error(err)
	}
	if !strings.Contains(out, "results under "+dir) {
		t.Errorf("demo does not say where the results are at the end:\n%s", out)
	}
}

// The demo runs every example on one cluster, whose members are the
// parties of them all, and prints each example's output in turn: its
// result, its phase timings and where its result is.
func TestDemoOneCluster(t *testing.T) {
	t.Parallel()
	d := runDemo(t)
	if d.err != nil {
		t.Fatalf("demo: %v\n%s\n%s", d.err, d.stdout, d.stderr)
	}
	first, _, _ := strings.Cut(d.stdout, "\n")
	out := strings.TrimPrefix(first, "writing results under ")
	// --cpuprofile (hidden) wrote a profile: gzip, as pprof writes it.
	if b, err := os.ReadFile(d.prof); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("--cpuprofile: %d bytes, %v", len(b), err)
	}
	if want := []string{"east", "north", "south", "west"}; len(d.clusters) != 1 || !slices.Equal(d.clusters[0], want) {
		t.Fatalf("the demo started clusters %v, want one of %v", d.clusters, want)
	}
	names, err := examples.Names()
	if err != nil {
		t.Fatal(err)
	}
	rest := d.stdout
	for _, name := range names {
		// Each example's block, in order: its header, its phase timings
		// and bytes, the path of its result.
		for _, want := range []string{"== " + name + "\n", "phase", "seconds", "party", "bytes sent", "written:   " + filepath.Join(out, name, "result.json")} {
			i := strings.Index(rest, want)
			if i < 0 {
				t.Fatalf("example %s: output lacks %q in order:\n%s", name, want, d.stdout)
			}
			rest = rest[i+len(want):]
		}
		if _, err := os.Stat(filepath.Join(out, name, "audit")); err != nil {
			t.Error(err)
		}
	}
}
