package node

import (
	"errors"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/mailbox"

	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/wire"
)

// Messages for a job nobody committed are dropped after the grace period,
// messages for an ended job at once, and a live job's are kept; the bytes
// they held are released.
func TestMailboxDropsUndeliverable(t *testing.T) {
	t.Parallel()
	r := &jobRunner{jobsConfig: jobsConfig{FSM: newFSM(), Box: mailbox.New(maxQueuedBytes), UnknownJobGrace: 50 * time.Millisecond}}
	if err := r.FSM.apply(&command{Entry: runner.Entry{Op: runner.OpSubmit, Job: "ended", Spec: []byte("kind: x\nparties: [{name: a}]\n")}}); err != nil {
		t.Fatal(err)
	}
	if err := r.FSM.apply(&command{Entry: runner.Entry{Op: runner.OpFail, Job: "ended", Error: "x"}}); err != nil {
		t.Fatal(err)
	}
	for _, j := range []string{"live", "ended", "ghost"} {
		if err := r.Box.Put(&wire.Message{Type: "t", Job: j, From: "a", Body: make([]byte, 100)}); err != nil {
			t.Fatal(err)
		}
	}
	live := map[string]bool{"live": true}
	r.dropUndeliverable(live)
	if got := r.Box.Len(); got != 2 {
		t.Fatalf("%d queues after the first pass, want live and ghost", got)
	}
	time.Sleep(60 * time.Millisecond)
	r.dropUndeliverable(live)
	if got := r.Box.Len(); got != 1 {
		t.Fatalf("%d queues after the grace, want only live", got)
	}
	if want := mailbox.Size(&wire.Message{Type: "t", Job: "live", From: "a", Body: make([]byte, 100)}); r.Box.Bytes() != want {
		t.Fatalf("mailbox holds %d bytes, want %d", r.Box.Bytes(), want)
	}
}

// A job the FSM applies while reconcile runs is not in reconcile's snapshot
// of running jobs; a message for it that arrived meanwhile must be kept for
// its step, not dropped as if the job had ended (keygen saw a step hang on
// such a lost first message).
func TestMailboxKeepsJobAppliedMidReconcile(t *testing.T) {
	t.Parallel()
	r := &jobRunner{jobsConfig: jobsConfig{FSM: newFSM(), Box: mailbox.New(maxQueuedBytes), UnknownJobGrace: time.Hour}}
	snapshot := map[string]bool{} // taken before the job was applied
	if err := r.FSM.apply(&command{Entry: runner.Entry{Op: runner.OpSubmit, Job: "new", Spec: []byte("kind: x\nparties: [{name: a}]\n")}}); err != nil {
		t.Fatal(err)
	}
	if err := r.Box.Put(&wire.Message{Type: "t", Job: "new", From: "a"}); err != nil {
		t.Fatal(err)
	}
	r.dropUndeliverable(snapshot)
	if r.Box.Len() != 1 {
		t.Fatal("a message for a running job outside reconcile's snapshot was dropped")
	}
}

// Once close has returned, a peer's message is refused with errClosing
// (the handler's refusal) and not queued, while a message to the node
// itself still is: no peer is told of it.
func TestMessengerClosedRefusesPeers(t *testing.T) {
	t.Parallel()
	ms := &messenger{self: "a", box: mailbox.New(maxQueuedBytes)}
	peer := &wire.Message{Version: wire.Version, Type: "t", Job: "j", From: "b"}
	if err := ms.queue(peer); err != nil {
		t.Fatal(err)
	}
	ms.close()
	if err := ms.queue(peer); !errors.Is(err, errClosing) {
		t.Fatalf("a peer's message after close: %v, want errClosing", err)
	}
	own, err := wire.EncodeParts(&wire.Message{Version: wire.Version, Type: "t", Job: "j", From: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ms.toSelf(own); err != nil {
		t.Fatalf("a message to itself after close: %v", err)
	}
	if got := ms.box.Len(); got != 2 {
		t.Fatalf("%d messages queued, want the peer's from before close and the node's own", got)
	}
}
