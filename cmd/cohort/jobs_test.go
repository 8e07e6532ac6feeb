package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/cohortdm/cohort/api"
)

// fakeNode serves canned answers for the job API and /status.
func fakeNode(t *testing.T, routes map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := routes[r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error": "no such path"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Unknown subcommands of every command group fail and say so; cobra's
// default printed the group's help and exited 0.
func TestUnknownSubcommandFails(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	for _, args := range [][]string{{"job", "abort", "x"}, {"node", "stat"}, {"keys", "rotate"}, {"completion", "tcsh"}, {"nope"}} {
		_, stderr, err := run(t, bin, args...)
		if err == nil || !strings.Contains(stderr, "unknown command") {
			t.Errorf("cohort %s: err %v, stderr %q; want a non-zero exit naming the unknown command", strings.Join(args, " "), err, stderr)
		}
	}
	_, stderr, _ := run(t, bin, "job", "abort", "x")
	if !strings.Contains(stderr, `"abort"`) || !strings.Contains(stderr, "submit") {
		t.Errorf("job abort: %q; want it to name abort and list the job commands", stderr)
	}
	// A bare group still shows its help.
	if out, _, err := run(t, bin, "job"); err != nil || !strings.Contains(out, "submit") {
		t.Errorf("cohort job: %v %q", err, out)
	}
}

// The job commands find their node through --config, else $COHORT_CONFIG,
// and say what to do when there is no node.yaml; --api takes HOST:PORT.
func TestJobCommandsFindTheNode(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	cwd := t.TempDir()
	cmd := func(env []string, args ...string) (string, string, error) {
		t.Helper()
		c := exec.Command(bin, args...)
		c.Dir = cwd
		c.Env = append(os.Environ(), env...)
		var stdout, stderr bytes.Buffer
		c.Stdout, c.Stderr = &stdout, &stderr
		err := c.Run()
		return stdout.String(), stderr.String(), err
	}
	_, stderr, err := cmd(nil, "job", "list")
	if err == nil || !strings.Contains(stderr, "--config") || !strings.Contains(stderr, "--api") || !strings.Contains(stderr, "COHORT_CONFIG") {
		t.Errorf("job list without node.yaml: %v %q; want a hint at --config, COHORT_CONFIG and --api", err, stderr)
	}
	_, stderr, _ = cmd([]string{"COHORT_CONFIG=/nowhere/north/node.yaml"}, "job", "list")
	if !strings.Contains(stderr, "/nowhere/north/node.yaml") {
		t.Errorf("COHORT_CONFIG not used: %q", stderr)
	}
	_, stderr, _ = cmd([]string{"COHORT_CONFIG=/nowhere/north/node.yaml"}, "job", "list", "--config", "/elsewhere/node.yaml")
	if !strings.Contains(stderr, "/elsewhere/node.yaml") {
		t.Errorf("--config does not win over COHORT_CONFIG: %q", stderr)
	}
	_, stderr, _ = cmd([]string{"COHORT_CONFIG=/nowhere/north/node.yaml"}, "node", "run")
	if !strings.Contains(stderr, "/nowhere/north/node.yaml") {
		t.Errorf("node run ignores COHORT_CONFIG: %q", stderr)
	}

	srv := fakeNode(t, map[string]string{
		"/v1/jobs": `[{"id": "20261123-093930-0f070261", "kind": "sum", "status": "done", "submitted": "2026-11-23T09:39:30Z"}]`,
		"/status":  `{"name": "north", "peer_id": "12D3KooWtest", "addrs": ["/ip4/127.0.0.1/tcp/7400"], "raft_state": "Leader", "leader": "north", "members": ["north", "south"], "jobs": 1, "running": 0}`,
	})
	hostPort := strings.TrimPrefix(srv.URL, "http://")
	for _, api := range []string{hostPort, srv.URL, srv.URL + "/"} {
		out, stderr, err := cmd(nil, "job", "list", "--api", api)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if err != nil || len(lines) != 2 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[0], "STATUS") || !strings.HasPrefix(lines[1], "20261123-093930-0f070261") {
			t.Errorf("job list --api %s: %v %q %q; want a header row and one job", api, err, out, stderr)
		}
	}
	out, stderr, err := cmd(nil, "node", "status", "--api", hostPort)
	if err != nil || !strings.Contains(out, "Leader") || !strings.Contains(out, "north, south") {
		t.Errorf("node status --api: %v %q %q", err, out, stderr)
	}
}

// Outside a terminal, --wait prints a progress line when the job's state
// changes, not every poll.
func TestFollowPrintsOnChange(t *testing.T) {
	var mu sync.Mutex
	polls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/v1/jobs/j1":
			polls++
			status, steps := "running", `[{"phase": "aggregate", "started": "2026-11-23T09:39:30Z"}]`
			if polls > 3 {
				steps = `[{"phase": "aggregate", "started": "2026-11-23T09:39:30Z", "finished": "2026-11-23T09:39:31Z"}]`
			}
			if polls > 6 {
				status = "done"
			}
			fmt.Fprintf(w, `{"id": "j1", "kind": "sum", "status": %q, "steps": %s}`, status, steps)
		case "/v1/jobs/j1/result":
			fmt.Fprint(w, `{"sum": 1}`)
		}
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	a := &app{format: "text", stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	c, err := a.newClient("", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.follow(context.Background(), c, "j1"); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(stderr.String(), "\n"); lines != 3 {
		t.Errorf("%d progress lines over 7 polls of 3 states, want 3:\n%s", lines, stderr.String())
	}
	if stdout.String() != "{\"sum\": 1}\n" {
		t.Errorf("result %q", stdout.String())
	}
}

// job status lists failed parties as words, not as a Go slice.
func TestPrintStatusFailed(t *testing.T) {
	var js api.JobStatus
	if err := json.Unmarshal([]byte(`{"id": "j1", "kind": "sum", "status": "running", "steps": [
		{"phase": "aggregate", "round": 0, "attempt": 1, "started": "2026-11-23T09:39:30Z", "finished": "2026-11-23T09:39:32Z", "failed": ["north", "west"]}]}`), &js); err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	a := &app{format: "text", stdout: &stdout, stderr: &stdout}
	a.printStatus(&js)
	if out := stdout.String(); !strings.Contains(out, "failed: north, west") || strings.Contains(out, "[") {
		t.Errorf("status output:\n%s", out)
	}
}
