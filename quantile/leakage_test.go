package quantile

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// watch wraps the kind: every Send and step output of the watched party is
// recorded with the round's args, and every decision any coordinator
// commits, into c. lead, when set, coordinates instead of Kind (a
// misbehaving coordinator over honest sessions).
type watch struct {
	Kind
	watched string
	c       *capture
	lead    func(context.Context, job.Coordinator) (job.Result, error)
}

// capture is what a watch recorded of the jobs since its last reset.
type capture struct {
	mu        sync.Mutex
	sent      []sentMessage
	outputs   [][]byte
	outSteps  map[string]bool // the (phase, round) of each output: a retried step answers twice
	args      []*args
	decisions []committed
}

type sentMessage struct {
	m *wire.Message
	d wire.Disclosure
}

type committed struct {
	phase    string
	args     []byte
	decision []byte // nil when the step failed
	// reported are the parties whose output carried the digest of the
	// counts they received: on a loaded machine a party's report may come
	// after the result was formed, and then it vouches for nothing.
	reported []string
}

// registry gives every node the kind, watched at party watched.
func (c *capture) registry(watched string, lead func(context.Context, job.Coordinator) (job.Result, error)) func(string) job.Registry {
	return func(string) job.Registry { return job.Registry{"quantile": watch{watched: watched, c: c, lead: lead}} }
}

func (c *capture) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent, c.outputs, c.outSteps, c.args, c.decisions = nil, nil, nil, nil, nil
}

func (w watch) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	if p.Self() != w.watched {
		return w.Kind.Open(ctx, p)
	}
	s, err := w.Kind.Open(ctx, &hookedParty{Participant: p, c: w.c})
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
	c *capture
}

func (h *hookedParty) Send(ctx context.Context, to string, m *wire.Message, d wire.Disclosure) error {
	h.c.mu.Lock()
	h.c.sent = append(h.c.sent, sentMessage{m, d})
	h.c.mu.Unlock()
	return h.Participant.Send(ctx, to, m, d)
}

type hookedSession struct {
	job.Session
	c *capture
}

func (h *hookedSession) Step(ctx context.Context, step job.Step) ([]byte, error) {
	var a *args
	if step.Phase == count.Phase {
		ca, err := count.Args(step)
		if err != nil {
			return nil, err
		}
		a = &ca
	}
	out, err := h.Session.Step(ctx, step)
	h.c.mu.Lock()
	if a != nil {
		h.c.args = append(h.c.args, a)
	}
	h.c.outputs = append(h.c.outputs, out)
	if h.c.outSteps == nil {
		h.c.outSteps = map[string]bool{}
	}
	h.c.outSteps[fmt.Sprint(step.Phase, "/", step.Round)] = true
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
	var reported []string
	for _, name := range slices.Sorted(maps.Keys(outs.Results)) {
		var o output
		if wire.Unmarshal(outs.Results[name], &o) == nil && len(o.Counts) > 0 {
			reported = append(reported, name)
		}
	}
	h.c.mu.Lock()
	h.c.decisions = append(h.c.decisions, committed{phase: h.Step().Phase, args: h.Step().Args, decision: decision, reported: reported})
	h.c.mu.Unlock()
	return h.Attempt.Commit(ctx, outs, decision, failure)
}

// checkSent checks what the watched party sent and output against the
// leakage profile: only ciphertexts, decryption shares, the public result
// and control, and neither messages nor step outputs carry its values
// (own), its row count or its counts in any plain encoding.
func (c *capture) checkSent(t *testing.T, own, pooled []float64) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	needles := needles(t, own, pooled, c.args)
	for _, s := range c.sent {
		switch s.d {
		case wire.DiscloseCiphertext, wire.DiscloseDecryptionShare, wire.DiscloseSecretShare, wire.DisclosePublicResult, wire.DiscloseControl:
		default:
			t.Errorf("message %s discloses %q", s.m.Type, s.d)
		}
		for _, nd := range needles {
			if bytes.Contains(s.m.Body, nd) {
				t.Errorf("message %s carries the party's data (%x)", s.m.Type, nd)
			}
		}
	}
	for _, out := range c.outputs {
		for _, nd := range needles {
			if bytes.Contains(out, nd) {
				t.Errorf("a step output carries the party's data (%x)", nd)
			}
		}
	}
}

// checkDecisions checks that each committed count decision is exactly the
// pooled counts at its round's thresholds, vouched for by every party that
// reported the counts it received (all of them unless one was late), and
// that a release's decision says only that it was released; a failed step
// commits no decision.
func (c *capture) checkDecisions(t *testing.T, pooled []float64, parties []string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cm := range c.decisions {
		if cm.decision == nil {
			continue
		}
		if cm.phase == releaseRound.Phase {
			var d releaseDecision
			if err := wire.Unmarshal(cm.decision, &d); err != nil || !d.Released || len(d.Retry) > 0 {
				t.Errorf("release decision %+v (%v), want released", d, err)
			}
			continue
		}
		a, err := count.Args(job.Step{Phase: count.Phase, Args: cm.args})
		if err != nil {
			t.Fatal(err)
		}
		var d decision
		if err := wire.Unmarshal(cm.decision, &d); err != nil {
			t.Fatal(err)
		}
		want := make([]int64, 0, a.slots())
		for _, v := range counts(pooled, &a) {
			want = append(want, int64(v))
		}
		if !slices.Equal(d.Counts, want) || len(d.Retry) > 0 || !slices.Equal(d.Vouched, cm.reported) || len(d.Vouched) < 2 {
			t.Errorf("decision %+v for %+v, want the pooled counts %v vouched for by %v (of %v)", d, a, want, cm.reported, parties)
		}
	}
}

// Leakage: everything the watched party sends is a ciphertext, a
// decryption share, the public result or control, and neither its messages
// nor its step outputs carry its values, its row count or its counts in
// any plain encoding (a count round's output holds the digest of the
// public pooled counts, the release step's only that the policy allowed
// it); every committed decision holds exactly the pooled counts at the
// round's thresholds and the names of the parties that vouched for them,
// or, for the release, only that it was released. The watched party runs
// once as a leaf of the aggregation tree and once as the coordinator.
func TestLeakage(t *testing.T) {
	t.Parallel()
	const watched = "org02"
	columns := mixed()
	// The watched party's values are distinctive, so a plain copy of one
	// cannot be mistaken for random bytes.
	columns[1] = gen(37, 34, func(r *rand.Rand) float64 { return 1234.5678 + math.Round(r.Float64()*1e6)/1e4 })
	qs := []string{"0.1", "0.5", "0.9"}
	spec, names := consortium(t, columns, ", quantiles: [0.1, 0.5, 0.9]")
	var capt capture
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	c := startCluster(t, ctx, spec, names, capt.registry(watched, nil))
	var pooled []float64
	for _, col := range columns {
		pooled = append(pooled, col...)
	}
	slices.Sort(pooled)
	own := slices.Sorted(slices.Values(columns[1]))
	for _, leader := range []string{"org01", watched} {
		t.Run("leader="+leader, func(t *testing.T) {
			if err := c.MakeLeader(ctx, leader); err != nil {
				t.Fatal(err)
			}
			capt.reset()
			_, got := waitJob(t, ctx, c.Node(leader), submit(t, ctx, c.Node(leader), spec))
			check(t, got, columns, qs, 0.01)
			capt.checkSent(t, own, pooled)
			capt.checkDecisions(t, pooled, names)
			capt.mu.Lock()
			defer capt.mu.Unlock()
			// A loaded machine may retry a step: count each step once, and
			// the decisions of attempts that succeeded.
			decided := 0
			for _, d := range capt.decisions {
				if d.decision != nil {
					decided++
				}
			}
			if len(capt.sent) == 0 || len(capt.outSteps) != got.Rounds+1 || decided != got.Rounds+1 {
				t.Fatalf("captured %d messages, outputs of %d steps, %d decisions for %d rounds and the release",
					len(capt.sent), len(capt.outSteps), decided, got.Rounds)
			}
			allowed, err := wire.Marshal(&released{Allowed: true})
			if err != nil {
				t.Fatal(err)
			}
			if last := capt.outputs[len(capt.outputs)-1]; !bytes.Equal(last, allowed) {
				t.Errorf("the release output %x is more than the policy's yes", last)
			}
		})
	}
}

// needles are the plain encodings of a party's values, row count and
// counts that must not leave it: each value as float64 bits (both byte
// orders) and as its decimal; each round's local count vector as msgpack
// floats and integers, unless every count in it is also a public pooled
// count; each local count that differs from every public pooled count as
// float64 bits and as a 64-bit integer.
func needles(t *testing.T, own, pooled []float64, seen []*args) [][]byte {
	t.Helper()
	public := map[float64]bool{}
	for _, a := range seen {
		for _, v := range counts(pooled, a) {
			public[v] = true
		}
	}
	var out [][]byte
	add8 := func(bits uint64) {
		be, le := make([]byte, 8), make([]byte, 8)
		binary.BigEndian.PutUint64(be, bits)
		binary.LittleEndian.PutUint64(le, bits)
		out = append(out, be, le)
	}
	for _, v := range own {
		add8(math.Float64bits(v))
		out = append(out, []byte(strconv.FormatFloat(v, 'g', -1, 64)))
	}
	for _, a := range seen {
		local := counts(own, a)
		if !slices.ContainsFunc(local, func(v float64) bool { return !public[v] }) {
			continue // public numbers only: the same bytes may be a pooled vector
		}
		for _, form := range []any{local, toInts(local)} {
			b, err := wire.Marshal(form)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) > 8 { // a shorter encoding could turn up in random bytes
				out = append(out, b[1:]) // the elements, without the array header
			}
		}
		for _, v := range local {
			if v != 0 && !public[v] {
				add8(math.Float64bits(v))
				add8(uint64(v))
			}
		}
	}
	return out
}

func toInts(v []float64) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}
