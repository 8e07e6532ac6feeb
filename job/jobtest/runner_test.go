package jobtest_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/job/jobtest"
	jobrun "github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/wire"
)

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

// panicValue is what the panicking party's session panics with: data the
// panic must not carry out of the member.
const panicValue = "panic-holds-row-42-of-b"

// A session that panics ends its member's attempt, not its node (here:
// the test process, which a panic would end): the step fails naming the
// party and the step, not the panic's value, and the session is closed.
func TestRunSessionPanicIsTheStepsError(t *testing.T) {
	spec, opts, _ := countJob(t, abc...)
	k := &countKind{steps: 1, exchange: true, panicking: "b", calls: newCalls()}
	rep, err := run(t, k, spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !k.panicked.Load() {
		t.Fatal("b's session never panicked: the check checks nothing")
	}
	var why string
	for _, rec := range rep.Records() {
		if f, ok := rec.Failed["b"]; ok {
			why = f
		}
	}
	if !strings.Contains(why, "failed unexpectedly") || !strings.Contains(why, "count/0") {
		t.Fatalf("b's failure %q, want the step's unexpected failure", why)
	}
	if held := rep.LogHolding([]byte(panicValue)); len(held) > 0 {
		t.Fatalf("the log holds the panic's value (%s)", held[0].Op)
	}
	if held := rep.SentHolding([]byte(panicValue)); len(held) > 0 {
		t.Fatalf("a message holds the panic's value (from %s)", held[0].From)
	}
	if k.calls.opens["b"] != 1 || k.calls.closes["b"] != 1 {
		t.Fatalf("b opened %d sessions and closed %d, want the panicked one closed once", k.calls.opens["b"], k.calls.closes["b"])
	}
}

// A Coordinate that panics (on bytes from a member it failed to refuse,
// say) fails the job instead of ending the leader's node, and with it,
// as each new leader reruns the job, every member's: the failure is
// committed, names no panic value, and no member ran a second attempt.
func TestRunCoordinatePanicFailsTheJob(t *testing.T) {
	spec, opts, _ := countJob(t, abc...)
	k := &countKind{steps: 2, coordinatePanics: true, calls: newCalls()}
	rep, err := run(t, k, spec, opts)
	if err == nil || !strings.Contains(err.Error(), "coordination failed unexpectedly") {
		t.Fatalf("err = %v, want the coordination's unexpected failure", err)
	}
	if strings.Contains(err.Error(), panicValue) {
		t.Fatalf("the job's error %q holds the panic's value", err)
	}
	if held := rep.LogHolding([]byte(panicValue)); len(held) > 0 {
		t.Fatalf("the log holds the panic's value (%s)", held[0].Op)
	}
	if got := ops(rep); got[len(got)-1] != "fail" {
		t.Fatalf("log %v, want the job's failure committed last", got)
	}
	if k.calls.coordinate != 1 {
		t.Fatalf("Coordinate ran %d times, want once", k.calls.coordinate)
	}
}
