package dealerless

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// memNet is an in-memory network of n parties for tests: each (round,
// from, to) has a buffered channel. drop, when set, makes that party stop
// before the named round.
type memNet struct {
	n     int
	mu    sync.Mutex
	chans map[string]chan []byte
	bytes []atomic.Int64
	// tamper, when set, rewrites a message before delivery.
	tamper func(round string, from, to int, b []byte) []byte
}

func newMemNet(n int) *memNet {
	return &memNet{n: n, chans: map[string]chan []byte{}, bytes: make([]atomic.Int64, n)}
}

func (m *memNet) ch(round string, from, to int) chan []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := fmt.Sprintf("%s|%d|%d", round, from, to)
	c, ok := m.chans[k]
	if !ok {
		c = make(chan []byte, 1)
		m.chans[k] = c
	}
	return c
}

type memEnd struct {
	m    *memNet
	self int
}

func (e *memEnd) Exchange(ctx context.Context, round string, out [][]byte) ([][]byte, error) {
	for k := 1; k <= e.m.n; k++ {
		if k == e.self {
			continue
		}
		e.m.bytes[e.self-1].Add(int64(len(out[k-1])))
		b := out[k-1]
		if e.m.tamper != nil {
			b = e.m.tamper(round, e.self, k, b)
		}
		select {
		case e.m.ch(round, e.self, k) <- b:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	in := make([][]byte, e.m.n)
	for k := 1; k <= e.m.n; k++ {
		if k == e.self {
			continue
		}
		select {
		case in[k-1] = <-e.m.ch(round, k, e.self):
		case <-ctx.Done():
			return nil, fmt.Errorf("party %d did not answer: %w", k, ctx.Err())
		}
	}
	return in, nil
}
