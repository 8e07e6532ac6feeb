package node

import (
	"testing"
	"time"
)

func TestLostLeadersRemembersTheReplacedLeadersLastHeartbeat(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	l := newLostLeaders("org1")
	l.observe("org3", t0)
	if _, ok := l.since("org3"); ok {
		t.Fatal("the current leader is not lost")
	}
	l.observe("", t0.Add(time.Second)) // org3 went quiet: an election starts
	l.observe("org2", t0.Add(2*time.Second))
	got, ok := l.since("org3")
	if !ok || !got.Equal(t0.Add(time.Second)) {
		t.Fatalf("org3 lost since %v %v, want its last heartbeat %v", got, ok, t0.Add(time.Second))
	}
	l.heard("org3")
	if _, ok := l.since("org3"); ok {
		t.Fatal("a lost leader that answered is not lost any more")
	}

	l.observe("org1", t0.Add(3*time.Second)) // org2 replaced by this node
	if _, ok := l.since("org2"); !ok {
		t.Fatal("org2, replaced by this node, is lost")
	}
	l.observe("org2", t0.Add(4*time.Second)) // and leads again
	if _, ok := l.since("org2"); ok {
		t.Fatal("a leader again is not lost")
	}
	l.observe("org3", t0.Add(5*time.Second))
	if _, ok := l.since("org1"); ok {
		t.Fatal("this node never counts itself lost")
	}
}
