// Package jobtest runs job kinds in memory on the node's own runtime
// (package job/runner): it plugs an in-memory log and an in-memory network
// with fault injection into the runtime's Coordinator and Worker, as
// hashicorp/raft's InmemTransport plugs into NewRaft, so that a kind is
// tested, faults injected and its traffic and log checked against its
// leakage profile in one process, on the code that runs it on real nodes.
// Every job must still have an end-to-end test over real nodes (package
// sim).
//
// # Network
//
// Messages travel as their wire encoding (wire.Encode then
// wire.Decode), so a receiver never shares memory with the sender, sizes
// are the real encoded sizes, and a message that would not survive the wire
// fails here too. Each party has a mailbox (package internal/mailbox, the
// node's own) keyed by (sender, wire.Key), so a Receive matches a
// message that arrived before it was called. Drop, Delay and Intercept make
// a party crash, hang, lag or cheat; Capture records what it sends.
//
// # Whole jobs
//
// Run submits the spec and seed to a fresh in-memory log, runs the
// runtime's Coordinator on the leader and the runtime's Worker on every
// party. The log holds the runtime's entries (runner.Entry), encoded when
// committed, so a test can search the bytes every member would hold.
//
// Faults come from ordinary test code, as with hashicorp/raft's in-memory
// transport and fuzzy hooks: set them on the Network before Run (a party
// hung with DropHang, or delayed past the step's timeout, is silent; one
// dropped with DropFail is unreachable and ends the attempt at once), or
// return them from Options.OnStep, which sees every attempt as it starts
// and every step as it is committed, or Options.OnSend, which sees every
// message as it is sent:
//
//	rep, err := jobtest.Run(ctx, sum.Kind{}, spec, jobtest.Options{
//		Secrets: secrets,
//		OnStep: func(ev jobtest.Event) jobtest.Fault {
//			if ev.Kind == jobtest.Starting && ev.Step.Attempt == 1 {
//				return jobtest.Fault{Leader: "org02"} // the step re-runs as attempt 2
//			}
//			return jobtest.Fault{}
//		},
//	})
//
// A leader change cancels the running coordinator and refuses its commits
// (a term, as raft's); the new leader runs the job from the top against
// the same log. A restart closes a party's session; the fresh one is opened
// at its next step and must rebuild from its tables, the seed and History.
// A malicious coordinator is a Kind whose Coordinate misbehaves and whose
// Open is the honest kind's: the parties run the honest sessions.
//
// The Report holds the result, every log entry and every message sent (as
// sent, before tampering), and every output a party reported, so a test
// can check a leakage profile: SentOutside lists messages whose disclosure
// the profile does not allow, LogHolding and SentHolding find bytes (a
// party's output, its local value) where they must not be.
//
// What differs from a node is the plumbing under the runtime: a send to
// oneself is captured and counted (a node neither audits nor counts it);
// unreachability is seen at once rather than after probes; messages for
// superseded attempts are kept in mailboxes nobody reads rather than
// refused; the result is the kind's own job.Result (Report.Result).
package jobtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cohortdm/cohort/internal/mailbox"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// ErrDropped is returned to a dropped party and to anyone sending to it.
var ErrDropped = errors.New("jobtest: party dropped")

// DropMode says how a dropped party misbehaves.
type DropMode int

const (
	// DropNone: the party works normally.
	DropNone DropMode = iota
	// DropFail: the party's Send and Receive fail at once with ErrDropped,
	// and sends to it fail too (a crashed node: connection refused).
	DropFail
	// DropHang: the party's Send and Receive block until their context ends,
	// and messages sent to it vanish (a node that stopped responding).
	DropHang
)

// Sent is one captured outgoing message.
type Sent struct {
	From, To   string
	Message    *wire.Message
	Disclosure wire.Disclosure
	Bytes      int // encoded size on the wire, framing included
}

// Tamper rewrites an outgoing message of a party before delivery. It gets a
// copy it may modify; returning nil silently loses the message.
type Tamper func(to string, m *wire.Message) *wire.Message

type partyState struct {
	drop     DropMode
	tamper   Tamper
	delay    time.Duration
	capture  bool
	captured []Sent
	bytes    int64
	messages int
}

// Network connects a fixed set of named in-memory parties. All methods are
// safe for concurrent use.
type Network struct {
	mu      sync.Mutex
	parties map[string]*partyState
	boxes   map[string]*mailbox.Box // each party's incoming messages
	// arrived is closed and replaced whenever a message is delivered, waking
	// every waiting Receive to recheck its mailbox.
	arrived chan struct{}
	// observe, when set, sees every message as it is sent (Run's OnSend).
	observe func(Sent)
}

// NewNetwork returns a network of the named parties.
func NewNetwork(names ...string) *Network {
	n := &Network{
		parties: make(map[string]*partyState, len(names)),
		boxes:   make(map[string]*mailbox.Box, len(names)),
		arrived: make(chan struct{}),
	}
	for _, name := range names {
		n.parties[name] = &partyState{}
		n.boxes[name] = mailbox.New(0)
	}
	return n
}

// Party returns the named party's view of the network. It panics on a name
// not given to NewNetwork, which is a bug in the test.
func (n *Network) Party(name string) job.Party {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.parties[name]; !ok {
		panic(fmt.Sprintf("jobtest: unknown party %q", name))
	}
	return &party{net: n, name: name}
}

func (n *Network) state(name string) *partyState {
	s, ok := n.parties[name]
	if !ok {
		panic(fmt.Sprintf("jobtest: unknown party %q", name))
	}
	return s
}

// Drop makes a party misbehave as mode says (DropNone restores it).
func (n *Network) Drop(name string, mode DropMode) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.state(name).drop = mode
	n.wake()
}

// Intercept installs f on a party's outgoing messages (nil removes it).
func (n *Network) Intercept(name string, f Tamper) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.state(name).tamper = f
}

// Delay makes every message a party sends take d to arrive (0 restores
// it): Send blocks for d before delivering, as a send over a slow link
// returns only once the peer has the message, and a send whose context ends
// first fails and delivers nothing. Use it to make a party late for a step.
func (n *Network) Delay(name string, d time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.state(name).delay = d
}

// Capture starts recording a party's outgoing messages as sent, before any
// tampering, for leakage tests.
func (n *Network) Capture(name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.state(name).capture = true
}

// Captured returns the messages captured for a party so far.
func (n *Network) Captured(name string) []Sent {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]Sent(nil), n.state(name).captured...)
}

// BytesSent returns how many encoded bytes a party has sent (framing included).
func (n *Network) BytesSent(name string) int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.state(name).bytes
}

// MessagesSent returns how many messages a party has sent.
func (n *Network) MessagesSent(name string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.state(name).messages
}

// ResetCounters zeroes the byte and message counters and the captures, for
// benchmarks that measure one round at a time.
func (n *Network) ResetCounters() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, s := range n.parties {
		s.bytes, s.messages, s.captured = 0, 0, nil
	}
}

// names returns the network's parties, sorted.
func (n *Network) names() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.parties))
	for name := range n.parties {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// setObserver makes f see every message as it is sent (nil removes it).
func (n *Network) setObserver(f func(Sent)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.observe = f
}

// failed returns the first of names, other than skip, dropped with
// DropFail ("" if none), and a channel closed at the next change of any
// party's mode or the next delivery.
func (n *Network) failed(names []string, skip string) (string, <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, name := range names {
		if name != skip && n.state(name).drop == DropFail {
			return name, n.arrived
		}
	}
	return "", n.arrived
}

// wake releases every waiting Receive; n.mu must be held.
func (n *Network) wake() {
	close(n.arrived)
	n.arrived = make(chan struct{})
}

type party struct {
	net  *Network
	name string
}

func (p *party) Self() string { return p.name }

// hang blocks until ctx ends, like a call to a node that stopped answering.
func hang(ctx context.Context) error {
	<-ctx.Done()
	return fmt.Errorf("jobtest: %w", ctx.Err())
}

// Send delivers m to party to after a wire round trip.
func (p *party) Send(ctx context.Context, to string, m *wire.Message, disclosure wire.Disclosure) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("jobtest: send %s to %s: %w", m.Type, to, err)
	}
	if m.From != p.name {
		return fmt.Errorf("jobtest: %s sends a message claiming to be from %q", p.name, m.From)
	}
	encoded, err := wire.Encode(m)
	if err != nil {
		return fmt.Errorf("jobtest: send %s to %s: %w", m.Type, to, err)
	}
	n := p.net
	n.mu.Lock()
	self := n.state(p.name)
	switch self.drop {
	case DropFail:
		n.mu.Unlock()
		return fmt.Errorf("jobtest: %s send %s: %w", p.name, m.Type, ErrDropped)
	case DropHang:
		n.mu.Unlock()
		return hang(ctx)
	}
	peer, ok := n.parties[to]
	if !ok {
		n.mu.Unlock()
		return fmt.Errorf("jobtest: %s sends %s to unknown party %q", p.name, m.Type, to)
	}
	if peer.drop == DropFail {
		n.mu.Unlock()
		return fmt.Errorf("jobtest: send %s to %s: %w", m.Type, to, ErrDropped)
	}
	tamper, delay, observe := self.tamper, self.delay, n.observe
	if self.capture {
		c, _ := wire.Decode(encoded) // cannot fail: it was just encoded
		self.captured = append(self.captured, Sent{From: p.name, To: to, Message: c, Disclosure: disclosure, Bytes: len(encoded) + 4})
	}
	n.mu.Unlock()

	if observe != nil {
		c, _ := wire.Decode(encoded) // cannot fail: it was just encoded
		observe(Sent{From: p.name, To: to, Message: c, Disclosure: disclosure, Bytes: len(encoded) + 4})
	}

	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("jobtest: %s send %s to %s, delayed %v: %w", p.name, m.Type, to, delay, ctx.Err())
		}
	}
	if tamper != nil {
		c, err := wire.Decode(encoded)
		if err != nil {
			return fmt.Errorf("jobtest: send %s to %s: %w", m.Type, to, err)
		}
		if c = tamper(to, c); c == nil {
			return nil
		}
		if encoded, err = wire.Encode(c); err != nil {
			return fmt.Errorf("jobtest: tampered %s to %s: %w", m.Type, to, err)
		}
	}
	got, err := wire.Decode(encoded)
	if err != nil {
		return fmt.Errorf("jobtest: send %s to %s: %w", m.Type, to, err)
	}

	n.mu.Lock()
	defer n.mu.Unlock()
	self.bytes += int64(len(encoded) + 4)
	self.messages++
	if peer.drop == DropHang {
		return nil
	}
	if err := n.boxes[to].Put(got); err != nil {
		return fmt.Errorf("jobtest: send %s to %s: %w", m.Type, to, err)
	}
	n.wake()
	return nil
}

// Receive returns the oldest message with key k from party from.
func (p *party) Receive(ctx context.Context, from string, k wire.Key) (*wire.Message, error) {
	n := p.net
	for {
		n.mu.Lock()
		switch n.state(p.name).drop {
		case DropFail:
			n.mu.Unlock()
			return nil, fmt.Errorf("jobtest: %s receive %s: %w", p.name, k.Type, ErrDropped)
		case DropHang:
			n.mu.Unlock()
			return nil, hang(ctx)
		}
		if m, ok := n.boxes[p.name].TryGet(from, k); ok {
			n.mu.Unlock()
			return m, nil
		}
		arrived := n.arrived
		n.mu.Unlock()
		select {
		case <-arrived:
		case <-ctx.Done():
			return nil, fmt.Errorf("jobtest: %s waiting for %s from %s: %w", p.name, k.Type, from, ctx.Err())
		}
	}
}
