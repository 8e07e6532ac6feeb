package node_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sum"
	"github.com/cohortdm/cohort/wire"
)

// impersonate starts a libp2p host with a member's identity (read from its
// data dir), to send hand-made bytes as that member would.
func impersonate(t *testing.T, dataDir string) (func(ctx context.Context, to *node.Node, frame []byte) (string, error), func()) {
	t.Helper()
	keyBytes, err := os.ReadFile(filepath.Join(dataDir, "identity.key"))
	if err != nil {
		t.Fatal(err)
	}
	sk, err := crypto.UnmarshalPrivateKey(keyBytes)
	if err != nil {
		t.Fatal(err)
	}
	h, err := libp2p.New(libp2p.Identity(sk), libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"))
	if err != nil {
		t.Fatal(err)
	}
	send := func(ctx context.Context, to *node.Node, raw []byte) (string, error) {
		var addrs []ma.Multiaddr
		for _, a := range to.Addrs() {
			addrs = append(addrs, ma.StringCast(a))
		}
		if err := h.Connect(ctx, peer.AddrInfo{ID: to.PeerID(), Addrs: addrs}); err != nil {
			return "", err
		}
		s, err := h.NewStream(ctx, to.PeerID(), wire.JobProtocol)
		if err != nil {
			return "", err
		}
		defer s.Close()
		if _, err := s.Write(raw); err != nil {
			return "", err
		}
		s.CloseWrite()
		ack, err := wire.ReadFrame(s, 4096)
		return string(ack), err
	}
	return send, func() { h.Close() }
}

func frame(t *testing.T, m *wire.Message) []byte {
	t.Helper()
	b, err := wire.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := wire.WriteFrame(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Malformed, oversized, spoofed and out-of-order messages are refused with
// an error naming the cause, and the node keeps running.
func TestBadMessagesRefused(t *testing.T) {
	t.Parallel()
	kind := &stepper{}
	c := startCluster(t, 3, job.Registry{"stepper": kind})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A finished job, so that messages for it are out of order.
	done := submitAndWait(t, ctx, c.Node("org1"), stepperSpec([]string{"org1", "org2", "org3"}, 0))

	// Stop org2's node so its identity can be borrowed without a clash.
	if err := c.Kill("org2"); err != nil {
		t.Fatal(err)
	}
	send, stop := impersonate(t, filepath.Join(c.Dir, "org2"))
	defer stop()
	target := c.Node("org1")

	huge := make([]byte, 4)
	huge[0] = 0x7f // claims ~2 GiB
	cases := []struct {
		name, raw, want string
	}{
		{"garbage", string([]byte{0, 0, 0, 3, 0xc1, 0xc1, 0xc1}), "malformed"},
		{"oversized", string(huge), "exceeds size limit"},
		{"spoofed sender", string(frame(t, &wire.Message{Type: "x", Job: "j", From: "org3"})), "claims to be from"},
		{"finished job", string(frame(t, &wire.Message{Type: "x", Job: done.ID, Phase: "a", From: "org2"})), "stale"},
	}
	for _, tc := range cases {
		ack, err := send(ctx, target, []byte(tc.raw))
		if err != nil && tc.name != "oversized" {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !strings.Contains(ack, tc.want) {
			t.Errorf("%s: ack %q, want it to mention %q", tc.name, ack, tc.want)
		}
	}
	// Still alive and serving jobs.
	if _, err := c.Restart("org2"); err != nil {
		stop()
		if _, err := c.Restart("org2"); err != nil {
			t.Fatal(err)
		}
	}
	rec := submitAndWait(t, ctx, c.Node("org1"), stepperSpec([]string{"org1", "org3"}, 0))
	if rec.Status != node.StatusDone {
		t.Fatalf("node unusable after bad messages: %s", rec.Error)
	}
}

// Bad configuration gets an error that names the file and field.
func TestBadConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		err  func() error
		want []string
	}{
		{"missing name", func() error {
			_, err := node.LoadConfig(write("a.yaml", "data_dir: x\nconsortium: c.yaml\n"))
			return err
		}, []string{"a.yaml", "name"}},
		{"unknown field", func() error {
			_, err := node.LoadConfig(write("b.yaml", "name: a\ndata_dir: x\nconsortium: c\nbogus: 1\n"))
			return err
		}, []string{"b.yaml", "bogus"}},
		{"malformed peer id", func() error {
			_, err := node.LoadConsortium(write("c.yaml", "members:\n  - name: a\n    peer_id: nope\n    addrs: []\n"))
			return err
		}, []string{"c.yaml", "members[0].peer_id"}},
		{"bad multiaddr", func() error {
			_, err := node.LoadConfig(write("d.yaml", "name: a\ndata_dir: x\nconsortium: c\nlisten: [\"tcp/1\"]\n"))
			return err
		}, []string{"d.yaml", "listen[0]"}},
		{"negative step timeout", func() error {
			_, err := node.LoadConfig(write("e.yaml", "name: a\ndata_dir: x\nconsortium: c\ntiming: {step_ms: -1}\n"))
			return err
		}, []string{"e.yaml", "timing.step_ms"}},
		{"step timeout beyond a day", func() error {
			_, err := node.LoadConfig(write("f.yaml", "name: a\ndata_dir: x\nconsortium: c\ntiming: {step_ms: 86400001}\n"))
			return err
		}, []string{"f.yaml", "timing.step_ms"}},
		{"negative send timeout, in code", func() error {
			_, err := node.New(node.Options{Config: &node.Config{Name: "a", DataDir: filepath.Join(dir, "g"), Timing: node.Timing{SendMS: -5}}})
			return err
		}, []string{"node a", "timing.send_ms"}},
		{"missing key file", func() error {
			_, err := node.LoadIdentity(filepath.Join(dir, "nowhere"))
			return err
		}, []string{"identity.key"}},
	}
	for _, tc := range cases {
		err := tc.err()
		if err == nil || !errors.Is(err, node.ErrConfig) {
			t.Errorf("%s: err = %v, want a config error", tc.name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not name %q", tc.name, err, w)
			}
		}
	}
}

// Specs naming an unknown kind or a non-member are refused before anything
// is committed.
func TestBadSpecRefused(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3, job.Registry{"sum": sum.Kind{}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n := c.Node("org2")
	for spec, want := range map[string]string{
		"kind: nope\nparties: [{name: org1}]\n":                        "unknown job kind",
		"kind: sum\nparties: [{name: mallory}]\nparams: {column: v}\n": "not a member",
		"kind: sum\nparties: [{name: org1}]\n":                         "params.column",
		"kind: sum\nparties: [{name: org1}]\nparamz: {}\n":             "paramz",
	} {
		_, err := n.Submit(ctx, []byte(spec))
		if err == nil || !errors.Is(err, job.ErrSpec) || !strings.Contains(err.Error(), want) {
			t.Errorf("spec %q: err = %v, want it to mention %q", spec, err, want)
		}
	}
	if n.Status().Jobs != 0 {
		t.Fatal("a bad spec was committed")
	}
}

// BenchmarkRoundTrip measures one small message from org1 to org2 and its
// answer back, over libp2p on loopback (each leg: stream open, frame, ack).
func BenchmarkRoundTrip(b *testing.B) {
	ctx := context.Background()
	c, err := startBenchCluster(b)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	a, z := c.Node("org1").Party("bench"), c.Node("org2").Party("bench")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := roundTrip(ctx, a, z, "bench", i); err != nil {
			b.Fatal(err)
		}
	}
}

// roundTrip sends a small ping from org1's party a to org2's party z and a
// pong back, each received before the next step.
func roundTrip(ctx context.Context, a, z job.Party, jobID string, round int) error {
	ping := &wire.Message{Type: "ping", Job: jobID, Round: round, From: a.Self(), Body: []byte("hello")}
	if err := a.Send(ctx, "org2", ping, wire.DiscloseControl); err != nil {
		return fmt.Errorf("ping %d: %w", round, err)
	}
	if _, err := z.Receive(ctx, "org1", ping.Key()); err != nil {
		return fmt.Errorf("ping %d: %w", round, err)
	}
	pong := &wire.Message{Type: "pong", Job: jobID, Round: round, From: z.Self(), Body: []byte("hello")}
	if err := z.Send(ctx, "org1", pong, wire.DiscloseControl); err != nil {
		return fmt.Errorf("pong %d: %w", round, err)
	}
	if _, err := a.Receive(ctx, "org2", pong.Key()); err != nil {
		return fmt.Errorf("pong %d: %w", round, err)
	}
	return nil
}

// BenchmarkElection measures the time from starting N fresh nodes to an
// agreed leader.
func BenchmarkElection(b *testing.B) {
	for _, n := range []int{3, 5} {
		b.Run(names(n)[n-1], func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				c, err := startBenchClusterN(b, n)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				c.Close()
				b.StartTimer()
			}
		})
	}
}

// BenchmarkReelection measures the time from killing the leader of 3 nodes
// to a new agreed leader.
func BenchmarkReelection(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c, err := startBenchClusterN(b, 3)
		if err != nil {
			b.Fatal(err)
		}
		l, _ := c.WaitLeader(context.Background())
		b.StartTimer()
		if err := c.Kill(l.Name()); err != nil {
			b.Fatal(err)
		}
		if _, err := c.WaitLeader(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		c.Close()
		b.StartTimer()
	}
}
