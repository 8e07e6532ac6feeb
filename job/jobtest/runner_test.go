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
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/spectest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	jobrun "github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/wire"
)

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
	calls     *calls
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

func TestRunMultiStep(t *testing.T) {
	spec, opts, values := countJob(t, abc...)
	k := &countKind{steps: 3, exchange: true, calls: newCalls()}
	rep, err := run(t, k, spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rep.Result["total"], wantTotal(values, 3); got != want {
		t.Fatalf("total %v, want %d", got, want)
	}
	wantOps := []string{"submit", "start admit/0#1@a", "done admit/0#1@a",
		"start count/0#1@a", "done count/0#1@a", "start count/1#1@a", "done count/1#1@a",
		"start count/2#1@a", "done count/2#1@a", "finish"}
	if got := ops(rep); !slices.Equal(got, wantOps) {
		t.Fatalf("log\n%v\nwant\n%v", got, wantOps)
	}
	// Each session opened at its first step with an empty history, ran
	// every step once in log order and was closed at the end.
	for _, p := range abc {
		if k.calls.opens[p] != 1 || k.calls.closes[p] != 1 || !slices.Equal(k.calls.histories[p], []int{0}) {
			t.Errorf("%s: opened %d, closed %d, histories %v", p, k.calls.opens[p], k.calls.closes[p], k.calls.histories[p])
		}
		if got := k.calls.steps[p]; !slices.Equal(got, []string{"0/1", "1/1", "2/1"}) {
			t.Errorf("%s ran %v", p, got)
		}
	}
	// Outputs travel to the coordinator as messages with the kind's
	// disclosure; the log's last record names them all.
	if len(rep.Outputs) != 9 {
		t.Fatalf("%d outputs, want 9", len(rep.Outputs))
	}
	reports := 0
	for _, s := range rep.Sent {
		if s.Message.Type == "job/output" && s.Message.Phase != jobrun.AdmitPhase {
			reports++
			if s.To != "a" || s.Disclosure != discloseOutput {
				t.Errorf("output of %s went to %s disclosing %s", s.From, s.To, s.Disclosure)
			}
		}
	}
	if reports != 9 {
		t.Errorf("%d output messages, want 9", reports)
	}
	recs := rep.Records()
	if len(recs) != 3 || len(recs[2].Failed) != 0 {
		t.Fatalf("records %+v", recs)
	}
	// No byte counts are committed: what a party sent in a step tells of
	// its data (a PSI's set size), and every member reads the log.
	if held := rep.LogHolding([]byte("bytes")); len(held) != 0 {
		t.Fatalf("%d log entries hold byte counts: %+v", len(held), held[0].Entry)
	}
	if string(rep.Log[0].Seed) != "count-test-seed" || rep.Log[len(rep.Log)-1].Result == nil {
		t.Fatalf("submit or finish entry incomplete: %+v / %+v", rep.Log[0], rep.Log[len(rep.Log)-1])
	}
}

// A leader change at every step boundary, or in the middle of every step,
// gives the result of a run without faults: the new leader replays
// Coordinate from the top, Start answers finished steps from the log, and
// an unfinished step is re-run with the next attempt.
func TestRunLeaderChangeGivesSameResult(t *testing.T) {
	spec, opts, values := countJob(t, abc...)
	want := wantTotal(values, 3)
	next := map[string]string{"a": "b", "b": "z", "z": "c", "c": "a"} // z coordinates without taking part
	for _, tc := range []struct {
		name   string
		at     jobtest.EventKind
		ops    []string
		steps  []string // what every party ran
		leader []string
	}{
		{"between steps", jobtest.Committed,
			[]string{"submit", "start admit/0#1@a", "done admit/0#1@a", "start count/0#1@a", "done count/0#1@a", "start count/1#1@b", "done count/1#1@b",
				"start count/2#1@z", "done count/2#1@z", "finish"},
			[]string{"0/1", "1/1", "2/1"}, []string{"a", "b", "z", "c"}},
		{"during steps", jobtest.Starting,
			[]string{"submit", "start admit/0#1@a", "done admit/0#1@a", "start count/0#1@a", "start count/0#2@b", "done count/0#2@b", "start count/1#1@b",
				"start count/1#2@z", "done count/1#2@z", "start count/2#1@z", "start count/2#2@c", "done count/2#2@c", "finish"},
			nil, []string{"a", "b", "z", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := &countKind{steps: 3, exchange: true, calls: newCalls()}
			o := opts
			o.Members = []string{"z"}
			o.OnStep = func(ev jobtest.Event) jobtest.Fault {
				if ev.Kind == tc.at && ev.Step.Attempt == 1 {
					return jobtest.Fault{Leader: next[ev.Leader]}
				}
				return jobtest.Fault{}
			}
			rep, err := run(t, k, spec, o)
			if err != nil {
				t.Fatal(err)
			}
			if got := rep.Result["total"]; got != want {
				t.Fatalf("total %v, want %d", got, want)
			}
			if got := ops(rep); !slices.Equal(got, tc.ops) {
				t.Fatalf("log\n%v\nwant\n%v", got, tc.ops)
			}
			if !slices.Equal(rep.Leaders, tc.leader) {
				t.Fatalf("leaders %v, want %v", rep.Leaders, tc.leader)
			}
			if k.calls.coordinate != len(tc.leader) {
				t.Fatalf("Coordinate called %d times", k.calls.coordinate)
			}
			for _, p := range abc {
				if tc.steps != nil && !slices.Equal(k.calls.steps[p], tc.steps) {
					t.Errorf("%s ran %v, want %v (a replayed step must not run)", p, k.calls.steps[p], tc.steps)
				}
				if k.calls.opens[p] != 1 {
					t.Errorf("%s opened %d sessions", p, k.calls.opens[p])
				}
			}
		})
	}
}

// A Coordinate that derives a step differently on replay fails the job
// with ErrReplay naming the field, rather than diverging.
func TestRunCatchesNondeterministicKind(t *testing.T) {
	spec, opts, _ := countJob(t, abc...)
	for _, field := range []string{"args", "parties", "timeout_ms"} {
		t.Run(field, func(t *testing.T) {
			k := &countKind{steps: 2, nondet: field, calls: newCalls()}
			o := opts
			o.OnStep = func(ev jobtest.Event) jobtest.Fault {
				if ev.Kind == jobtest.Committed && ev.Leader == "a" {
					return jobtest.Fault{Leader: "b"}
				}
				return jobtest.Fault{}
			}
			rep, err := run(t, k, spec, o)
			if !errors.Is(err, jobrun.ErrReplay) || !strings.Contains(err.Error(), "field "+field) {
				t.Fatalf("err = %v, want ErrReplay naming field %s", err, field)
			}
			last := rep.Log[len(rep.Log)-1]
			if last.Op != jobtest.OpFail || !strings.Contains(last.Error, "field "+field) || rep.Result != nil {
				t.Fatalf("last entry %s %q, result %v", last.Op, last.Error, rep.Result)
			}
		})
	}
	// The same kind without a leader change runs through: only a replay
	// exposes it.
	if _, err := run(t, &countKind{steps: 2, nondet: "args", calls: newCalls()}, spec, opts); err != nil {
		t.Fatal(err)
	}
}

// A party whose node restarts between steps gets a fresh session at its
// next step, which rebuilds what earlier steps taught it from History.
func TestRunRestartRebuildsSession(t *testing.T) {
	spec, opts, values := countJob(t, abc...)
	want := wantTotal(values, 3)
	for _, forgetful := range []bool{false, true} {
		t.Run(fmt.Sprintf("forgetful=%v", forgetful), func(t *testing.T) {
			k := &countKind{steps: 3, exchange: true, forgetful: forgetful, calls: newCalls()}
			o := opts
			o.OnStep = func(ev jobtest.Event) jobtest.Fault {
				if ev.Kind == jobtest.Committed && ev.Step.Round == 1 {
					return jobtest.Fault{Restart: []string{"c"}}
				}
				return jobtest.Fault{}
			}
			rep, err := run(t, k, spec, o)
			if err != nil {
				t.Fatal(err)
			}
			if k.calls.opens["c"] != 2 || k.calls.closes["c"] != 2 || !slices.Equal(k.calls.histories["c"], []int{0, 2}) {
				t.Fatalf("c opened %d, closed %d, histories %v: want a second session opened after two steps",
					k.calls.opens["c"], k.calls.closes["c"], k.calls.histories["c"])
			}
			if k.calls.opens["a"] != 1 {
				t.Fatalf("a opened %d sessions", k.calls.opens["a"])
			}
			got := rep.Result["total"]
			if !forgetful && got != want {
				t.Fatalf("total %v after a restart, want %d", got, want)
			}
			if forgetful && got == want {
				t.Fatalf("a session that ignores History gave the right total %v: the restart did not happen", got)
			}
		})
	}
}

// Two exchanges in one step on sub-channels never answer each other; on
// one channel they do, and the step fails.
func TestRunSubChannels(t *testing.T) {
	spec, opts, values := countJob(t, abc...)
	rep, err := run(t, &countKind{steps: 1, exchange: true, calls: newCalls()}, spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Result["total"]; got != wantTotal(values, 1) {
		t.Fatalf("total %v", got)
	}
	channels := map[string]int{}
	for _, s := range rep.Sent {
		if s.Message.Type == "count/value" {
			channels[s.Message.Channel]++
		}
	}
	if channels["lo"] != 6 || channels["hi"] != 6 || len(channels) != 2 {
		t.Fatalf("messages per channel %v, want 6 on lo and on hi", channels)
	}
	rep, err = run(t, &countKind{steps: 1, exchange: true, collide: true, calls: newCalls()}, spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	failed := rep.Records()[0].Failed
	if len(failed) != 3 || !strings.Contains(failed["a"], "channels collided") {
		t.Fatalf("colliding channels: failed %v", failed)
	}
}

// A party that fails its step while the others wait for its messages
// tells them so: the attempt ends with that party's error alone, long
// before the step's timeout (an hour here; run's context ends after 30 s).
func TestRunPeerFailureEndsTheAttempt(t *testing.T) {
	spec, opts, _ := countJob(t, abc...)
	rep, err := run(t, &countKind{steps: 1, exchange: true, failing: "b", timeoutMS: 3_600_000, calls: newCalls()}, spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	failed := rep.Records()[0].Failed
	if len(failed) != 1 || !strings.Contains(failed["b"], "the failing party's own error") {
		t.Fatalf("failed %v, want b's own error alone (a and c were cut short)", failed)
	}
	told := map[string]bool{}
	for _, s := range rep.Sent {
		if s.Message.Type == jobrun.FailedType {
			if s.Disclosure != wire.DiscloseControl || len(s.Message.Body) != 0 {
				t.Fatalf("%s's failure notice to %s: %s, %d bytes", s.From, s.To, s.Disclosure, len(s.Message.Body))
			}
			told[s.From+">"+s.To] = true
		}
	}
	if !told["b>a"] || !told["b>c"] {
		t.Fatalf("failure notices %v, want b's to a and c", told)
	}
}
