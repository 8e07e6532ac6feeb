package node_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/node"
)

// soloNode creates a data dir and returns its config (the node is not
// created).
func soloNode(t *testing.T, name string) *node.Config {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if _, _, err := node.Init(name, dir, nil); err != nil {
		t.Fatal(err)
	}
	cfg := &node.Config{Name: name, DataDir: dir, Listen: []string{"/ip4/127.0.0.1/tcp/0"}}
	return cfg
}

// A second node on a data dir that a running node uses stops at once,
// naming the running node's pid, instead of hanging on the Raft log's lock;
// once the first node stops, the data dir can be used again.
func TestDataDirInUse(t *testing.T) {
	cfg := soloNode(t, "org1")
	first, err := node.New(node.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	cons := &node.Consortium{Members: []node.Member{{Name: "org1", PeerID: first.PeerID().String(), Addrs: first.Addrs()}}}
	if err := first.Start(cons); err != nil {
		t.Fatal(err)
	}
	defer first.Close()

	began := time.Now()
	second, err := node.New(node.Options{Config: cfg})
	if err == nil {
		// Without the data dir lock New succeeds and Start blocks on bbolt.
		started := make(chan error, 1)
		go func() { started <- second.Start(cons) }()
		select {
		case err = <-started:
		case <-time.After(5 * time.Second):
			t.Fatal("a second node on the same data dir was created and its Start hung for 5 s")
		}
		second.Close()
		if err == nil {
			t.Fatal("a second node started on a data dir in use")
		}
	}
	want := fmt.Sprintf("data dir in use by pid %d", os.Getpid())
	if !errors.Is(err, node.ErrDataDirInUse) || !strings.Contains(err.Error(), want) {
		t.Fatalf("second node: %v, want an error saying %q", err, want)
	}
	if d := time.Since(began); d > time.Second {
		t.Errorf("refusing the second node took %v", d)
	}

	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := node.New(node.Options{Config: cfg})
	if err != nil {
		t.Fatalf("data dir after the first node stopped: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cons.Members[0].Addrs = again.Addrs()
	if err := again.Start(cons); err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	for !again.IsLeader() {
		select {
		case <-ctx.Done():
			t.Fatal("restarted solo node never led")
		case <-time.After(10 * time.Millisecond):
		}
	}
}
