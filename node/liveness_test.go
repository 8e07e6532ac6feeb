package node_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
)

// Environment of the helper process TestHelperNodeProcess.
const (
	helperDirEnv  = "COHORT_TEST_HELPER_NODE_DIR"
	helperNameEnv = "COHORT_TEST_HELPER_NODE_NAME"
)

// TestHelperNodeProcess is not a test: it is the node that
// TestKilledPartyNoticed runs in a process of its own, so that it can be
// killed with SIGKILL (no QUIC CONNECTION_CLOSE, no FIN). It prints
// "addrs JSON", reads the consortium file's path from stdin, starts, prints
// "started", and runs until stdin closes or it is killed.
func TestHelperNodeProcess(t *testing.T) {
	dir, name := os.Getenv(helperDirEnv), os.Getenv(helperNameEnv)
	if dir == "" {
		t.Skip("helper process for TestKilledPartyNoticed")
	}
	cfg := &node.Config{Name: name, DataDir: dir, Listen: []string{"/ip4/127.0.0.1/udp/0/quic-v1"},
		// Slow to start elections, so that an in-process node leads.
		Timing: node.Timing{HeartbeatMS: 3000, ElectionMS: 3000}}
	n, err := node.New(node.Options{Config: cfg, Kinds: job.Registry{"stepper": &stepper{}}, Policy: policy.Permissive()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	b, _ := json.Marshal(n.Addrs())
	fmt.Printf("addrs %s\n", b)
	in := bufio.NewScanner(os.Stdin)
	if !in.Scan() {
		t.Fatal("no consortium path on stdin")
	}
	cons, err := node.LoadConsortium(strings.TrimSpace(in.Text()))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(cons); err != nil {
		t.Fatal(err)
	}
	fmt.Println("started")
	for in.Scan() {
	}
}

// helperNode is a node running in a child process.
type helperNode struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Scanner
	stderr *testkit.LockedBuffer
	addrs  []string
}

func startHelperNode(t *testing.T, name, dir string) *helperNode {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperNodeProcess$")
	cmd.Env = append(os.Environ(), helperDirEnv+"="+dir, helperNameEnv+"="+name)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	h := &helperNode{cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout), stderr: &testkit.LockedBuffer{}}
	cmd.Stderr = h.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("helper %s stderr:\n%s", name, h.stderr)
		}
	})
	line := h.expect(t, "addrs ")
	if err := json.Unmarshal([]byte(line), &h.addrs); err != nil {
		t.Fatal(err)
	}
	return h
}

// expect returns the rest of the helper's next stdout line that starts
// with prefix.
func (h *helperNode) expect(t *testing.T, prefix string) string {
	t.Helper()
	for h.lines.Scan() {
		if rest, ok := strings.CutPrefix(h.lines.Text(), prefix); ok {
			return rest
		}
	}
	t.Fatalf("helper process ended before printing %q (err %v)", prefix, h.lines.Err())
	return ""
}

// A party whose process is killed while its QUIC connection is open is
// noticed within seconds, although nothing closed the connection: liveness
// is an actual round trip with a deadline, not the transport's view, and the
// connection itself is dropped after the QUIC idle timeout, not 30 s. The
// coordinator is a party too, as in the report (34 s before); in the second
// case the killed party is the coordinator, and the new one resumes the
// step and notices that the old one is gone. The attempt must end on the
// liveness check (the party unreachable), not on the step's timeout; how
// soon (about 2 s) is logged, a figure rather than an assertion, so the
// two cases run beside each other and beside the package's other parallel
// tests: each waits on events only (a leader, step b running, the job's
// end, the connections gone), on its own nodes and child process.
func TestKilledPartyNoticed(t *testing.T) {
	t.Parallel()
	t.Run("party", func(t *testing.T) { t.Parallel(); testKilledParty(t, "org1") })
	t.Run("leader", func(t *testing.T) { t.Parallel(); testKilledParty(t, "org3") })
}

// testKilledParty runs org1 and org2 in process and org3 in a child process,
// makes leader the coordinator, and kills org3 while all three run a step.
func testKilledParty(t *testing.T, leader string) {
	base := t.TempDir()
	kinds := job.Registry{"stepper": &stepper{}}
	quic := []string{"/ip4/127.0.0.1/udp/0/quic-v1"}
	cons := &node.Consortium{}
	var inproc []*node.Node
	for _, name := range []string{"org1", "org2"} {
		dir := filepath.Join(base, name)
		if _, _, err := node.Init(name, dir, nil); err != nil {
			t.Fatal(err)
		}
		n, err := node.New(node.Options{Config: &node.Config{Name: name, DataDir: dir, Listen: quic}, Kinds: kinds, Policy: policy.Permissive()})
		if err != nil {
			t.Fatal(err)
		}
		defer n.Close()
		inproc = append(inproc, n)
		cons.Members = append(cons.Members, node.Member{Name: name, PeerID: n.PeerID().String(), Addrs: n.Addrs()})
	}
	dir3 := filepath.Join(base, "org3")
	if _, _, err := node.Init("org3", dir3, nil); err != nil {
		t.Fatal(err)
	}
	child := startHelperNode(t, "org3", dir3)
	org3 := memberOf(t, "org3", dir3, child.addrs)
	cons.Members = append(cons.Members, org3)
	consPath := filepath.Join(base, "consortium.yaml")
	if err := cons.Save(consPath); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintln(child.stdin, consPath); err != nil {
		t.Fatal(err)
	}
	for _, n := range inproc {
		if err := n.Start(cons); err != nil {
			t.Fatal(err)
		}
	}
	child.expect(t, "started")

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	org1, org2 := inproc[0], inproc[1]
	target, _ := cons.Member(leader)
	waitFor(t, ctx, func() bool { // org1 or org2 leads first: org3's election timeout is longer
		if org1.Leader() == leader && org2.Leader() == leader {
			return true
		}
		for _, n := range inproc {
			if n.IsLeader() && n.Name() != leader {
				_ = n.Raft().LeadershipTransferToServer(raft.ServerID(leader), raft.ServerAddress(target.PeerID)).Error()
			}
		}
		return false
	})

	id, err := org2.Submit(ctx, stepperSpec([]string{"org1", "org2", "org3"}, 1500))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, func() bool { // step b is running, on every party (after admit and a)
		js, ok := org1.Job(id)
		return ok && len(js.Steps) == 3
	})
	if err := child.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	rec, err := org1.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("job ended %v after org3 (coordinator: %v) was killed: %s %s", time.Since(killed), leader == "org3", rec.Status, rec.Error)
	if rec.Status != node.StatusFailed || !strings.Contains(rec.Error, "org3: unreachable") {
		t.Errorf("job: %s %q, want it failed with org3 unreachable", rec.Status, rec.Error)
	}
	// The attempt that noticed may have started after the kill: always when
	// org3 coordinated, and when a loaded machine changed leaders.
	b := rec.Steps[len(rec.Steps)-1]
	from := killed
	if b.Started.After(killed) {
		from = b.Started
		t.Logf("step %s attempt %d started %v after the kill", b.Phase, b.Attempt, b.Started.Sub(killed))
	}
	// That the liveness check, not the step's timeout, ended the attempt is
	// the error's cause above ("unreachable", where a timeout says "no
	// output within"); how soon is a figure (docs/runtime.md), logged here,
	// which a loaded machine stretches.
	t.Logf("the attempt noticed the killed party after %v", b.Finished.Sub(from))

	org3ID, err := peer.Decode(org3.PeerID)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, func() bool {
		return !node.Connected(org1, org3ID) && !node.Connected(org2, org3ID)
	})
	t.Logf("QUIC connections to the killed party gone %v after the kill", time.Since(killed))
}
