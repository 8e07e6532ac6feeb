package node

import (
	"errors"
	"io/fs"
	"syscall"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/hashicorp/raft-boltdb/v2"
)

// What a member reads of another's storage fault is the system error
// alone: the path of the node's data dir stays at home.
func TestFaultTextHasNoPath(t *testing.T) {
	t.Parallel()
	err := &fs.PathError{Op: "write", Path: "/srv/hospital-a/cohort/raft/raft.db", Err: syscall.ENOSPC}
	if got, want := faultText(err), "its Raft log cannot be written: no space left on device"; got != want {
		t.Fatalf("faultText = %q, want %q", got, want)
	}
	if got := faultText(errors.New("/srv/hospital-a: odd")); got != "its Raft log cannot be written" {
		t.Fatalf("faultText of an error without errno = %q", got)
	}
}

// A failed write is kept for the reporter without blocking Raft, however
// many come before it runs; a successful one is not.
func TestFaultStoreNotesFailuresWithoutBlocking(t *testing.T) {
	t.Parallel()
	store, err := raftboltdb.NewBoltStore(t.TempDir() + "/raft.db")
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	f := newFaultStore(store)
	if err := f.StoreLog(&raft.Log{Index: 1, Term: 1, Data: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-f.failed:
		t.Fatalf("a successful write was noted: %v", err)
	default:
	}
	for range 3 {
		_ = f.note(syscall.ENOSPC)
	}
	if err := <-f.failed; !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("noted %v", err)
	}
}
