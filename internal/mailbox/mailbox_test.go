package mailbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
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

// Receives waiting on other queues stay asleep when a message arrives, and
// a queue's wait goes once its last receive gives up or is served: a
// receive for a message that never comes (a failure notice) leaves nothing
// behind.
func TestWaitsPerQueue(t *testing.T) {
	b := New(0)
	ctx, cancel := context.WithCancel(context.Background())
	const idle = 50
	done := make(chan error, idle)
	for i := range idle {
		go func() {
			// Two receives on each of 25 queues.
			_, err := b.Get(ctx, "a", msg(fmt.Sprint(i/2), "a", "never", "").Key())
			done <- err
		}()
	}
	other := make(chan *wire.Message, 1)
	go func() {
		m, _ := b.Get(context.Background(), "b", msg("j", "b", "t", "").Key())
		other <- m
	}()
	for b.waiting() < idle/2+1 {
		time.Sleep(time.Millisecond) // until every queue has its receives waiting
	}
	if err := b.Put(msg("j", "b", "t", "x")); err != nil {
		t.Fatal(err)
	}
	if m := <-other; string(m.Body) != "x" {
		t.Fatalf("got %q", m.Body)
	}
	if n := b.waiting(); n != idle/2 {
		t.Fatalf("%d queues waited on after the arrival, want the %d idle ones", n, idle/2)
	}
	cancel()
	for range idle {
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v", err)
		}
	}
	if n := b.waiting(); n != 0 {
		t.Fatalf("%d waits left after every receive gave up", n)
	}
}

// BenchmarkPutGetWithIdleWaiters: one message put and taken while
// thousands of receives wait on queues no message reaches.
func BenchmarkPutGetWithIdleWaiters(b *testing.B) {
	for _, idle := range []int{0, 3000} {
		b.Run(fmt.Sprintf("idle=%d", idle), func(b *testing.B) {
			box := New(0)
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for i := range idle {
				wg.Go(func() { _, _ = box.Get(ctx, "a", msg(fmt.Sprint(i), "a", "never", "").Key()) })
			}
			for box.waiting() < idle {
				time.Sleep(time.Millisecond)
			}
			m := msg("j", "b", "t", "x")
			k := m.Key()
			b.ResetTimer()
			for range b.N {
				if err := box.Put(m); err != nil {
					b.Fatal(err)
				}
				if _, err := box.Get(ctx, "b", k); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			cancel()
			wg.Wait()
		})
	}
}
