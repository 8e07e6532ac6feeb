package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cohortdm/cohort/node"
)

// cohort consortium add / show / remove / reload against real node
// processes: a fourth node started with --join is added through one node
// and shows up in every node's consortium file, then is removed.
func TestConsortiumCommands(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	bin := buildBinary(t)
	root := t.TempDir()
	names := []string{"org1", "org2", "org3", "org4"}
	members := initConsortium(t, bin, root, names)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, name := range names {
		args := []string{"node", "run", "--config", filepath.Join(root, name, "node.yaml")}
		if name == "org4" {
			args = append(args, "--join")
		}
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Stderr = io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	}
	c := &consortiumNodes{bin: bin, root: root, names: names, members: members}
	c.eventually(t, "a leader", func() bool {
		out, _, err := run(t, bin, "node", "status", "--config", c.cfg("org1"), "--format", "json")
		return err == nil && !strings.Contains(out, `"leader": ""`)
	})
	c.checkAdd(t)
	c.checkRemove(t)
}

// initConsortium inits a node per name, each listening on a free port,
// keeps each one's member record as root/NAME.json for consortium add, and
// writes the consortium files: the first three list only themselves, the
// last (the one to join) lists everyone, itself included.
func initConsortium(t *testing.T, bin, root string, names []string) []node.Member {
	t.Helper()
	var members []node.Member
	for _, name := range names {
		addr := fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", freePort(t))
		out, stderr, err := run(t, bin, "node", "init", "--name", name, "--dir", filepath.Join(root, name), "--listen", addr, "--format", "json")
		if err != nil {
			t.Fatalf("init: %v %s", err, stderr)
		}
		os.WriteFile(filepath.Join(root, name+".json"), []byte(out), 0o644)
		var m node.Member
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		members = append(members, m)
	}
	three, _ := yaml.Marshal(map[string]any{"members": members[:3]})
	four, _ := yaml.Marshal(map[string]any{"members": members})
	for i, name := range names {
		cons := three
		if i == 3 {
			cons = four // the new member lists everyone, itself included
		}
		os.WriteFile(filepath.Join(root, name, "consortium.yaml"), cons, 0o644)
	}
	return members
}

// consortiumNodes is the four running node processes of
// TestConsortiumCommands, the last of which joins.
type consortiumNodes struct {
	bin, root string
	names     []string
	members   []node.Member
}

func (c *consortiumNodes) cfg(name string) string { return filepath.Join(c.root, name, "node.yaml") }

// show runs consortium show on name's node.
func (c *consortiumNodes) show(t *testing.T, name string) node.ConsortiumStatus {
	t.Helper()
	out, stderr, err := run(t, c.bin, "consortium", "show", "--config", c.cfg(name), "--format", "json")
	if err != nil {
		t.Fatalf("consortium show on %s: %v %s", name, err, stderr)
	}
	var st node.ConsortiumStatus
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// eventually polls cond for up to 30 s and fails the test naming what it
// waited for.
func (c *consortiumNodes) eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// memberNames is the sorted names of st's members.
func memberNames(st node.ConsortiumStatus) []string {
	var out []string
	for _, m := range st.Members {
		out = append(out, m.Name)
	}
	slices.Sort(out)
	return out
}

// checkAdd adds org4 through org2: the add says a new threshold key is
// needed, org4 comes to see all four as members and voters, and the first
// three nodes' consortium files gain it; reload then succeeds.
func (c *consortiumNodes) checkAdd(t *testing.T) {
	t.Helper()
	names := c.names
	var out, stderr string
	var err error
	c.eventually(t, "the add to be accepted", func() bool {
		out, stderr, err = run(t, c.bin, "consortium", "add", filepath.Join(c.root, "org4.json"), "--config", c.cfg("org2"))
		return err == nil
	})
	if !strings.Contains(stderr, "deal a new threshold key") || !strings.Contains(out, "org4") {
		t.Errorf("add printed %q %q", out, stderr)
	}
	c.eventually(t, "org4 to apply the log", func() bool {
		st := c.show(t, "org4")
		return slices.Equal(memberNames(st), names) && slices.Equal(st.Voters, names)
	})
	for _, name := range names[:3] {
		b, _ := os.ReadFile(filepath.Join(c.root, name, "consortium.yaml"))
		if !strings.Contains(string(b), c.members[3].PeerID) {
			t.Errorf("%s's consortium file lacks org4 after the add:\n%s", name, b)
		}
	}
	if _, _, err := run(t, c.bin, "consortium", "reload", "--config", c.cfg("org1")); err != nil {
		t.Errorf("reload: %v", err)
	}
}

// checkRemove removes org4 through org3: it leaves Raft and org1's
// consortium file; removing a name that is not a member is refused.
func (c *consortiumNodes) checkRemove(t *testing.T) {
	t.Helper()
	if out, _, err := run(t, c.bin, "consortium", "remove", "org4", "--config", c.cfg("org3")); err != nil || strings.Contains(out, "org4") {
		t.Fatalf("remove: %v %q", err, out)
	}
	c.eventually(t, "org4 to leave Raft", func() bool { return slices.Equal(c.show(t, "org1").Voters, c.names[:3]) })
	b, _ := os.ReadFile(filepath.Join(c.root, "org1", "consortium.yaml"))
	if strings.Contains(string(b), c.members[3].PeerID) {
		t.Errorf("org1's consortium file still lists org4:\n%s", b)
	}
	if _, stderr, err := run(t, c.bin, "consortium", "remove", "nobody", "--config", c.cfg("org1")); err == nil || !strings.Contains(stderr, "not a member") {
		t.Errorf("removing a non-member: %v %s", err, stderr)
	}
}
