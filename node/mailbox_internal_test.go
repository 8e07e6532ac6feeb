package node

import (
	"testing"
	"time"

	"github.com/cohortdm/cohort/protocol"
)

// Messages for a job nobody committed are dropped after the grace period,
// messages for an ended job at once, and a live job's are kept; the bytes
// they held are released.
func TestMailboxDropsUndeliverable(t *testing.T) {
	n := &Node{fsm: newFSM(), ms: &messenger{box: newMailbox()}, unknownJobGrace: 50 * time.Millisecond}
	if err := n.fsm.apply(&command{Op: opSubmit, Job: "ended", Spec: []byte("kind: x\nparties: [{name: a}]\n")}); err != nil {
		t.Fatal(err)
	}
	if err := n.fsm.apply(&command{Op: opFail, Job: "ended", Error: "x"}); err != nil {
		t.Fatal(err)
	}
	for _, j := range []string{"live", "ended", "ghost"} {
		if err := n.ms.box.put(&protocol.Message{Type: "t", Job: j, From: "a", Body: make([]byte, 100)}); err != nil {
			t.Fatal(err)
		}
	}
	live := map[string]bool{"live": true}
	n.dropUndeliverable(live)
	if got := len(n.ms.box.queues); got != 2 {
		t.Fatalf("%d queues after the first pass, want live and ghost", got)
	}
	time.Sleep(60 * time.Millisecond)
	n.dropUndeliverable(live)
	if got := len(n.ms.box.queues); got != 1 {
		t.Fatalf("%d queues after the grace, want only live", got)
	}
	if want := sizeOf(&protocol.Message{Type: "t", Job: "live", From: "a", Body: make([]byte, 100)}); n.ms.box.queuedBytes() != want {
		t.Fatalf("mailbox holds %d bytes, want %d", n.ms.box.queuedBytes(), want)
	}
}

// Envelope fields count against the mailbox cap, not only bodies.
func TestMailboxCountsWholeMessages(t *testing.T) {
	b := newMailbox()
	m := &protocol.Message{Type: "t", Job: string(make([]byte, protocol.MaxFieldLen)), From: "a"}
	if err := b.put(m); err != nil {
		t.Fatal(err)
	}
	if b.queuedBytes() < protocol.MaxFieldLen {
		t.Fatalf("an empty-bodied message with a %d-byte job id counts %d bytes", protocol.MaxFieldLen, b.queuedBytes())
	}
}
