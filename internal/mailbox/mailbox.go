// Package mailbox holds job messages until a job receives them. A receive
// may come before or after delivery: messages are queued per sender and
// wire.Key, in arrival order, and a waiting receive wakes when a message
// arrives on its own sender and key, not on every arrival (a node with
// thousands of receives waiting, most for messages that only come when
// something fails, would otherwise wake them all on every message). The
// node keeps one mailbox for everything its peers send it; jobtest keeps
// one per in-memory party.
package mailbox

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/cohortdm/cohort/wire"
)

// Box is a mailbox with a cap on what it holds. All methods are safe for
// concurrent use.
type Box struct {
	limit int

	mu     sync.Mutex
	queues map[key][]entry
	bytes  int
	waits  map[key]*wait // the receives waiting on an empty queue
}

// wait is what the receives waiting on one queue share: ch is closed by
// the queue's next arrival; n counts them, so that the last to give up
// removes it.
type wait struct {
	ch chan struct{}
	n  int
}

type key struct {
	from string
	k    wire.Key
}

type entry struct {
	m    *wire.Message
	at   time.Time
	size int
}

// New returns an empty mailbox that holds at most limit bytes (as counted
// by Size); 0 means no limit.
func New(limit int) *Box {
	return &Box{limit: limit, queues: map[key][]entry{}, waits: map[key]*wait{}}
}

// Size counts a whole message against the cap: its body and every envelope
// field, so that long ids cannot hide behind an empty body.
func Size(m *wire.Message) int {
	return len(m.Body) + len(m.Type) + len(m.Job) + len(m.Phase) + len(m.Channel) + len(m.From) + 64
}

// Put queues m under its sender and key, or refuses it when the mailbox is
// full.
func (b *Box) Put(m *wire.Message) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	size := Size(m)
	if b.limit > 0 && b.bytes+size > b.limit {
		return fmt.Errorf("mailbox full (%d bytes queued)", b.bytes)
	}
	k := key{from: m.From, k: m.Key()}
	b.queues[k] = append(b.queues[k], entry{m: m, at: time.Now(), size: size})
	b.bytes += size
	if w := b.waits[k]; w != nil {
		close(w.ch)
		delete(b.waits, k)
	}
	return nil
}

// TryGet takes the oldest message with key k from sender from, if any.
func (b *Box) TryGet(from string, k wire.Key) (*wire.Message, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.take(key{from: from, k: k})
	return m, m != nil
}

// take removes the oldest message of a queue, or returns nil when it is
// empty; b.mu must be held.
func (b *Box) take(qk key) *wire.Message {
	q := b.queues[qk]
	if len(q) == 0 {
		return nil
	}
	e := q[0]
	if len(q) == 1 {
		delete(b.queues, qk)
	} else {
		b.queues[qk] = q[1:]
	}
	b.bytes -= e.size
	return e.m
}

// Get takes the oldest message with key k from sender from, waiting until
// one arrives or ctx ends.
func (b *Box) Get(ctx context.Context, from string, k wire.Key) (*wire.Message, error) {
	qk := key{from: from, k: k}
	for {
		b.mu.Lock()
		m := b.take(qk)
		var w *wait
		if m == nil {
			if w = b.waits[qk]; w == nil {
				w = &wait{ch: make(chan struct{})}
				b.waits[qk] = w
			}
			w.n++
		}
		b.mu.Unlock()
		if m != nil {
			return m, nil
		}
		select {
		case <-w.ch: // an arrival on the queue: take it, or wait again if another receive did
		case <-ctx.Done():
			b.giveUp(qk, w)
			return nil, fmt.Errorf("waiting for %s from %s in job %s phase %s round %d: %w", k.Type, from, k.Job, k.Phase, k.Round, ctx.Err())
		}
	}
}

// giveUp counts a receive out of a queue's wait, and removes the wait when
// it was the last and no arrival has closed it yet.
func (b *Box) giveUp(qk key, w *wait) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w.n--
	if w.n == 0 && b.waits[qk] == w {
		delete(b.waits, qk)
	}
}

// waiting is how many queues have receives waiting on them.
func (b *Box) waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waits)
}

// DropUnless discards the queued messages for which keep returns false,
// given their job and arrival time.
func (b *Box) DropUnless(keep func(jobID string, at time.Time) bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, q := range b.queues {
		kept := q[:0]
		for _, e := range q {
			if keep(k.k.Job, e.at) {
				kept = append(kept, e)
			} else {
				b.bytes -= e.size
			}
		}
		if len(kept) == 0 {
			delete(b.queues, k)
		} else {
			b.queues[k] = kept
		}
	}
}

// Bytes is what the mailbox holds, as counted against its cap.
func (b *Box) Bytes() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bytes
}

// Len is how many messages the mailbox holds.
func (b *Box) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, q := range b.queues {
		n += len(q)
	}
	return n
}
