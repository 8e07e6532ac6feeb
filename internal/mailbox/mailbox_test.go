package mailbox

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cohortdm/cohort/wire"
)

func msg(job, from, typ, body string) *wire.Message {
	return &wire.Message{Type: typ, Job: job, From: from, Body: []byte(body)}
}

func TestGetMatchesSenderAndKeyInOrder(t *testing.T) {
	b := New(0)
	ctx := context.Background()
	for _, m := range []*wire.Message{msg("j", "a", "t", "1"), msg("j", "b", "t", "other sender"), msg("j", "a", "u", "other type"), msg("j", "a", "t", "2")} {
		if err := b.Put(m); err != nil {
			t.Fatal(err)
		}
	}
	k := msg("j", "a", "t", "").Key()
	for _, want := range []string{"1", "2"} {
		m, err := b.Get(ctx, "a", k)
		if err != nil || string(m.Body) != want {
			t.Fatalf("got %v %v, want %s", m, err, want)
		}
	}
	if _, ok := b.TryGet("a", k); ok {
		t.Fatal("a third message")
	}
	if b.Len() != 2 {
		t.Fatalf("%d left, want 2", b.Len())
	}
}

func TestGetWaitsForArrivalOrContext(t *testing.T) {
	b := New(0)
	k := msg("j", "a", "t", "").Key()
	got := make(chan *wire.Message)
	go func() {
		m, _ := b.Get(context.Background(), "a", k)
		got <- m
	}()
	time.Sleep(10 * time.Millisecond)
	if err := b.Put(msg("j", "a", "t", "late")); err != nil {
		t.Fatal(err)
	}
	if m := <-got; string(m.Body) != "late" {
		t.Fatalf("got %q", m.Body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := b.Get(ctx, "a", k); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
}

func TestCapCountsWholeMessagesAndDropReleases(t *testing.T) {
	m := msg("j", "a", "t", "")
	b := New(Size(m) * 2)
	for i := 0; i < 2; i++ {
		if err := b.Put(msg("j", "a", "t", "")); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Put(m); err == nil {
		t.Fatal("a full mailbox took more")
	}
	b.DropUnless(func(string, time.Time) bool { return false })
	if b.Bytes() != 0 || b.Len() != 0 {
		t.Fatalf("after drop: %d bytes, %d messages", b.Bytes(), b.Len())
	}
	if err := b.Put(m); err != nil {
		t.Fatal(err)
	}
}
