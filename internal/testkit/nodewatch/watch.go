// Package nodewatch captures what a kind's sessions send, output, commit
// and log over real nodes, for the kinds' leakage tests, and lets a test
// make the coordinator or a member hostile. Only tests import it.
package nodewatch

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Watch wraps a kind at every node: each party's sends and step
// outputs, and each coordinator's committed decisions and failures, go
// into a Capture (see Capture.Registry).
type Watch struct {
	job.Kind
	c *Capture
	// Lead, when set, coordinates instead of the kind.
	Lead func(context.Context, job.Coordinator) (job.Result, error)
	// Corrupt, when set, rewrites every message party Corrupter sends.
	Corrupter string
	Corrupt   func(*wire.Message) *wire.Message
}

// Capture is what the watched nodes did since the last Reset.
type Capture struct {
	Mu        sync.Mutex
	Sent      []Sent
	Outputs   []Output // every step output of every party
	Decisions [][]byte // every committed decision (nil for a failed step)
	Committed []int    // the attempt each decision committed, in order
	Failures  []string // every party error and committed failure text
	Logs      bytes.Buffer
	// LogBytes counts every log byte since the capture began (Reset
	// leaves it), so a test can check that the nodes logged at all.
	LogBytes int
}

// Output is one party's output of one step attempt. Under load a step
// may run in more than one attempt (a leader change), each with its own
// messages; tests check the committed attempt's.
type Output struct {
	Job     string
	Party   string
	Phase   string
	Round   int
	Attempt int
	Body    []byte
}

// Sent is one message a party sent.
type Sent struct {
	From, To string
	M        *wire.Message
	D        wire.Disclosure
}

// Registry gives every node kind name as w, capturing into c.
func (c *Capture) Registry(name string, w Watch) func(string) job.Registry {
	w.c = c
	return func(string) job.Registry { return job.Registry{name: w} }
}

// Logger captures every node's log records as JSON lines.
func (c *Capture) Logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(lockedWriter{c}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type lockedWriter struct{ c *Capture }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.c.Mu.Lock()
	defer w.c.Mu.Unlock()
	w.c.LogBytes += len(b)
	return w.c.Logs.Write(b)
}

// Reset forgets what was captured.
func (c *Capture) Reset() {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	c.Sent, c.Outputs, c.Decisions, c.Committed, c.Failures = nil, nil, nil, nil, nil
	c.Logs.Reset()
}

func (w Watch) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	s, err := w.Kind.Open(ctx, &hookedParty{Participant: p, w: w})
	if err != nil {
		return nil, err
	}
	return &hookedSession{Session: s, c: w.c, party: p.Self()}, nil
}

func (w Watch) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	hc := &hookedCoordinator{Coordinator: c, c: w.c}
	if w.Lead != nil {
		return w.Lead(ctx, hc)
	}
	return w.Kind.Coordinate(ctx, hc)
}

type hookedParty struct {
	job.Participant
	w Watch
}

func (h *hookedParty) Send(ctx context.Context, to string, m *wire.Message, d wire.Disclosure) error {
	if h.w.Corrupt != nil && h.Self() == h.w.Corrupter {
		m = h.w.Corrupt(m)
	}
	h.w.c.Mu.Lock()
	h.w.c.Sent = append(h.w.c.Sent, Sent{h.Self(), to, m, d})
	h.w.c.Mu.Unlock()
	return h.Participant.Send(ctx, to, m, d)
}

type hookedSession struct {
	job.Session
	c     *Capture
	party string
}

func (h *hookedSession) Step(ctx context.Context, step job.Step) ([]byte, error) {
	out, err := h.Session.Step(ctx, step)
	h.c.Mu.Lock()
	h.c.Outputs = append(h.c.Outputs, Output{Job: step.Job, Party: h.party, Phase: step.Phase, Round: step.Round, Attempt: step.Attempt, Body: out})
	if err != nil {
		h.c.Failures = append(h.c.Failures, err.Error())
	}
	h.c.Mu.Unlock()
	return out, err
}

type hookedCoordinator struct {
	job.Coordinator
	c *Capture
}

func (h *hookedCoordinator) Start(ctx context.Context, step job.Step) (job.Attempt, error) {
	a, err := h.Coordinator.Start(ctx, step)
	if err != nil {
		return nil, err
	}
	return &hookedAttempt{Attempt: a, c: h.c}, nil
}

type hookedAttempt struct {
	job.Attempt
	c *Capture
}

func (h *hookedAttempt) Commit(ctx context.Context, outs *job.Outputs, decision []byte, failure string) (*job.Record, error) {
	h.c.Mu.Lock()
	h.c.Decisions = append(h.c.Decisions, decision)
	h.c.Committed = append(h.c.Committed, h.Step().Attempt)
	if failure != "" {
		h.c.Failures = append(h.c.Failures, failure)
	}
	for _, why := range outs.Failed {
		h.c.Failures = append(h.c.Failures, why)
	}
	h.c.Mu.Unlock()
	return h.Attempt.Commit(ctx, outs, decision, failure)
}

// Uses forwards the wrapped kind's declaration of what it discloses
// (job.Discloser), so a node's policy checks the watched kind as it would
// the kind itself.
func (w Watch) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	d, ok := w.Kind.(job.Discloser)
	if !ok {
		return nil, errors.New("nodewatch: the watched kind declares no uses")
	}
	return d.Uses(spec, party)
}
