package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cohortdm/cohort/sim"
)

// built is the cohort binary the tests run, built once per test binary
// run (each build, even from the cache, links the whole binary again: 2 to
// 20 s, and fifteen tests run it), in a directory TestMain removes.
var built struct {
	once sync.Once
	dir  string // made by TestMain
	bin  string
	err  error
	out  []byte
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cohort-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	built.dir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testVersion is the version the test binary links into cohort, as a
// release build does (TestVersion reads it back).
const testVersion = "v9.8.7-test"

// buildBinary returns the path of the cohort binary, building it on the
// first call. Tests only run it: none may change or remove it. It is linked
// without the symbol table and DWARF (-s -w), which no test reads (panics
// still print their stacks from the runtime's own tables): a quarter less
// linking, about 2 s of CPU of the package's 64 (29 Nov 2026).
func buildBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.bin = filepath.Join(built.dir, "cohort")
		built.out, built.err = exec.Command("go", "build", "-ldflags", "-s -w -X main.version="+testVersion, "-o", built.bin, ".").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("build: %v\n%s", built.err, built.out)
	}
	return built.bin
}

func run(t *testing.T, bin string, args ...string) (string, string, error) {
	t.Helper()
	// A guard against a hung command, not a timing check: a sim or demo
	// took over a minute with the whole suite running at load 45.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Three real node processes: init, consortium file, run, submit a job
// through a follower or leader alike, follow it, read status, result, list,
// the audit ledger, /status and /metrics.
func TestNodesAsProcesses(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	bin := buildBinary(t)
	examples, _ := filepath.Abs("../../examples/sum")
	names := []string{"north", "south", "west"}
	root, httpAddr := startProcesses(t, bin, names, examples)
	p := &procNodes{bin: bin, root: root, httpAddr: httpAddr}
	// Refuses to overwrite an identity.
	if _, _, err := run(t, bin, "node", "init", "--name", "north", "--dir", filepath.Join(root, "north")); err == nil {
		t.Error("second init over an existing identity succeeded")
	}
	id := p.submitSum(t, examples)
	p.checkCLIReads(t, id)
	// The HTTP API wants north's bearer token, which `node token` prints.
	tok, _, err := run(t, bin, "node", "token", "--config", p.config("north"))
	if tok = strings.TrimSpace(tok); err != nil || len(tok) != 64 {
		t.Fatalf("node token: %v %q", err, tok)
	}
	p.checkHTTP(t, id, tok)
	// Every node that sent something has a ledger entry for the job.
	sent := 0
	for _, name := range names {
		out, _, err := run(t, bin, "audit", "--dir", filepath.Join(root, name), "--format", "json")
		if err == nil && strings.Contains(out, id) {
			sent++
		}
	}
	if sent < 2 {
		t.Errorf("only %d nodes have audit entries for the job", sent)
	}
}

// procNodes is the node processes startProcesses ran: the binary, the root
// of their data dirs and the HTTP API's address.
type procNodes struct {
	bin, root, httpAddr string
}

func (p *procNodes) config(name string) string { return filepath.Join(p.root, name, "node.yaml") }

// submitSum submits the sum example through south, retrying while the
// cluster is still electing a leader, checks its result and returns the
// job's id.
func (p *procNodes) submitSum(t *testing.T, examples string) string {
	t.Helper()
	var out, stderr string
	var err error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		out, stderr, err = run(t, p.bin, "job", "submit", filepath.Join(examples, "spec.yaml"), "--config", p.config("south"), "--wait", "--format", "json")
		if err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("submit: %v\n%s", err, stderr)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil || res["sum"] != 79.75 {
		t.Fatalf("result %q (%v), want sum 79.75", out, err)
	}
	return res["job"].(string)
}

// checkCLIReads reads the done job back through --config: its status on
// south, its result on another node, south's node status, and a refusal for
// an unknown job.
func (p *procNodes) checkCLIReads(t *testing.T, id string) {
	t.Helper()
	cfg := p.config("south")
	out, _, err := run(t, p.bin, "job", "status", id, "--config", cfg)
	if err != nil || !strings.Contains(out, "done") {
		t.Errorf("status: %v %q", err, out)
	}
	out, _, err = run(t, p.bin, "job", "result", id, "--config", p.config("west"))
	if err != nil || !strings.Contains(out, "79.75") || !strings.HasSuffix(out, "}\n") {
		t.Errorf("result from another node: %v %q; want it to end in one newline", err, out)
	}
	out, _, err = run(t, p.bin, "node", "status", "--config", cfg)
	if err != nil || !strings.Contains(out, "south") || !strings.Contains(out, "leader:") {
		t.Errorf("node status: %v %q", err, out)
	}
	if _, _, err := run(t, p.bin, "job", "status", "nope", "--config", cfg); err == nil {
		t.Error("status of an unknown job succeeded")
	}
}

// get fetches path from north's HTTP API, with token as the bearer token
// unless it is empty.
func (p *procNodes) get(path, token string) (*http.Response, error) {
	req, err := http.NewRequest("GET", "http://"+p.httpAddr+path, nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return http.DefaultClient.Do(req)
}

// checkHTTP reads the job over north's HTTP API: the result ends in a
// newline; job list --api wants a token, from $COHORT_TOKEN or the data dir
// --config names; /status wants one too, /metrics does not.
func (p *procNodes) checkHTTP(t *testing.T, id, tok string) {
	t.Helper()
	api := "http://" + p.httpAddr
	if resp, err := p.get("/v1/jobs/"+id+"/result", tok); err != nil {
		t.Error(err)
	} else {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.HasSuffix(body, []byte("}\n")) {
			t.Errorf("result over HTTP does not end in a newline: %q", body)
		}
	}
	out, stderr, err := runEnv(t, []string{"COHORT_CONFIG=", "COHORT_TOKEN="}, p.bin, "job", "list", "--api", api)
	if err == nil || !strings.Contains(stderr, "COHORT_TOKEN") {
		t.Errorf("list over HTTP without a token: %v %q %q, want a refusal naming $COHORT_TOKEN", err, out, stderr)
	}
	out, _, err = runEnv(t, []string{"COHORT_TOKEN=" + tok}, p.bin, "job", "list", "--api", api)
	if err != nil || !strings.Contains(out, id) {
		t.Errorf("list over HTTP with $COHORT_TOKEN: %v %q", err, out)
	}
	// With --config on the same machine, --api finds the token in its data dir.
	out, _, err = run(t, p.bin, "job", "list", "--api", api, "--config", p.config("north"))
	if err != nil || !strings.Contains(out, id) {
		t.Errorf("list over HTTP with --config: %v %q", err, out)
	}
	if resp, err := p.get("/status", ""); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/status without a token: %v %v, want 401", err, resp)
	} else {
		resp.Body.Close()
	}
	for _, path := range []string{"/status", "/metrics"} {
		token := map[string]string{"/status": tok}[path] // /metrics needs none
		resp, err := p.get(path, token)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), map[string]string{"/status": "raft_state", "/metrics": "cohort_raft_state"}[path]) {
			t.Errorf("%s: %d %.200s", path, resp.StatusCode, body)
		}
	}
}

func TestSimAndDemo(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	out := t.TempDir()
	stdout, stderr, err := run(t, bin, "sim", "../../examples/sum/spec.yaml", "--out", out, "--format", "json")
	if err != nil {
		t.Fatalf("sim: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "79.75") {
		t.Errorf("sim output %q", stdout)
	}
	if _, err := os.Stat(filepath.Join(out, "audit", "north.jsonl")); err != nil {
		t.Error(err)
	}
	d := runDemo(t)
	if d.err != nil {
		t.Fatalf("demo: %v\n%s\n%s", d.err, d.stdout, d.stderr)
	}
	// The quantile example's median and 90th percentile, as the README shows
	// them: the 31st and 56th of its 62 stays.
	if !strings.Contains(d.stdout, `"value":3}`) || !strings.Contains(d.stdout, `"value":7}`) {
		t.Errorf("demo output %q lacks the quantile example's 3 and 7", d.stdout)
	}
}

// demoRun is the package's one run of `cohort demo`, in this process,
// with $TMPDIR (as the app reads it) a fresh directory of its own, no
// --out and a CPU profile, which TestSimAndDemo, TestDemoFreshDir and
// TestDemoOneCluster all check: the demo runs every example, and running
// it once per test (or once in the binary and once here) was the
// package's largest cost after the builds.
type demoRun struct {
	tmp, prof, stdout, stderr string
	clusters                  [][]string
	err                       error
}

var demo struct {
	once sync.Once
	run  demoRun
}

// runDemo runs the demo on its first call and returns that run.
func runDemo(t *testing.T) demoRun {
	t.Helper()
	demo.once.Do(func() {
		d := &demo.run
		if d.tmp, d.err = os.MkdirTemp(built.dir, "demo-tmp-"); d.err != nil {
			return
		}
		d.prof = filepath.Join(d.tmp, "demo.prof")
		// A guard against a hung demo, not a timing check.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		var stdout, stderr bytes.Buffer
		a := &app{format: "text", stdout: &stdout, stderr: &stderr,
			getenv:         func(k string) string { return map[string]string{"TMPDIR": d.tmp}[k] },
			clusterStarted: func(c *sim.Cluster) { d.clusters = append(d.clusters, c.Names) }}
		cmd := a.root()
		cmd.SetArgs([]string{"demo", "--cpuprofile", d.prof})
		d.err = cmd.ExecuteContext(ctx)
		d.stdout, d.stderr = stdout.String(), stderr.String()
	})
	return demo.run
}

// Bad input exits non-zero with a message naming the cause, and leaves no result.
func TestSimBadInput(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	write("ok.csv", "v\n1\n")
	write("bad.csv", "v\n1\nx\n")
	cases := map[string]string{
		write("kind.yaml", "kind: nope\nparties: [{name: a}]\n"):                                                                                   "unknown job kind",
		write("table.yaml", "kind: sum\nparties: [{name: a, tables: [{name: t, path: missing.csv}]}]\nparams: {column: v}\n"):                      "missing.csv",
		write("csv.yaml", "kind: sum\nparties: [{name: a, tables: [{name: t, path: bad.csv}]}]\nschema: {t: {v: numeric}}\nparams: {column: v}\n"): "bad.csv",
		write("yaml.yaml", "kind: [\n"): "yaml.yaml",
	}
	for spec, want := range cases {
		out := filepath.Join(dir, "out-"+filepath.Base(spec))
		_, stderr, err := run(t, bin, "sim", spec, "--out", out)
		if err == nil || !strings.Contains(stderr, want) {
			t.Errorf("%s: err %v, stderr %q, want it to mention %q", spec, err, stderr, want)
		}
		if _, err := os.Stat(filepath.Join(out, "result.json")); err == nil {
			t.Errorf("%s: result.json written for a failed run", spec)
		}
	}
}

// startProcesses starts one `cohort node run` process per name, each
// initialised with `node init` under a fresh root, its tables in
// tablesDir, the consortium's threshold key dealt with `keys deal`, the
// first with an HTTP listener (its address returned); they stop when the
// test ends.
func startProcesses(t *testing.T, bin string, names []string, tablesDir string) (root, httpAddr string) {
	t.Helper()
	root = t.TempDir()
	type member struct {
		Name   string   `yaml:"name" json:"name"`
		PeerID string   `yaml:"peer_id" json:"peer_id"`
		Addrs  []string `yaml:"addrs" json:"addrs"`
	}
	var members []member
	for i, name := range names {
		addr := fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", freePort(t))
		out, stderr, err := run(t, bin, "node", "init", "--name", name, "--dir", filepath.Join(root, name), "--listen", addr, "--format", "json")
		if err != nil {
			t.Fatalf("init: %v %s", err, stderr)
		}
		var m member
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("init output %q: %v", out, err)
		}
		members = append(members, m)
		// Point each node at the tables; give the first an HTTP listener.
		// The nodes keep no encryption pools: each would fill 256 Paillier
		// randomisers and 64 lattice encryptions of zero at start, seconds
		// of CPU per process that these tests' few encryptions never take
		// from, on the cores every other test of the suite shares (the
		// pools' own tests are in node, sum and secureagg).
		cfgPath := filepath.Join(root, name, "node.yaml")
		b, _ := os.ReadFile(cfgPath)
		b = bytes.Replace(b, []byte("tables_dir: tables"), []byte("tables_dir: "+tablesDir), 1)
		b = append(b, []byte("randomizer_pool: -1\nlattice_pool: -1\n")...)
		if i == 0 {
			httpAddr = fmt.Sprintf("127.0.0.1:%d", freePort(t))
			b = append(b, []byte("http: "+httpAddr+"\n")...)
		}
		os.WriteFile(cfgPath, b, 0o644)
	}
	// The consortium's threshold key, dealt once, each share into its node's data dir.
	if _, stderr, err := run(t, bin, "keys", "deal", "--members", strings.Join(names, ","), "--out", root); err != nil {
		t.Fatalf("keys deal: %v\n%s", err, stderr)
	}
	cons, _ := yaml.Marshal(map[string]any{"members": members})
	for _, name := range names {
		os.WriteFile(filepath.Join(root, name, "consortium.yaml"), cons, 0o644)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // last: each process is first asked to stop
	for _, name := range names {
		cmd := exec.CommandContext(ctx, bin, "node", "run", "--config", filepath.Join(root, name, "node.yaml"))
		cmd.Stderr = io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	}
	return root, httpAddr
}
