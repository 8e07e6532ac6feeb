package jobtest_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	jobrun "github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/wire"
)

// OnSend injects faults in the middle of a step's protocol: a leader
// change once the parties exchange values, and a party restarted by its own
// output report.
func TestRunFaultsFromSends(t *testing.T) {
	spec, opts, values := countJob(t, abc...)
	want := wantTotal(values, 3)

	k := &countKind{steps: 3, exchange: true, calls: newCalls()}
	o := opts
	changed := false
	o.OnSend = func(s jobtest.Sent) jobtest.Fault {
		if s.Message.Type == "count/value" && s.Message.Round == 1 && !changed {
			changed = true
			return jobtest.Fault{Leader: "b"}
		}
		return jobtest.Fault{}
	}
	rep, err := run(t, k, spec, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Result["total"]; got != want {
		t.Fatalf("total %v after a leader change mid-exchange, want %d", got, want)
	}
	wantOps := []string{"submit", "start admit/0#1@a", "done admit/0#1@a", "start count/0#1@a", "done count/0#1@a", "start count/1#1@a",
		"start count/1#2@b", "done count/1#2@b", "start count/2#1@b", "done count/2#1@b", "finish"}
	if got := ops(rep); !slices.Equal(got, wantOps) {
		t.Fatalf("log\n%v\nwant\n%v", got, wantOps)
	}

	k = &countKind{steps: 3, calls: newCalls()}
	o = opts
	restarted := false
	o.OnSend = func(s jobtest.Sent) jobtest.Fault {
		if s.From == "c" && s.Message.Type == "job/output" && s.Message.Round == 1 && !restarted {
			restarted = true
			return jobtest.Fault{Restart: []string{"c"}}
		}
		return jobtest.Fault{}
	}
	rep, err = run(t, k, spec, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Result["total"]; got != want {
		t.Fatalf("total %v after c restarted while reporting, want %d", got, want)
	}
	if k.calls.opens["c"] != 2 || k.calls.closes["c"] != 2 {
		t.Fatalf("c opened %d sessions, closed %d", k.calls.opens["c"], k.calls.closes["c"])
	}
}

// Drops, hangs, delays and lost or tampered messages end up in the step's
// record as the node's would.
func TestRunNetworkFaults(t *testing.T) {
	spec, opts, values := countJob(t, abc...)
	opts.StepTimeout = 500 * time.Millisecond
	opts.Grace = 100 * time.Millisecond
	for _, tc := range []struct {
		name   string
		setup  func(net *jobtest.Network)
		silent bool   // c is silent
		failed string // c's failure
		quick  bool   // the attempt ends before the step timeout
	}{
		// An unreachable party ends the attempt at once: the others may be
		// cut short too, so only c's fate is checked.
		{"crashed", func(net *jobtest.Network) { net.Drop("c", jobtest.DropFail) }, true, "unreachable", true},
		{"hung", func(net *jobtest.Network) { net.Drop("c", jobtest.DropHang) }, true, "no output within", false},
		{"late", func(net *jobtest.Network) { net.Delay("c", 2*time.Second) }, true, "no output within", false},
		{"output lost", func(net *jobtest.Network) {
			net.Intercept("c", func(to string, m *wire.Message) *wire.Message { return nil })
		}, true, "no output within", false},
		{"output tampered", func(net *jobtest.Network) {
			net.Intercept("c", func(to string, m *wire.Message) *wire.Message {
				m.Body = []byte("garbage")
				return m
			})
		}, true, "malformed", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := &countKind{steps: 1, calls: newCalls()}
			o := opts
			o.OnStep = func(ev jobtest.Event) jobtest.Fault {
				if ev.Kind == jobtest.Starting {
					tc.setup(ev.Net)
				}
				return jobtest.Fault{}
			}
			start := time.Now()
			rep, err := run(t, k, spec, o)
			if err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			rec := rep.Records()[0]
			if got := slices.Contains(rec.Silent, "c"); got != tc.silent || !strings.Contains(rec.Failed["c"], tc.failed) {
				t.Fatalf("silent %v, failed %v; want c silent=%v failing with %q", rec.Silent, rec.Failed, tc.silent, tc.failed)
			}
			if tc.quick != (took < opts.StepTimeout) {
				t.Fatalf("took %v with step timeout %v", took, opts.StepTimeout)
			}
			// The others' outputs are in the decision.
			if got := rep.Result["total"]; tc.name != "crashed" && got != values[0]+values[1] {
				t.Fatalf("total %v, want %d without c", got, values[0]+values[1])
			}
		})
	}
}

// The log never holds a party's output and the messages disclose what
// they say; both checks catch a kind that breaks them.
func TestRunLeakage(t *testing.T) {
	spec, opts, _ := countJob(t, abc...)
	rep, err := run(t, &countKind{steps: 2, exchange: true, calls: newCalls()}, spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Outputs) != 6 {
		t.Fatalf("%d outputs", len(rep.Outputs))
	}
	for _, o := range rep.Outputs {
		if held := rep.LogHolding(o.Output); len(held) > 0 {
			t.Errorf("log entry %s holds %s's output", held[0].Op, o.Party)
		}
	}
	for _, p := range abc {
		if held := rep.LogHolding([]byte("private-" + p)); len(held) > 0 {
			t.Errorf("log holds %s's private marker", p)
		}
		if sent := rep.SentHolding([]byte("private-" + p)); len(sent) != 2 || sent[0].To != "a" {
			t.Errorf("%s's private marker sent %d times, want twice to the coordinator", p, len(sent))
		}
	}
	// The runtime's admission answers are control: no data of the party.
	if out := rep.SentOutside(discloseValue, discloseOutput, wire.DiscloseControl); len(out) > 0 {
		t.Errorf("%s sent %s disclosing %s", out[0].From, out[0].Message.Type, out[0].Disclosure)
	}
	if out := rep.SentOutside(discloseOutput, wire.DiscloseControl); len(out) != 24 {
		t.Errorf("%d messages disclose something else than outputs, want the 24 exchanged values (2 steps, 3 parties, 2 peers, 2 channels)", len(out))
	}
	leaky, err := run(t, &countKind{steps: 2, leaky: true, calls: newCalls()}, spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range leaky.Outputs {
		if len(leaky.LogHolding(o.Output)) == 0 {
			t.Errorf("a kind that commits outputs went unnoticed: %s's output is not found in the log", o.Party)
		}
	}
}

// A party with no secrets fails its steps with the reason; a cancelled
// context ends the run with every goroutine stopped.
func TestRunMissingSecretsAndCancel(t *testing.T) {
	spec, opts, _ := countJob(t, abc...)
	o := opts
	o.Secrets = map[string]job.Secrets{"a": opts.Secrets["a"], "b": opts.Secrets["b"]}
	rep, err := run(t, &countKind{steps: 1, calls: newCalls()}, spec, o)
	if err != nil {
		t.Fatal(err)
	}
	if why := rep.Records()[0].Failed["c"]; !strings.Contains(why, "no secrets") {
		t.Fatalf("c failed with %q", why)
	}

	o = opts
	o.StepTimeout = time.Hour
	o.Network = jobtest.NewNetwork(abc...)
	o.Network.Drop("b", jobtest.DropHang)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	rep, err = jobtest.Run(ctx, &countKind{steps: 1, calls: newCalls()}, spec, o)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("err = %v after %v", err, time.Since(start))
	}
	if last := rep.Log[len(rep.Log)-1]; last.Op != jobtest.OpStart {
		t.Fatalf("a cancelled run logged %s", last.Op)
	}
}

func TestReportHelpers(t *testing.T) {
	rep := &jobtest.Report{
		Log: []jobtest.Entry{{Entry: jobrun.Entry{Op: "x"}, Data: []byte("abcdef")}},
		Sent: []jobtest.Sent{
			{From: "a", Message: &wire.Message{Body: []byte("secret")}, Disclosure: wire.DiscloseCiphertext},
			{From: "b", Message: &wire.Message{Body: []byte("other")}, Disclosure: wire.DiscloseControl},
		},
	}
	if len(rep.LogHolding([]byte("cde"))) != 1 || len(rep.LogHolding([]byte("xyz"))) != 0 || len(rep.LogHolding(nil)) != 0 {
		t.Fatal("LogHolding")
	}
	if got := rep.SentHolding([]byte("cre")); len(got) != 1 || got[0].From != "a" || len(rep.SentHolding(nil)) != 0 {
		t.Fatal("SentHolding")
	}
	if got := rep.SentOutside(wire.DiscloseCiphertext); len(got) != 1 || got[0].From != "b" {
		t.Fatal("SentOutside")
	}
	if !reflect.DeepEqual(rep.SentOutside(wire.DiscloseCiphertext, wire.DiscloseControl), []jobtest.Sent(nil)) {
		t.Fatal("SentOutside with every disclosure allowed")
	}
}
