package mpc

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// memNet is an in-memory Network for n parties: one buffered channel
// per ordered pair, carrying each round's vector encoded with AppendVec
// (so every test also runs DecodeVec on what the parties send).
type memNet struct {
	n  int
	ch [][]chan memMsg // ch[from][to]
}

type memMsg struct {
	round uint32
	body  []byte
}

func newMemNet(n int) *memNet {
	m := &memNet{n: n, ch: make([][]chan memMsg, n)}
	for i := range m.ch {
		m.ch[i] = make([]chan memMsg, n)
		for j := range m.ch[i] {
			// A party is at most one round ahead of a peer that has
			// not yet read its previous round: two messages in flight.
			m.ch[i][j] = make(chan memMsg, 2)
		}
	}
	return m
}

// memEnd is party self's end of a memNet.
type memEnd struct {
	net  *memNet
	self int
}

func (e memEnd) Exchange(ctx context.Context, round uint32, out [][]Elem) ([][]Elem, error) {
	if len(out) != e.net.n {
		return nil, fmt.Errorf("memnet: %d vectors, want %d", len(out), e.net.n)
	}
	for j := range out {
		if j == e.self {
			continue
		}
		select {
		case e.net.ch[e.self][j] <- memMsg{round, AppendVec(nil, out[j])}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	in := make([][]Elem, e.net.n)
	for j := range in {
		if j == e.self {
			continue
		}
		select {
		case msg := <-e.net.ch[j][e.self]:
			if msg.round != round {
				return nil, fmt.Errorf("memnet: party %d: message of round %d", j, msg.round)
			}
			v, err := DecodeVec(msg.body)
			if err != nil {
				return nil, fmt.Errorf("memnet: party %d: %w", j, err)
			}
			in[j] = v
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return in, nil
}

// runParties runs f for each of n parties (threshold t) in its own
// goroutine over one memNet, each network wrapped by wrap (nil: none),
// and waits for all of them. The first party to fail cancels the
// others. It returns the parties and each one's error.
func runParties(t testing.TB, n, th int, wrap func(self int, nw Network) Network,
	f func(ctx context.Context, p *Party) error) ([]*Party, []error) {
	t.Helper()
	net := newMemNet(n)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	parties := make([]*Party, n)
	for i := range parties {
		var nw Network = memEnd{net, i}
		if wrap != nil {
			nw = wrap(i, nw)
		}
		p, err := NewParty(i, n, th, nw, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		parties[i] = p
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, p := range parties {
		wg.Go(func() {
			if err := f(ctx, p); err != nil {
				errs[i] = err
				cancel()
			}
		})
	}
	wg.Wait()
	return parties, errs
}

// mustRun is runParties without a wrapper, failing t on any error.
func mustRun(t testing.TB, n, th int, f func(ctx context.Context, p *Party) error) []*Party {
	t.Helper()
	parties, errs := runParties(t, n, th, nil, f)
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return parties
}
