// Package mailbox holds job messages until a job receives them. A receive
// may come before or after delivery: messages are queued per sender and
// wire.Key, in arrival order, and a waiting receive wakes on every
// arrival. The node keeps one mailbox for everything its peers send it;
// jobtest keeps one per in-memory party.
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
	gen    chan struct{} // closed and replaced on every arrival
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
	return &Box{limit: limit, queues: map[key][]entry{}, gen: make(chan struct{})}
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
	close(b.gen)
	b.gen = make(chan struct{})
	return nil
}

// TryGet takes the oldest message with key k from sender from, if any.
func (b *Box) TryGet(from string, k wire.Key) (*wire.Message, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m, _ := b.take(key{from: from, k: k})
	return m, m != nil
}

// take removes the oldest message of a queue; b.mu must be held. It also
// returns the channel the next arrival closes.
func (b *Box) take(qk key) (*wire.Message, chan struct{}) {
	q := b.queues[qk]
	if len(q) == 0 {
		return nil, b.gen
	}
	e := q[0]
	if len(q) == 1 {
		delete(b.queues, qk)
	} else {
		b.queues[qk] = q[1:]
	}
	b.bytes -= e.size
	return e.m, nil
}

// Get takes the oldest message with key k from sender from, waiting until
// one arrives or ctx ends.
func (b *Box) Get(ctx context.Context, from string, k wire.Key) (*wire.Message, error) {
	qk := key{from: from, k: k}
	for {
		b.mu.Lock()
		m, next := b.take(qk)
		b.mu.Unlock()
		if m != nil {
			return m, nil
		}
		select {
		case <-next:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s from %s in job %s phase %s round %d: %w", k.Type, from, k.Job, k.Phase, k.Round, ctx.Err())
		}
	}
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
