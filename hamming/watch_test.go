package hamming

import (
	"bytes"
	"context"
	"log/slog"
	"sync"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
)

// watch wraps the kind at every node: each party's sends and step
// outputs, and each coordinator's committed decisions and failures, go
// into c. lead, when set, coordinates instead of Kind (a hostile
// coordinator over honest sessions); corrupt, when set, rewrites the
// messages of party corrupter (a hostile member).
type watch struct {
	Kind
	c         *capture
	lead      func(context.Context, job.Coordinator) (job.Result, error)
	corrupter string
	corrupt   func(*protocol.Message) *protocol.Message
}

type capture struct {
	mu        sync.Mutex
	sent      []sent
	outputs   [][]byte
	decisions [][]byte
	failures  []string
	logs      bytes.Buffer
}

type sent struct {
	from, to string
	m        *protocol.Message
	d        protocol.Disclosure
}

func (c *capture) registry(w watch) func(string) job.Registry {
	w.c = c
	return func(string) job.Registry { return job.Registry{"hamming": w} }
}

// logger captures every node's log records as JSON lines.
func (c *capture) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(lockedWriter{c}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type lockedWriter struct{ c *capture }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	return w.c.logs.Write(b)
}

func (c *capture) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent, c.outputs, c.decisions, c.failures = nil, nil, nil, nil
	c.logs.Reset()
}

func (w watch) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	s, err := w.Kind.Open(ctx, &hookedParty{Participant: p, w: w})
	if err != nil {
		return nil, err
	}
	return &hookedSession{Session: s, c: w.c}, nil
}

func (w watch) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	hc := &hookedCoordinator{Coordinator: c, c: w.c}
	if w.lead != nil {
		return w.lead(ctx, hc)
	}
	return w.Kind.Coordinate(ctx, hc)
}

type hookedParty struct {
	job.Participant
	w watch
}

func (h *hookedParty) Send(ctx context.Context, to string, m *protocol.Message, d protocol.Disclosure) error {
	if h.w.corrupt != nil && h.Self() == h.w.corrupter {
		m = h.w.corrupt(m)
	}
	h.w.c.mu.Lock()
	h.w.c.sent = append(h.w.c.sent, sent{h.Self(), to, m, d})
	h.w.c.mu.Unlock()
	return h.Participant.Send(ctx, to, m, d)
}

type hookedSession struct {
	job.Session
	c *capture
}

func (h *hookedSession) Step(ctx context.Context, step job.Step) ([]byte, error) {
	out, err := h.Session.Step(ctx, step)
	h.c.mu.Lock()
	h.c.outputs = append(h.c.outputs, out)
	if err != nil {
		h.c.failures = append(h.c.failures, err.Error())
	}
	h.c.mu.Unlock()
	return out, err
}

type hookedCoordinator struct {
	job.Coordinator
	c *capture
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
	c *capture
}

func (h *hookedAttempt) Commit(ctx context.Context, outs *job.Outputs, decision []byte, failure string) (*job.Record, error) {
	h.c.mu.Lock()
	h.c.decisions = append(h.c.decisions, decision)
	if failure != "" {
		h.c.failures = append(h.c.failures, failure)
	}
	for _, why := range outs.Failed {
		h.c.failures = append(h.c.failures, why)
	}
	h.c.mu.Unlock()
	return h.Attempt.Commit(ctx, outs, decision, failure)
}
