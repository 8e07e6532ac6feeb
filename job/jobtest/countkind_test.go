package jobtest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/spectest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/wire"
)

// The kind the runner tests drive (countKind: several steps, sessions that
// fold in history, optional sub-channel exchanges) and the small helpers
// they share live here, apart from the tests, so that runner_test.go holds
// what the runtime must do and this file what it is tested with.

// countKind is a tiny multi-step kind. In round r every party outputs its
// value (its table's column v plus its secret bonus) plus the decisions of
// every earlier round, which its session folds in from each step's args
// and, when opened mid-job, from History; the decision is the sum of the
// outputs. With exchange set, each party also sends every other party its
// value on two sub-channels of the step and checks what it receives.
type countKind struct {
	steps    int
	exchange bool
	// collide runs both exchanges on one channel, as a kind that forgot
	// Step.Sub would: their messages answer each other.
	collide bool
	// forgetful sessions ignore History when opened mid-job.
	forgetful bool
	// nondet names a step field Coordinate derives from how often it has
	// been called, which no replay can reproduce.
	nondet string
	// leaky commits the parties' outputs in the decision.
	leaky bool
	// failing names a party whose exchange fails before it sends
	// anything, while the others wait for its values; timeoutMS is every
	// step's timeout (0: the runtime's).
	failing   string
	timeoutMS int64
	// panicking names a party whose first exchange panics (a kind's
	// bug), with panicValue in the panic.
	panicking string
	panicked  atomic.Bool
	// coordinatePanics makes Coordinate panic once its first step is
	// decided, with panicValue in the panic.
	coordinatePanics bool
	calls            *calls
}

// calls counts what the runtime asked of the kind.
type calls struct {
	mu         sync.Mutex
	coordinate int
	opens      map[string]int
	closes     map[string]int
	steps      map[string][]string // per party: "round/attempt" of each Step call
	histories  map[string][]int    // per party: len(History) at each Open
}

func newCalls() *calls {
	return &calls{opens: map[string]int{}, closes: map[string]int{}, steps: map[string][]string{}, histories: map[string][]int{}}
}

type countArgs struct {
	Prev int64 `msgpack:"prev"` // the previous round's decision
	Salt int64 `msgpack:"salt"` // from the job's seed
	Call int   `msgpack:"call"`
}

type countOutput struct {
	Private string `msgpack:"private"` // a marker that must never reach the log
	N       int64  `msgpack:"n"`
}

type countDecision struct {
	Total   int64    `msgpack:"total"`
	Outputs [][]byte `msgpack:"outputs"` // only a leaky kind fills it
}

const (
	discloseValue  wire.Disclosure = "count-value"
	discloseOutput wire.Disclosure = "count-output"
)

func (k *countKind) Validate(*job.Spec) error { return nil }

func (k *countKind) OutputDisclosure(job.Step) wire.Disclosure { return discloseOutput }

func salt(seed []byte) int64 { return job.Rand(seed, "count/salt").Int64N(1 << 40) }

func (k *countKind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	k.calls.mu.Lock()
	k.calls.coordinate++
	call := k.calls.coordinate
	k.calls.mu.Unlock()
	var prev int64
	for r := 0; r < k.steps; r++ {
		a := countArgs{Prev: prev, Salt: salt(c.Seed())}
		// The runtime clears Channel: it is not part of the committed step.
		step := job.Step{Phase: "count", Round: r, Channel: "not-committed", TimeoutMS: k.timeoutMS}
		switch k.nondet {
		case "args":
			a.Call = call
		case "parties":
			step.Parties = c.Spec().PartyNames()[call-1:]
		case "timeout_ms":
			step.TimeoutMS = int64(5000 + call)
		}
		var err error
		if step.Args, err = wire.Marshal(&a); err != nil {
			return nil, err
		}
		d, err := runUntyped(ctx, c, step, func(outs *job.Outputs) (countDecision, error) {
			var d countDecision
			for _, p := range slices.Sorted(func(yield func(string) bool) {
				for p := range outs.Results {
					if !yield(p) {
						return
					}
				}
			}) {
				var o countOutput
				if err := wire.Unmarshal(outs.Results[p], &o); err != nil {
					return d, fmt.Errorf("output of %s: %w", p, err)
				}
				d.Total += o.N
				if k.leaky {
					d.Outputs = append(d.Outputs, outs.Results[p])
				}
			}
			return d, nil
		})
		if err != nil {
			return nil, err
		}
		if k.coordinatePanics {
			panic(panicValue)
		}
		prev = d.Total
	}
	return job.Result{"total": prev}, nil
}

// runUntyped runs one step on the Coordinator interface itself, below
// job.Round, so that the tests can set fields a Round does not expose (a
// Channel the runtime must clear) and see the raw outputs.
func runUntyped[D any](ctx context.Context, c job.Coordinator, step job.Step, decide func(*job.Outputs) (D, error)) (D, error) {
	var d D
	a, err := c.Start(ctx, step)
	if err != nil {
		return d, err
	}
	if rec := a.Record(); rec != nil {
		return d, wire.Unmarshal(rec.Decision, &d)
	}
	outs, err := a.Wait(ctx)
	if err != nil {
		return d, err
	}
	if d, err = decide(outs); err != nil {
		return d, err
	}
	b, err := wire.Marshal(&d)
	if err != nil {
		return d, err
	}
	_, err = a.Commit(ctx, outs, b, "")
	return d, err
}

func (k *countKind) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	tables, err := job.LoadTables(ctx, p)
	if err != nil {
		return nil, err
	}
	s := &countSession{k: k, p: p}
	for _, t := range tables {
		c, err := t.Column("v")
		if err != nil {
			return nil, err
		}
		for _, v := range c.Num {
			s.value += int64(v)
		}
	}
	bonus, err := p.Secrets().ReadSecret("bonus")
	if err != nil {
		return nil, err
	}
	b, err := strconv.ParseInt(strings.TrimSpace(string(bonus)), 10, 64)
	if err != nil {
		return nil, err
	}
	s.value += b
	h := p.History()
	if !k.forgetful {
		for _, rec := range h {
			var d countDecision
			if err := wire.Unmarshal(rec.Decision, &d); err != nil {
				return nil, err
			}
			s.acc += d.Total
			s.folded++
		}
	}
	k.calls.mu.Lock()
	k.calls.opens[p.Self()]++
	k.calls.histories[p.Self()] = append(k.calls.histories[p.Self()], len(h))
	k.calls.mu.Unlock()
	return s, nil
}

type countSession struct {
	k      *countKind
	p      job.Participant
	value  int64
	acc    int64 // the decisions of rounds < folded
	folded int
}

func (s *countSession) Step(ctx context.Context, step job.Step) ([]byte, error) {
	s.k.calls.mu.Lock()
	s.k.calls.steps[s.p.Self()] = append(s.k.calls.steps[s.p.Self()], fmt.Sprintf("%d/%d", step.Round, step.Attempt))
	s.k.calls.mu.Unlock()
	if step.Channel != "" || step.Job != s.p.JobID() {
		return nil, fmt.Errorf("step arrived with channel %q, job %q", step.Channel, step.Job)
	}
	var a countArgs
	if err := wire.Unmarshal(step.Args, &a); err != nil {
		return nil, err
	}
	if a.Salt != salt(s.p.Seed()) {
		return nil, errors.New("the coordinator's seed is not the party's")
	}
	if s.folded < step.Round {
		s.acc += a.Prev
		s.folded = step.Round
	}
	if s.k.exchange {
		if err := s.exchangeValues(ctx, step); err != nil {
			return nil, err
		}
	}
	return wire.Marshal(&countOutput{Private: "private-" + s.p.Self(), N: s.value + s.acc})
}

// exchangeValues sends every other party value+1000 on channel hi, then
// value on channel lo, and receives lo before hi: were the channels one,
// lo's receive would get the hi message.
func (s *countSession) exchangeValues(ctx context.Context, step job.Step) error {
	lo, hi := step.Sub("lo"), step.Sub("hi")
	if s.p.Self() == s.k.failing {
		return errors.New("the failing party's own error")
	}
	if s.p.Self() == s.k.panicking && s.k.panicked.CompareAndSwap(false, true) {
		panic(panicValue)
	}
	if s.k.collide {
		hi = lo
	}
	for _, peer := range step.Parties {
		if peer == s.p.Self() {
			continue
		}
		for _, m := range []struct {
			st job.Step
			v  int64
		}{{hi, s.value + 1000}, {lo, s.value}} {
			body, err := wire.Marshal(m.v)
			if err != nil {
				return err
			}
			if err := s.p.Send(ctx, peer, m.st.Message(s.p.Self(), "count/value", body), discloseValue); err != nil {
				return err
			}
		}
	}
	for _, peer := range step.Parties {
		if peer == s.p.Self() {
			continue
		}
		var got [2]int64
		for i, st := range []job.Step{lo, hi} {
			m, err := s.p.Receive(ctx, peer, st.Key("count/value"))
			if err != nil {
				return err
			}
			if err := wire.Unmarshal(m.Body, &got[i]); err != nil {
				return err
			}
		}
		if got[1] != got[0]+1000 {
			return fmt.Errorf("channels collided: %s's lo %d, hi %d", peer, got[0], got[1])
		}
	}
	return nil
}

func (s *countSession) Close() {
	s.k.calls.mu.Lock()
	s.k.calls.closes[s.p.Self()]++
	s.k.calls.mu.Unlock()
}

// countJob writes the parties' tables and secrets and returns the spec,
// the options giving each its secrets, and each party's value.
func countJob(t *testing.T, parties ...string) (*job.Spec, jobtest.Options, []int64) {
	t.Helper()
	dir := t.TempDir()
	var spec strings.Builder
	spec.WriteString("kind: count\nparties:\n")
	opts := jobtest.Options{Secrets: map[string]job.Secrets{}, Seed: []byte("count-test-seed")}
	var values []int64
	for i, name := range parties {
		csv := fmt.Sprintf("id,v\n1,%d\n2,%d\n", i+1, 2*(i+1))
		if err := os.WriteFile(filepath.Join(dir, name+".csv"), []byte(csv), 0o644); err != nil {
			t.Fatal(err)
		}
		data := filepath.Join(t.TempDir(), name)
		if err := os.MkdirAll(data, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(data, "bonus"), []byte(fmt.Sprint(100*(i+1))), 0o600); err != nil {
			t.Fatal(err)
		}
		opts.Secrets[name] = jobtest.DirSecrets(data)
		values = append(values, int64(103*(i+1)))
		fmt.Fprintf(&spec, "  - name: %s\n    tables: [{name: t, path: %s.csv}]\n", name, name)
	}
	spec.WriteString("schema:\n  t: {id: id, v: numeric}\n")
	s := spectest.Write(t, filepath.Join(dir, "spec.yaml"), spec.String())
	return s, opts, values
}

// wantTotal is countKind's result computed in the clear.
func wantTotal(values []int64, steps int) int64 {
	var v int64
	for _, x := range values {
		v += x
	}
	var past, d int64
	for r := 0; r < steps; r++ {
		d = v + int64(len(values))*past
		past += d
	}
	return d
}

func run(t *testing.T, k job.Kind, spec *job.Spec, opts jobtest.Options) (*jobtest.Report, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return jobtest.Run(ctx, k, spec, opts)
}

func ops(rep *jobtest.Report) []string {
	var out []string
	for _, e := range rep.Log {
		s := e.Op
		if e.Step != nil {
			s += fmt.Sprintf(" %s/%d#%d@%s", e.Step.Phase, e.Step.Round, e.Step.Attempt, e.Step.Coordinator)
		}
		if e.Record != nil {
			s += fmt.Sprintf(" %s/%d#%d@%s", e.Record.Step.Phase, e.Record.Step.Round, e.Record.Step.Attempt, e.Record.Coordinator)
		}
		out = append(out, s)
	}
	return out
}

var abc = []string{"a", "b", "c"}
