package psi

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

// memNet is a Network in memory, written apart from job and jobtest: the
// protocols run over it with nothing of the job runtime, as the
// dealerless key generation runs over its own one-method Network.
type memNet struct {
	hub     *memHub
	self    string
	channel string
}

type memHub struct {
	mu     sync.Mutex
	queues map[[4]string]chan []byte // (from, to, channel, type)
}

func newMemNets(parties ...string) map[string]Network {
	hub := &memHub{queues: map[[4]string]chan []byte{}}
	out := map[string]Network{}
	for _, p := range parties {
		out[p] = memNet{hub: hub, self: p}
	}
	return out
}

func (h *memHub) queue(k [4]string) chan []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	q, ok := h.queues[k]
	if !ok {
		q = make(chan []byte, 4096)
		h.queues[k] = q
	}
	return q
}

func (n memNet) Self() string { return n.self }

func (n memNet) Send(ctx context.Context, to, typ string, body []byte) error {
	select {
	case n.hub.queue([4]string{n.self, to, n.channel, typ}) <- slices.Clone(body):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (n memNet) Receive(ctx context.Context, from, typ string) ([]byte, error) {
	select {
	case b := <-n.hub.queue([4]string{from, n.self, n.channel, typ}):
		return b, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("receive %s from %s: %w", typ, from, ctx.Err())
	}
}

func (n memNet) Sub(channel string) Network {
	if n.channel != "" {
		channel = n.channel + "/" + channel
	}
	n.channel = channel
	return n
}

func (n memNet) Scope() Scope {
	return Scope{Job: "mem-job", Phase: "psi", Round: 3, Channel: n.channel}
}

// TestRunOverOwnNetwork runs every two-party mode and Align over memNet.
func TestRunOverOwnNetwork(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	a, b := randomSets(r, 300, 400, 600, true)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, in := range []Intersector{ECDH{}, OT{Config: Config{ChunkSize: 50}}, Auto{}} {
		nets := newMemNets("alice", "bob")
		var ra, rb *Result
		var ea, eb error
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); ra, ea = in.Run(ctx, nets["alice"], "bob", Receiver, a) }()
		go func() { defer wg.Done(); rb, eb = in.Run(ctx, nets["bob"], "alice", Sender, b) }()
		wg.Wait()
		if ea != nil || eb != nil {
			t.Fatalf("%T: %v, %v", in, ea, eb)
		}
		if !slices.Equal(ra.Indices, plain(a, b)) || !slices.Equal(rb.Indices, plain(b, a)) {
			t.Fatalf("%T: wrong intersection", in)
		}
		if ra.PeerSize != distinctCount(b) || rb.PeerSize != distinctCount(a) {
			t.Fatalf("%T: peer sizes %d, %d", in, ra.PeerSize, rb.PeerSize)
		}
	}

	parties := []string{"hub", "s1", "s2"}
	sets := map[string][][]byte{"hub": a, "s1": b, "s2": slices.Concat(a[:150], b[:150])}
	nets := newMemNets(parties...)
	got := map[string]*Result{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, p := range parties {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := RunAlign(ctx, nets[p], "hub", parties, Config{Mode: ModeOT}, sets[p])
			if err != nil {
				t.Errorf("%s: %v", p, err)
				return
			}
			mu.Lock()
			got[p] = res
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, p := range parties {
		want := plain(sets[p], sets["hub"])
		for _, q := range parties {
			want = slices.DeleteFunc(want, func(i int) bool { return len(plain([][]byte{sets[p][i]}, sets[q])) == 0 })
		}
		if got[p] == nil || !slices.Equal(got[p].Indices, want) {
			t.Fatalf("Align at %s: got %v, want %v", p, got[p], want)
		}
	}
}
