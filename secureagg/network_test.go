package secureagg

import (
	"context"
	"sync"
	"testing"

	"github.com/cohortdm/cohort/wire"
)

// memNetwork is a Network in memory, apart from the job runtime: one
// queue per sender, recipient, channel and type, and a record of what
// each message was sent as disclosing.
type memNetwork struct {
	self    string
	channel string
	hub     *memHub
}

type memKey struct{ from, to, channel, typ string }

type memHub struct {
	mu        sync.Mutex
	queues    map[memKey]chan []byte
	disclosed map[wire.Disclosure]int
}

func newMemHub() *memHub {
	return &memHub{queues: map[memKey]chan []byte{}, disclosed: map[wire.Disclosure]int{}}
}

func (h *memHub) queue(k memKey) chan []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	q, ok := h.queues[k]
	if !ok {
		q = make(chan []byte, 1024)
		h.queues[k] = q
	}
	return q
}

func (h *memHub) party(name string) Network { return memNetwork{self: name, hub: h} }

func (n memNetwork) Self() string { return n.self }

func (n memNetwork) Send(ctx context.Context, to, typ string, body []byte, d wire.Disclosure) error {
	n.hub.mu.Lock()
	n.hub.disclosed[d]++
	n.hub.mu.Unlock()
	select {
	case n.hub.queue(memKey{n.self, to, n.channel, typ}) <- append([]byte(nil), body...):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (n memNetwork) Receive(ctx context.Context, from, typ string) ([]byte, error) {
	select {
	case b := <-n.hub.queue(memKey{from, n.self, n.channel, typ}):
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (n memNetwork) Sub(channel string) Network {
	if n.channel != "" {
		channel = n.channel + "/" + channel
	}
	return memNetwork{self: n.self, channel: channel, hub: n.hub}
}

// The aggregation needs no job runtime: over a Network in memory every
// party gets the sum on either backend (the lattice one sends its blobs'
// parts and each quorum's shares on sub-channels), and every message was
// sent as disclosing ciphertexts, decryption shares, control or the public
// result.
func TestAggregateOverMemoryNetwork(t *testing.T) {
	t.Parallel()
	paillierC := testConsortium(t, 4)
	latticeC, latticeKeys := latticeConsortium(t, 4)
	for _, tc := range []struct {
		name   string
		c      *consortium
		cfg    func(name string) Config
		length int
	}{
		{"paillier", paillierC, func(n string) Config { return testConfig(paillierC, n) }, 6},
		{"lattice", latticeC, func(n string) Config { return latticeConfig(latticeKeys, n) }, 9000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hub := newMemHub()
			in, want := exactInputs(tc.c, tc.length, 11)
			step := testStep(tc.c, "org01")
			out := runEach(step.Parties, func(ctx context.Context, name string) (*Result, error) {
				return aggregate(ctx, hub.party(name), step, tc.cfg(name), in[name])
			})
			for _, name := range tc.c.names {
				if out[name].err != nil {
					t.Fatalf("%s: %v", name, out[name].err)
				}
				checkSum(t, out[name].res.Sum, want, 1e-3)
			}
			allowed := map[wire.Disclosure]bool{wire.DiscloseCiphertext: true, wire.DiscloseDecryptionShare: true,
				wire.DiscloseControl: true, wire.DisclosePublicResult: true}
			for d, n := range hub.disclosed {
				if !allowed[d] {
					t.Errorf("%d messages sent as disclosing %v", n, d)
				}
			}
			if hub.disclosed[wire.DiscloseCiphertext] == 0 || hub.disclosed[wire.DiscloseDecryptionShare] == 0 {
				t.Errorf("no ciphertexts or no decryption shares sent: %v", hub.disclosed)
			}
		})
	}
}
