package jobtest

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

var step = job.Step{Job: "j1", Phase: "p", Round: 2, Attempt: 1}

func TestSendBeforeReceive(t *testing.T) {
	net := NewNetwork("a", "b")
	a, b := net.Party("a"), net.Party("b")
	ctx := context.Background()
	for _, body := range []string{"one", "two"} {
		if err := a.Send(ctx, "b", step.Message("a", "t/x", []byte(body)), wire.DiscloseControl); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"one", "two"} {
		m, err := b.Receive(ctx, "a", step.Key("t/x"))
		if err != nil {
			t.Fatal(err)
		}
		if string(m.Body) != want {
			t.Fatalf("got %q, want %q (FIFO order)", m.Body, want)
		}
	}
	if got := net.MessagesSent("a"); got != 2 {
		t.Fatalf("messages sent = %d", got)
	}
	if net.BytesSent("a") <= int64(len("one")+len("two")) {
		t.Fatalf("bytes sent = %d, want the encoded size", net.BytesSent("a"))
	}
}

func TestReceiveWaitsAndMatchesKey(t *testing.T) {
	net := NewNetwork("a", "b", "c")
	a, b, c := net.Party("a"), net.Party("b"), net.Party("c")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var got *wire.Message
	var gotErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		got, gotErr = b.Receive(ctx, "a", step.Key("t/want"))
	}()
	// Same type from another sender, and another round from the right sender:
	// neither matches.
	other := step
	other.Round = 3
	mustSend(t, c, "b", step.Message("c", "t/want", []byte("wrong sender")))
	mustSend(t, a, "b", other.Message("a", "t/want", []byte("wrong round")))
	mustSend(t, a, "b", step.Message("a", "t/want", []byte("right")))
	wg.Wait()
	if gotErr != nil || string(got.Body) != "right" {
		t.Fatalf("got %v, %v", got, gotErr)
	}
}

func TestReceiveHonoursContext(t *testing.T) {
	net := NewNetwork("a", "b")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := net.Party("b").Receive(ctx, "a", step.Key("t/x"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	done, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if err := net.Party("a").Send(done, "b", step.Message("a", "t/x", nil), wire.DiscloseControl); !errors.Is(err, context.Canceled) {
		t.Fatalf("send on cancelled ctx: %v", err)
	}
}

func TestDrop(t *testing.T) {
	net := NewNetwork("a", "b")
	a, b := net.Party("a"), net.Party("b")
	ctx := context.Background()
	net.Drop("b", DropFail)
	if err := a.Send(ctx, "b", step.Message("a", "t/x", nil), wire.DiscloseControl); !errors.Is(err, ErrDropped) {
		t.Fatalf("send to failed party: %v", err)
	}
	if _, err := b.Receive(ctx, "a", step.Key("t/x")); !errors.Is(err, ErrDropped) {
		t.Fatalf("receive at failed party: %v", err)
	}
	net.Drop("b", DropHang)
	if err := a.Send(ctx, "b", step.Message("a", "t/x", nil), wire.DiscloseControl); err != nil {
		t.Fatalf("send to hung party should vanish silently: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := b.Send(short, "a", step.Message("b", "t/x", nil), wire.DiscloseControl); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("send from hung party: %v", err)
	}
	net.Drop("b", DropNone)
	mustSend(t, b, "a", step.Message("b", "t/x", []byte("back")))
	if m, err := a.Receive(ctx, "b", step.Key("t/x")); err != nil || string(m.Body) != "back" {
		t.Fatalf("after restore: %v %v", m, err)
	}
}

func TestInterceptAndCapture(t *testing.T) {
	net := NewNetwork("a", "b")
	a, b := net.Party("a"), net.Party("b")
	ctx := context.Background()
	net.Capture("a")
	net.Intercept("a", func(to string, m *wire.Message) *wire.Message {
		if bytes.Equal(m.Body, []byte("lose")) {
			return nil
		}
		m.Body = append(m.Body, '!')
		return m
	})
	msg := step.Message("a", "t/x", []byte("hi"))
	mustSend(t, a, "b", msg)
	mustSend(t, a, "b", step.Message("a", "t/x", []byte("lose")))
	if string(msg.Body) != "hi" {
		t.Fatal("tampering modified the sender's message")
	}
	m, err := b.Receive(ctx, "a", step.Key("t/x"))
	if err != nil || string(m.Body) != "hi!" {
		t.Fatalf("got %v %v", m, err)
	}
	caps := net.Captured("a")
	if len(caps) != 2 || string(caps[0].Message.Body) != "hi" || caps[0].Disclosure != wire.DiscloseControl || caps[0].To != "b" {
		t.Fatalf("captured %+v", caps)
	}
	// The receiver's copy is its own.
	m.Body[0] = 'X'
	if string(net.Captured("a")[0].Message.Body) != "hi" {
		t.Fatal("receiver shares memory with the capture")
	}
	net.ResetCounters()
	if net.BytesSent("a") != 0 || len(net.Captured("a")) != 0 {
		t.Fatal("reset did not clear counters")
	}
}

func TestSpoofedSenderRefused(t *testing.T) {
	net := NewNetwork("a", "b")
	if err := net.Party("a").Send(context.Background(), "b", step.Message("b", "t/x", nil), wire.DiscloseControl); err == nil {
		t.Fatal("a message claiming another sender was accepted")
	}
}

func TestConcurrent(t *testing.T) {
	names := []string{"a", "b", "c", "d"}
	net := NewNetwork(names...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const rounds = 50
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(names)*len(names))
	for _, from := range names {
		for _, to := range names {
			if from == to {
				continue
			}
			wg.Add(2)
			go func() {
				defer wg.Done()
				for r := 0; r < rounds; r++ {
					s := step
					s.Round = r
					if err := net.Party(from).Send(ctx, to, s.Message(from, "t/x", []byte{byte(r)}), wire.DiscloseControl); err != nil {
						errs <- err
						return
					}
				}
			}()
			go func() {
				defer wg.Done()
				for r := rounds - 1; r >= 0; r-- {
					s := step
					s.Round = r
					m, err := net.Party(to).Receive(ctx, from, s.Key("t/x"))
					if err != nil {
						errs <- err
						return
					}
					if m.Body[0] != byte(r) {
						errs <- errors.New("wrong message")
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func mustSend(t *testing.T, p job.Party, to string, m *wire.Message) {
	t.Helper()
	if err := p.Send(context.Background(), to, m, wire.DiscloseControl); err != nil {
		t.Fatal(err)
	}
}

func TestDelay(t *testing.T) {
	net := NewNetwork("a", "b")
	a, b := net.Party("a"), net.Party("b")
	net.Delay("a", 50*time.Millisecond)
	start := time.Now()
	mustSend(t, a, "b", step.Message("a", "t/x", []byte("late")))
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Fatalf("delayed send returned after %v", took)
	}
	if m, err := b.Receive(context.Background(), "a", step.Key("t/x")); err != nil || string(m.Body) != "late" {
		t.Fatalf("got %v %v", m, err)
	}
	// A send whose context ends before the delay delivers nothing.
	short, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := a.Send(short, "b", step.Message("a", "t/x", []byte("lost")), wire.DiscloseControl); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("send past its deadline: %v", err)
	}
	none, cancel2 := context.WithTimeout(context.Background(), 60*time.Millisecond)
	defer cancel2()
	if m, err := b.Receive(none, "a", step.Key("t/x")); err == nil {
		t.Fatalf("a send that gave up was delivered: %q", m.Body)
	}
	// Removing a delay of an hour: a send returns well within a minute.
	net.Delay("a", time.Hour)
	net.Delay("a", 0)
	minute, cancel3 := context.WithTimeout(context.Background(), time.Minute)
	defer cancel3()
	if err := a.Send(minute, "b", step.Message("a", "t/x", nil), wire.DiscloseControl); err != nil {
		t.Fatalf("send after the delay was removed: %v", err)
	}
}
