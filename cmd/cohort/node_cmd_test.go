package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// node init refuses names and listen addresses that would make a node.yaml
// fail later, before writing anything.
func TestNodeInitValidates(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--name", "my org"}, "my org"},
		{[]string{"--name", "../up"}, "letters, digits"},
		{[]string{"--name", "north", "--listen", "127.0.0.1:7404"}, "/ip4/127.0.0.1/tcp/7404"},
		{[]string{"--name", "north", "--listen", "/ip4/0.0.0.0/tcp/7400,[::1]:7400"}, "/ip6/::1/tcp/7400"},
	} {
		dir := filepath.Join(t.TempDir(), "n")
		_, stderr, err := run(t, bin, append([]string{"node", "init", "--dir", dir}, tc.args...)...)
		if err == nil || !strings.Contains(stderr, tc.want) {
			t.Errorf("init %v: err %v, stderr %q, want it to mention %q", tc.args, err, stderr, tc.want)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("init %v: created %s", tc.args, dir)
		}
	}
}

// node run without a threshold key share starts, but says that jobs that
// decrypt will fail; node status then reaches it through COHORT_CONFIG.
func TestNodeRunWarnsWithoutKey(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a process")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	addr := fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", freePort(t))
	out, stderr, err := run(t, bin, "node", "init", "--name", "north", "--dir", dir, "--listen", addr, "--format", "json")
	if err != nil {
		t.Fatalf("init: %v %s", err, stderr)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	cons, _ := yaml.Marshal(map[string]any{"members": []any{m}})
	os.WriteFile(filepath.Join(dir, "consortium.yaml"), cons, 0o644)
	env := []string{"COHORT_CONFIG=" + filepath.Join(dir, "node.yaml")}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "node", "run")
	cmd.Env = append(os.Environ(), env...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	var seen []string
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if strings.HasPrefix(sc.Text(), "node north running") {
			break
		}
	}
	go func() { // keep draining, so the node never blocks on a full pipe
		for sc.Scan() {
		}
	}()
	all := strings.Join(seen, "\n")
	if !strings.Contains(all, "warning: no threshold key") || !strings.Contains(all, "keys deal") {
		t.Errorf("node run without a key share:\n%s", all)
	}
	var st string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		st, _, err = runEnv(t, env, bin, "node", "status", "--format", "json")
		if err == nil {
			break
		}
	}
	var status map[string]any
	if err != nil || json.Unmarshal([]byte(st), &status) != nil || status["name"] != "north" {
		t.Errorf("node status: %v %q", err, st)
	}
}
