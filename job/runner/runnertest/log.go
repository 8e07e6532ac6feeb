// Package runnertest is the conformance suite of the two interfaces the job
// runtime (package job/runner) runs over: the replicated runner.Log and the
// network, job.Party. As hashicorp/raft runs one suite over every Transport
// and Go's cryptotest one over every hash, each implementation (the node's
// Raft log and libp2p messenger, jobtest's in-memory log and network) calls
// TestLog and TestParty from its own tests, so that a kind tested in memory
// meets the same log and network on real nodes.
//
// The suites check what the runtime relies on and the interfaces' doc
// comments state: for a Log, that a commit is applied before it returns, in
// order, stamped once, refused whole, not shared, and that a new leader
// holds it; for a Party, that a message is queued once Send returns, in
// order per sender and key, apart from every other key, as a copy, and that
// an ended context, a forged sender, an unknown peer or a message the wire
// refuses delivers nothing. Neither suite waits on a clock: a message Send
// has returned for is already queued, so the suite receives it with a
// context that has ended.
package runnertest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/runner"
)

// Logs is one consortium's replicated log as TestLog drives it.
type Logs interface {
	// Leader is the Log of the member that leads now.
	Leader() runner.Log
	// Elect makes another member lead and returns once that member's Log
	// holds every entry committed before, as a new leader's coordinator
	// finds it (the node waits on a Raft barrier before it coordinates).
	Elect(ctx context.Context) error
}

// TestLog runs the Log suite. Its subtests share logs, each with job ids of
// its own; the last one elects a new leader.
func TestLog(t *testing.T, logs Logs) {
	t.Run("CommitAppliesBeforeReturning", func(t *testing.T) { testCommitApplies(t, logs.Leader()) })
	t.Run("KeepsAGivenTime", func(t *testing.T) { testKeepsTime(t, logs.Leader()) })
	t.Run("AppliesInOrder", func(t *testing.T) { testAppliesInOrder(t, logs.Leader()) })
	t.Run("RefusesWhatTheStateRefuses", func(t *testing.T) { testRefuses(t, logs.Leader()) })
	t.Run("SharesNoMemory", func(t *testing.T) { testLogSharesNoMemory(t, logs.Leader()) })
	t.Run("EndedContextCommitsNothing", func(t *testing.T) { testLogEndedContext(t, logs.Leader()) })
	t.Run("ConcurrentCommits", func(t *testing.T) { testConcurrentCommits(t, logs.Leader()) })
	t.Run("NewLeaderHoldsEveryCommit", func(t *testing.T) { testNewLeader(t, logs) })
}

// spec is the spec of every job the suite submits: the log parses it, and
// no member runs its kind.
const spec = "kind: conformance\nparties: [{name: a}, {name: b}]\n"

// jobID names a job after the (sub)test that submits it.
func jobID(t *testing.T, suffix string) string {
	return "rt-" + strings.NewReplacer("/", "-", " ", "_").Replace(t.Name()) + suffix
}

func submitEntry(id string) *runner.Entry {
	return &runner.Entry{Op: runner.OpSubmit, Job: id, Spec: []byte(spec), Seed: []byte("seed of " + id),
		Submission: &runner.Submission{Member: "a", Nonce: []byte(id), Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}
}

func stepOf(id string, round, attempt int) job.Step {
	return job.Step{Job: id, Phase: "p", Round: round, Attempt: attempt, Parties: []string{"a", "b"},
		Coordinator: "a", Args: []byte{byte(round), byte(attempt)}, TimeoutMS: 1000}
}

func startEntry(id string, round, attempt int) *runner.Entry {
	s := stepOf(id, round, attempt)
	return &runner.Entry{Op: runner.OpStart, Job: id, Step: &s}
}

func doneEntry(id string, round, attempt int) *runner.Entry {
	rec := &job.Record{Step: stepOf(id, round, attempt), Coordinator: "a", Decision: []byte("decided"),
		Failed: map[string]string{"b": "late"}, Silent: []string{"b"}}
	return &runner.Entry{Op: runner.OpDone, Job: id, Record: rec}
}

// commit commits e and fails the test on an error.
func commit(t *testing.T, l runner.Log, e *runner.Entry) {
	t.Helper()
	if err := l.Commit(t.Context(), e); err != nil {
		t.Fatalf("commit %s of %s: %v", e.Op, e.Job, err)
	}
}

// jobOf is the job as l's state holds it.
func jobOf(t *testing.T, l runner.Log, id string) *runner.JobRecord {
	t.Helper()
	j, ok := l.State().Job(id)
	if !ok {
		t.Fatalf("job %s is not in the state once its commit returned", id)
	}
	return j
}

func testCommitApplies(t *testing.T, l runner.Log) {
	id := jobID(t, "")
	before := time.Now()
	commit(t, l, submitEntry(id))
	after := time.Now()
	j := jobOf(t, l, id)
	if j.Status != runner.StatusRunning || j.Kind != "conformance" || string(j.Spec) != spec || string(j.Seed) != "seed of "+id {
		t.Fatalf("state holds %+v", j)
	}
	if j.Submission == nil || j.Submission.Member != "a" || string(j.Submission.Nonce) != id {
		t.Fatalf("submission %+v", j.Submission)
	}
	// A zero Time is stamped by the commit: between the call and its return.
	if j.Submitted.Before(before.Add(-time.Second)) || j.Submitted.After(after.Add(time.Second)) {
		t.Fatalf("submitted at %v, committed between %v and %v", j.Submitted, before, after)
	}
}

func testKeepsTime(t *testing.T, l runner.Log) {
	id := jobID(t, "")
	at := time.Date(2030, 5, 6, 7, 8, 9, 123456000, time.UTC)
	e := submitEntry(id)
	e.Time = at
	commit(t, l, e)
	if j := jobOf(t, l, id); !j.Submitted.Equal(at) {
		t.Fatalf("submitted at %v, the entry says %v", j.Submitted, at)
	}
	s := startEntry(id, 0, 1)
	s.Time = at.Add(time.Minute)
	commit(t, l, s)
	if rec, _, _ := l.State().Step(id, "p", 0); rec == nil || !rec.Started.Equal(s.Time) {
		t.Fatalf("step %+v, started at %v", rec, s.Time)
	}
}

func testAppliesInOrder(t *testing.T, l runner.Log) {
	ids := []string{jobID(t, "-1"), jobID(t, "-2"), jobID(t, "-3")}
	for _, id := range ids {
		commit(t, l, submitEntry(id))
	}
	var order []string
	for _, j := range l.State().Jobs() {
		if slices.Contains(ids, j.ID) {
			order = append(order, j.ID)
		}
	}
	if !slices.Equal(order, ids) {
		t.Fatalf("jobs in order %v, committed %v", order, ids)
	}
	id := ids[0]
	commit(t, l, startEntry(id, 0, 1))
	commit(t, l, startEntry(id, 0, 2)) // a new attempt supersedes the first
	done := doneEntry(id, 0, 2)
	commit(t, l, done)
	commit(t, l, startEntry(id, 1, 1))
	rec, status, ok := l.State().Step(id, "p", 0)
	if !ok || status != runner.StatusRunning || rec == nil || !rec.Done || rec.Attempt != 2 {
		t.Fatalf("step p/0: %+v, %s", rec, status)
	}
	if !reflect.DeepEqual(rec.Record, done.Record) || !reflect.DeepEqual(rec.Step, *startEntry(id, 0, 2).Step) {
		t.Fatalf("step p/0 holds %+v and %+v, committed %+v", rec.Step, rec.Record, done.Record)
	}
	if h := l.State().History(id); len(h) != 1 || !reflect.DeepEqual(h[0], done.Record) {
		t.Fatalf("history %+v", h)
	}
	if open := l.State().Open(id, "b"); len(open) != 1 || !reflect.DeepEqual(open[0], *startEntry(id, 1, 1).Step) {
		t.Fatalf("open for b: %+v", open)
	}
	commit(t, l, &runner.Entry{Op: runner.OpFinish, Job: id, Result: []byte(`{"sum": 1}`)})
	if j := jobOf(t, l, id); j.Status != runner.StatusDone || string(j.Result) != `{"sum": 1}` {
		t.Fatalf("finished job %+v", j)
	}
}

// testRefuses commits entries State.Apply refuses, the very entries
// committed again among them: each fails, and the state is as before.
func testRefuses(t *testing.T, l runner.Log) {
	id := jobID(t, "")
	commit(t, l, submitEntry(id))
	commit(t, l, startEntry(id, 0, 1))
	commit(t, l, doneEntry(id, 0, 1))
	commit(t, l, startEntry(id, 1, 2))
	before := jobOf(t, l, id)
	for _, tc := range []struct {
		name string
		e    *runner.Entry
	}{
		{"the submission again", submitEntry(id)},
		{"the start of a step done", startEntry(id, 0, 2)},
		{"the record of a step done again", doneEntry(id, 0, 1)},
		{"the running attempt's start again", startEntry(id, 1, 2)},
		{"an older attempt", startEntry(id, 1, 1)},
		{"the record of an attempt not running", doneEntry(id, 1, 1)},
		{"a step of a job never submitted", startEntry(jobID(t, "-unknown"), 0, 1)},
		{"an unknown operation", &runner.Entry{Op: "bogus", Job: id}},
	} {
		err := l.Commit(t.Context(), tc.e)
		if err == nil || errors.Is(err, runner.ErrDeposed) {
			t.Errorf("%s: %v, want the state's refusal", tc.name, err)
		}
	}
	if after := jobOf(t, l, id); !reflect.DeepEqual(after, before) {
		t.Fatalf("refused entries changed the state:\n%+v\nwas\n%+v", after, before)
	}
	if _, ok := l.State().Job(jobID(t, "-unknown")); ok {
		t.Fatal("a refused entry made a job")
	}
}

func testLogSharesNoMemory(t *testing.T, l runner.Log) {
	id := jobID(t, "")
	sub := submitEntry(id)
	commit(t, l, sub)
	start := startEntry(id, 0, 1)
	commit(t, l, start)
	done := doneEntry(id, 0, 1)
	commit(t, l, done)
	sub.Spec[0], sub.Seed[0], sub.Submission.Member = 'X', 'X', "z"
	start.Step.Parties[0], start.Step.Args[0] = "z", 0xff
	done.Record.Decision[0], done.Record.Failed["b"], done.Record.Step.Parties[1] = 'X', "changed", "z"
	j := jobOf(t, l, id)
	if string(j.Spec) != spec || string(j.Seed) != "seed of "+id || j.Submission.Member != "a" {
		t.Fatalf("the state shares the submission's memory: %+v", j)
	}
	rec, _, _ := l.State().Step(id, "p", 0)
	if !reflect.DeepEqual(rec.Step, stepOf(id, 0, 1)) || !reflect.DeepEqual(rec.Record, doneEntry(id, 0, 1).Record) {
		t.Fatalf("the state shares the step's memory: %+v, %+v", rec.Step, rec.Record)
	}
}

func testLogEndedContext(t *testing.T, l runner.Log) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	expired, cancel2 := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel2()
	for _, tc := range []struct {
		ctx  context.Context
		want error
	}{{cancelled, context.Canceled}, {expired, context.DeadlineExceeded}} {
		id := jobID(t, "-"+strings.ReplaceAll(tc.want.Error(), " ", "_"))
		if err := l.Commit(tc.ctx, submitEntry(id)); !errors.Is(err, tc.want) {
			t.Fatalf("commit under an ended context: %v, want %v", err, tc.want)
		}
		if _, ok := l.State().Job(id); ok {
			t.Fatalf("commit under an ended context (%v) applied the entry", tc.want)
		}
	}
	// The log still commits afterwards.
	commit(t, l, submitEntry(jobID(t, "-after")))
}

func testConcurrentCommits(t *testing.T, l runner.Log) {
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			id := jobID(t, fmt.Sprintf("-%d", i))
			if errs[i] = l.Commit(t.Context(), submitEntry(id)); errs[i] == nil {
				errs[i] = l.Commit(t.Context(), startEntry(id, 0, 1))
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
		if rec, _, ok := l.State().Step(jobID(t, fmt.Sprintf("-%d", i)), "p", 0); !ok || rec == nil || rec.Attempt != 1 {
			t.Fatalf("job %d: step %+v", i, rec)
		}
	}
}

// testNewLeader checks what a new leader's coordinator resumes from: every
// entry committed before, identical, while the old leader's commits fail
// with ErrDeposed and change nothing.
func testNewLeader(t *testing.T, logs Logs) {
	old := logs.Leader()
	id := jobID(t, "")
	commit(t, old, submitEntry(id))
	commit(t, old, startEntry(id, 0, 1))
	commit(t, old, doneEntry(id, 0, 1))
	commit(t, old, startEntry(id, 1, 1))
	was := jobOf(t, old, id)
	if err := logs.Elect(t.Context()); err != nil {
		t.Fatalf("elect: %v", err)
	}
	l := logs.Leader()
	if got := jobOf(t, l, id); !reflect.DeepEqual(got, was) {
		t.Fatalf("the new leader holds\n%+v\nthe old one committed\n%+v", got, was)
	}
	if err := old.Commit(t.Context(), doneEntry(id, 1, 1)); !errors.Is(err, runner.ErrDeposed) {
		t.Fatalf("the old leader's commit: %v, want ErrDeposed", err)
	}
	if rec, _, _ := l.State().Step(id, "p", 1); rec == nil || rec.Done {
		t.Fatalf("a deposed commit reached the new leader's state: %+v", rec)
	}
	commit(t, l, doneEntry(id, 1, 1))
	if h := l.State().History(id); len(h) != 2 {
		t.Fatalf("history after the new leader's commit: %+v", h)
	}
}
