package runnertest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// TestParty runs the Party suite over two members' views of one network,
// a and b, each able to send to the other and to itself. Its subtests
// share them, each with job ids of its own.
func TestParty(t *testing.T, a, b job.Party) {
	if a.Self() == "" || b.Self() == "" || a.Self() == b.Self() {
		t.Fatalf("parties %q and %q: want two named members", a.Self(), b.Self())
	}
	t.Run("Delivers", func(t *testing.T) { testDelivers(t, a, b) })
	t.Run("WaitsForALaterMessage", func(t *testing.T) { testWaits(t, a, b) })
	t.Run("InOrderPerSenderAndKey", func(t *testing.T) { testInOrder(t, a, b) })
	t.Run("KeysApart", func(t *testing.T) { testKeysApart(t, a, b) })
	t.Run("SharesNoMemory", func(t *testing.T) { testPartySharesNoMemory(t, a, b) })
	t.Run("OneMessageToSeveralAtOnce", func(t *testing.T) { testOneMessageToSeveral(t, a, b) })
	t.Run("RefusesAForgedSender", func(t *testing.T) { testForgedSender(t, a, b) })
	t.Run("RefusesWhatTheWireRefuses", func(t *testing.T) { testWireRefuses(t, a, b) })
	t.Run("RefusesAnUnknownPeer", func(t *testing.T) {
		m := message(t, a, 0, "", "x")
		if err := a.Send(t.Context(), "no-such-member", m, wire.DiscloseControl); err == nil {
			t.Fatal("a send to a non-member succeeded")
		}
	})
	t.Run("EndedContext", func(t *testing.T) { testPartyEndedContext(t, a, b) })
}

// message is a message of p's with every key field set, for a job of the
// test's own.
func message(t *testing.T, p job.Party, round int, channel, body string) *wire.Message {
	return &wire.Message{Version: wire.Version, Type: "conformance/x", Job: jobID(t, ""), Phase: "p",
		Round: round, Attempt: 1, Channel: channel, From: p.Self(), Body: []byte(body)}
}

// send sends m from p to `to` and fails the test on an error.
func send(t *testing.T, p job.Party, to string, m *wire.Message) {
	t.Helper()
	if err := p.Send(t.Context(), to, m, wire.DiscloseControl); err != nil {
		t.Fatalf("%s sends %s to %s: %v", p.Self(), m.Type, to, err)
	}
}

// queued receives the message Send has returned for: it is queued already,
// so a context that has ended still gets it, and nothing waits on a clock.
func queued(t *testing.T, p job.Party, from string, k wire.Key) *wire.Message {
	t.Helper()
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	m, err := p.Receive(ended, from, k)
	if err != nil {
		t.Fatalf("%s: nothing queued from %s for %+v once Send returned: %v", p.Self(), from, k, err)
	}
	return m
}

// nothingQueued checks that p holds no message from `from` with key k.
func nothingQueued(t *testing.T, p job.Party, from string, k wire.Key) {
	t.Helper()
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	if m, err := p.Receive(ended, from, k); err == nil {
		t.Fatalf("%s holds %q from %s, which was never delivered", p.Self(), m.Body, from)
	}
}

func testDelivers(t *testing.T, a, b job.Party) {
	for _, to := range []job.Party{b, a} {
		m := message(t, a, 3, "ch/1", "to "+to.Self())
		send(t, a, to.Self(), m)
		got := queued(t, to, a.Self(), m.Key())
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("%s received %+v, %s sent %+v", to.Self(), got, a.Self(), m)
		}
	}
}

func testWaits(t *testing.T, a, b job.Party) {
	m := message(t, a, 0, "", "later")
	got := make(chan *wire.Message, 1)
	errs := make(chan error, 1)
	go func() {
		r, err := b.Receive(t.Context(), a.Self(), m.Key())
		got <- r
		errs <- err
	}()
	send(t, a, b.Self(), m)
	if r, err := <-got, <-errs; err != nil || string(r.Body) != "later" {
		t.Fatalf("receive waiting for a message: %v, %v", r, err)
	}
}

func testInOrder(t *testing.T, a, b job.Party) {
	for _, from := range []job.Party{a, b} {
		for i := range 5 {
			send(t, from, b.Self(), message(t, from, 0, "", fmt.Sprint(i)))
		}
	}
	k := message(t, a, 0, "", "").Key()
	for _, from := range []job.Party{b, a} {
		for i := range 5 {
			if m := queued(t, b, from.Self(), k); string(m.Body) != fmt.Sprint(i) {
				t.Fatalf("message %d from %s received as %q", i, from.Self(), m.Body)
			}
		}
	}
}

// testKeysApart sends messages that differ from one key in one field each,
// and the same key from another sender: a receive of the key gets its own
// message, and every other message waits for its own key.
func testKeysApart(t *testing.T, a, b job.Party) {
	base := message(t, a, 1, "c", "the key's")
	others := map[string]func(*wire.Message){
		"type":    func(m *wire.Message) { m.Type += "2" },
		"job":     func(m *wire.Message) { m.Job += "2" },
		"phase":   func(m *wire.Message) { m.Phase += "2" },
		"round":   func(m *wire.Message) { m.Round++ },
		"attempt": func(m *wire.Message) { m.Attempt++ },
		"channel": func(m *wire.Message) { m.Channel += "/2" },
	}
	names := []string{"type", "job", "phase", "round", "attempt", "channel"}
	for _, field := range names {
		m := *base
		others[field](&m)
		m.Body = []byte("other " + field)
		send(t, a, b.Self(), &m)
	}
	self := *base
	self.From, self.Body = b.Self(), []byte("from b")
	send(t, b, b.Self(), &self)
	send(t, a, b.Self(), base)
	if m := queued(t, b, a.Self(), base.Key()); string(m.Body) != "the key's" {
		t.Fatalf("receive of the key got %q", m.Body)
	}
	if m := queued(t, b, b.Self(), base.Key()); string(m.Body) != "from b" {
		t.Fatalf("receive of the key from b got %q", m.Body)
	}
	for _, field := range names {
		m := *base
		others[field](&m)
		if got := queued(t, b, a.Self(), m.Key()); string(got.Body) != "other "+field {
			t.Fatalf("key differing in %s got %q", field, got.Body)
		}
	}
}

// testPartySharesNoMemory checks that Send leaves m alone and that what
// arrives is a copy: neither side's changes reach the other.
func testPartySharesNoMemory(t *testing.T, a, b job.Party) {
	for i, to := range []job.Party{b, a} {
		m := message(t, a, i, "", "body")
		sent := *m
		sent.Body = []byte("body")
		send(t, a, to.Self(), m)
		if !reflect.DeepEqual(*m, sent) {
			t.Fatalf("send to %s changed the message: %+v, was %+v", to.Self(), m, sent)
		}
		m.Body[0] = 'X'
		got := queued(t, to, a.Self(), m.Key())
		if string(got.Body) != "body" {
			t.Fatalf("%s received %q: it shares the sender's memory", to.Self(), got.Body)
		}
	}
}

// testOneMessageToSeveral sends one message value to both parties at once,
// as a kind broadcasting a step's message does (run with -race).
func testOneMessageToSeveral(t *testing.T, a, b job.Party) {
	m := message(t, a, 0, "", "to all")
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, to := range []string{a.Self(), b.Self()} {
		wg.Go(func() { errs[i] = a.Send(t.Context(), to, m, wire.DiscloseControl) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, to := range []job.Party{a, b} {
		if got := queued(t, to, a.Self(), m.Key()); string(got.Body) != "to all" {
			t.Fatalf("%s received %q", to.Self(), got.Body)
		}
	}
}

func testForgedSender(t *testing.T, a, b job.Party) {
	for _, from := range []string{b.Self(), ""} {
		m := message(t, a, 0, "", "forged")
		m.From = from
		if err := a.Send(t.Context(), b.Self(), m, wire.DiscloseControl); err == nil {
			t.Fatalf("%s sent a message from %q", a.Self(), from)
		}
		nothingQueued(t, b, from, m.Key())
		nothingQueued(t, b, a.Self(), m.Key())
	}
}

// testWireRefuses sends messages wire.Encode refuses: they fail at the
// sender, to a peer and to itself alike.
func testWireRefuses(t *testing.T, a, b job.Party) {
	for _, to := range []job.Party{b, a} {
		long := message(t, a, 0, strings.Repeat("c", wire.MaxFieldLen+1), "")
		noType := message(t, a, 0, "", "")
		noType.Type = ""
		for _, m := range []*wire.Message{long, noType} {
			if err := a.Send(t.Context(), to.Self(), m, wire.DiscloseControl); err == nil {
				t.Fatalf("a message the wire refuses (channel %d bytes, type %q) reached %s", len(m.Channel), m.Type, to.Self())
			}
			nothingQueued(t, to, a.Self(), m.Key())
		}
	}
}

func testPartyEndedContext(t *testing.T, a, b job.Party) {
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	k := message(t, a, 0, "", "").Key()
	if _, err := b.Receive(ended, a.Self(), k); !errors.Is(err, context.Canceled) {
		t.Fatalf("receive of nothing under an ended context: %v", err)
	}
	for _, to := range []job.Party{b, a} {
		if err := a.Send(ended, to.Self(), message(t, a, 0, "", "late"), wire.DiscloseControl); !errors.Is(err, context.Canceled) {
			t.Fatalf("send to %s under an ended context: %v", to.Self(), err)
		}
		nothingQueued(t, to, a.Self(), k)
	}
}
