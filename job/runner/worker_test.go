package runner_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/wire"
)

// The worker is the party's last line against a coordinator that does not
// keep to the runtime: these tests commit entries by hand, as a malicious
// leader running other code could, and check what the party does.

// touchy is a kind whose session counts the times it is opened: a refused
// step must not open it (no row is read).
type touchy struct{ opened atomic.Int32 }

func (k *touchy) Validate(*job.Spec) error { return nil }
func (k *touchy) Coordinate(context.Context, job.Coordinator) (job.Result, error) {
	return nil, nil
}
func (k *touchy) Open(context.Context, job.Participant) (job.Session, error) {
	k.opened.Add(1)
	return session{}, nil
}
func (k *touchy) OutputDisclosure(job.Step) wire.Disclosure { return wire.DisclosePublicResult }
func (k *touchy) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	return []job.Use{{Table: "t", Column: "v", Role: job.RoleAttribute, Form: wire.DiscloseCiphertext, Parties: spec.PartyNames()}}, nil
}

type session struct{}

func (session) Step(context.Context, job.Step) ([]byte, error) { return []byte("data"), nil }
func (session) Close()                                         {}

// member is a party that believes leader leads.
type member struct{ leader string }

func (m member) Secrets() job.Secrets                                     { return job.DirSecrets("/nonexistent") }
func (m member) TableSource(job.TableSpec) (table.Source, error)          { return table.Source{}, nil }
func (m member) Dataset(t job.TableSpec) (string, error)                  { return t.Name, nil }
func (m member) Redact(s string) string                                   { return s }
func (m member) Leader(context.Context) string                            { return m.leader }
func (m member) Submitter(_ []byte, s *runner.Submission) (string, error) { return s.Member, nil }

const spec3 = "kind: touchy\nparties: [{name: a}, {name: b, tables: [{name: t, path: t.csv}]}, {name: c}]\n"

// runStep commits the job and one attempt of step at b, runs b's worker
// under pol, and returns what b reported to step's coordinator.
func runStep(t *testing.T, k *touchy, pol *policy.Policy, leader string, step job.Step) string {
	t.Helper()
	return runStepSubmitted(t, k, pol, leader, step, &runner.Submission{Member: "a", Nonce: []byte("n"), Time: time.Now()})
}

// runStepSubmitted is runStep with the job's submission as given (nil: a
// job a coordinator committed without one).
func runStepSubmitted(t *testing.T, k *touchy, pol *policy.Policy, leader string, step job.Step, sub *runner.Submission) string {
	t.Helper()
	enf, err := policy.NewEnforcer(policy.Options{Self: "b", Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	return runStepEnforced(t, k, enf, leader, step, sub)
}

// runStepEnforced is runStepSubmitted with b's enforcer as given.
func runStepEnforced(t *testing.T, k *touchy, enf *policy.Enforcer, leader string, step job.Step, sub *runner.Submission) string {
	t.Helper()
	st := runner.NewState()
	if err := st.Apply(&runner.Entry{Op: runner.OpSubmit, Job: "j", Spec: []byte(spec3), Submission: sub}); err != nil {
		t.Fatal(err)
	}
	step.Job, step.Attempt, step.TimeoutMS = "j", 1, 5000
	if err := st.Apply(&runner.Entry{Op: runner.OpStart, Job: "j", Step: &step}); err != nil {
		t.Fatal(err)
	}
	net := jobtest.NewNetwork("a", "b", "c", "z")
	w := &runner.Worker{Self: "b", Job: runner.ActiveJob{ID: "j", Spec: []byte(spec3)}, Kinds: job.Registry{"touchy": k},
		Net: net.Party("b"), State: st, Member: dirMember{member{leader}, t.TempDir()}, Policy: enf, Config: runner.DefaultConfig()}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ran := runB(ctx, w, st)
	defer func() {
		cancel()
		if err := <-ran; err != nil {
			t.Error(err)
		}
	}()
	m, err := net.Party(step.Coordinator).Receive(ctx, "b", step.Key(runner.OutputType))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Output []byte `msgpack:"output"`
		Error  string `msgpack:"error"`
	}
	if err := wire.Unmarshal(m.Body, &r); err != nil {
		t.Fatal(err)
	}
	if r.Error == "" {
		return "output: " + string(r.Output)
	}
	return r.Error
}

func TestWorkerRefusesWhatTheRuntimeWouldNotAsk(t *testing.T) {
	manual := policy.Default()
	manual.Approval = policy.ApprovalManual
	manual.Kinds["touchy"] = []string{policy.Any}
	auto := policy.Default()
	auto.Kinds["touchy"] = []string{policy.Any}
	for _, tc := range []struct {
		name   string
		pol    *policy.Policy
		leader string
		step   job.Step
		want   string // in the report; "" for an output
	}{
		{"an honest step", auto, "a", job.Step{Phase: "p", Parties: []string{"a", "b", "c"}, Coordinator: "a"}, ""},
		{"a step started before manual approval", manual, "a",
			job.Step{Phase: "p", Parties: []string{"a", "b", "c"}, Coordinator: "a"}, "awaits approval at b (coordinator a"},
		{"a step naming a non-party", auto, "a",
			job.Step{Phase: "p", Parties: []string{"a", "b", "z"}, Coordinator: "a"}, "names z, not a party of the job (coordinator a)"},
		{"a coordinator that does not lead", auto, "c",
			job.Step{Phase: "p", Parties: []string{"a", "b", "c"}, Coordinator: "a"}, "names a its coordinator, but c leads"},
		{"a replayed submission's old time", auto, "a",
			job.Step{Phase: "p", Parties: []string{"a", "b", "c"}, Coordinator: "a"}, "rule submission"},
		{"a kind this node does not take", policy.Default(), "a",
			job.Step{Phase: "p", Parties: []string{"a", "b", "c"}, Coordinator: "a"}, "refused by b's policy: rule kinds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := &touchy{}
			sub := &runner.Submission{Member: "a", Nonce: []byte("n"), Time: time.Now()}
			if tc.name == "a replayed submission's old time" {
				sub.Time = time.Now().Add(-48 * time.Hour)
			}
			got := runStepSubmitted(t, k, tc.pol, tc.leader, tc.step, sub)
			if tc.want == "" {
				if got != "output: data" || k.opened.Load() != 1 {
					t.Fatalf("reported %q, opened %d", got, k.opened.Load())
				}
				return
			}
			if !strings.Contains(got, tc.want) {
				t.Fatalf("reported %q, want %q", got, tc.want)
			}
			if k.opened.Load() != 0 {
				t.Fatal("the session was opened: the party read its tables")
			}
		})
	}
}

// A party whose policy state cannot be written (a full disk) cannot keep
// the submission's nonce: it answers the admit phase with the fault, not
// a refusal (the coordinator treats it as silent rather than failing the
// job), and a kind's step fails naming the fault without a path, before
// the session opens.
func TestWorkerReportsAnUnwritablePolicyStateAsAFault(t *testing.T) {
	pol := policy.Default()
	pol.Kinds["touchy"] = []string{policy.Any}
	blocker := filepath.Join(t.TempDir(), "blocker")
	store, err := policy.OpenStore(filepath.Join(blocker, "policy-state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blocker, nil, 0o600); err != nil { // the state's directory is now a file
		t.Fatal(err)
	}
	enf, err := policy.NewEnforcer(policy.Options{Self: "b", Policy: pol, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	sub := &runner.Submission{Member: "a", Nonce: []byte("n"), Time: time.Now()}
	parties := []string{"a", "b", "c"}
	k := &touchy{}
	got := runStepEnforced(t, k, enf, "a", job.Step{Phase: runner.AdmitPhase, Parties: parties, Coordinator: "a"}, sub)
	if !strings.HasPrefix(got, "output: ") || !strings.Contains(got, "policy state cannot be written: not a directory") || strings.Contains(got, "refused") {
		t.Fatalf("admit answer %q: want the fault, not a refusal", got)
	}
	got = runStepEnforced(t, k, enf, "a", job.Step{Phase: "p", Parties: parties, Coordinator: "a"}, sub)
	if !strings.Contains(got, "policy state cannot be written: not a directory") || strings.Contains(got, "/") {
		t.Fatalf("step report %q: want the fault without a path", got)
	}
	if k.opened.Load() != 0 {
		t.Fatal("the session was opened without an admission")
	}
}

// A job that carries no signed submission (a coordinator committed it
// itself) is refused before the session opens.
func TestWorkerRefusesAnUnsignedJob(t *testing.T) {
	pol := policy.Default()
	pol.Kinds["touchy"] = []string{policy.Any}
	k := &touchy{}
	got := runStepSubmitted(t, k, pol, "a", job.Step{Phase: "p", Parties: []string{"a", "b", "c"}, Coordinator: "a"}, nil)
	if !strings.Contains(got, "rule submission: job j carries no signed submission") || k.opened.Load() != 0 {
		t.Fatalf("reported %q, opened %d", got, k.opened.Load())
	}
}

// stuck is a kind whose session blocks in every step until the attempt
// ends, as a party does whose peers' messages of the attempt are lost.
type stuck struct {
	touchy
	entered chan struct{}
}

func (k *stuck) Open(context.Context, job.Participant) (job.Session, error) {
	k.opened.Add(1)
	return stuckSession{k.entered}, nil
}

type stuckSession struct{ entered chan struct{} }

func (s stuckSession) Step(ctx context.Context, _ job.Step) ([]byte, error) {
	s.entered <- struct{}{}
	<-ctx.Done()
	return nil, ctx.Err()
}
func (stuckSession) Close() {}

// dirMember keeps its secrets in a directory, as a node does across
// restarts.
type dirMember struct {
	member
	dir string
}

func (m dirMember) Secrets() job.Secrets { return job.DirSecrets(m.dir) }

// startedJob is a state holding job j, submitted by a, and one attempt of
// its step p over a, b and c with a ten-minute timeout, coordinated by a.
func startedJob(t *testing.T) (*runner.State, job.Step) {
	t.Helper()
	st := runner.NewState()
	if err := st.Apply(&runner.Entry{Op: runner.OpSubmit, Job: "j", Spec: []byte(spec3),
		Submission: &runner.Submission{Member: "a", Nonce: []byte("n"), Time: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	step := job.Step{Job: "j", Phase: "p", Attempt: 1, TimeoutMS: 600_000, Parties: []string{"a", "b", "c"}, Coordinator: "a"}
	if err := st.Apply(&runner.Entry{Op: runner.OpStart, Job: "j", Step: &step}); err != nil {
		t.Fatal(err)
	}
	return st, step
}

// A worker whose node restarted in the middle of an attempt reports that at
// once, instead of running the attempt again and waiting out its timeout
// for messages that were sent to the process that died.
func TestWorkerReportsARestartAtOnce(t *testing.T) {
	st, step := startedJob(t)
	net := jobtest.NewNetwork("a", "b", "c")
	k := &stuck{entered: make(chan struct{}, 1)}
	m := dirMember{member{"a"}, t.TempDir()}
	worker := func() *runner.Worker { return stuckWorker(t, st, net, k, m) }
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// The first process begins the attempt and dies in it.
	first, kill := context.WithCancel(ctx)
	ran := runB(first, worker(), st)
	<-k.entered
	kill()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}

	// The restarted one reports at once, without opening the session.
	ran = runB(ctx, worker(), st)
	defer func() {
		cancel()
		if err := <-ran; err != nil {
			t.Error(err)
		}
	}()
	expectRestartReport(t, ctx, net, step)
	if n := k.opened.Load(); n != 1 {
		t.Errorf("the session was opened %d times, want once (before the restart)", n)
	}
}

// stuckWorker is b's worker of job j in st over net, running kind k
// ("touchy" allowed by b's policy) with member m.
func stuckWorker(t *testing.T, st *runner.State, net *jobtest.Network, k *stuck, m runner.Member) *runner.Worker {
	t.Helper()
	pol := policy.Default()
	pol.Kinds["touchy"] = []string{policy.Any}
	enf, err := policy.NewEnforcer(policy.Options{Self: "b", Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	return &runner.Worker{Self: "b", Job: runner.ActiveJob{ID: "j", Spec: []byte(spec3)}, Kinds: job.Registry{"touchy": k},
		Net: net.Party("b"), State: st, Member: m, Policy: enf, Config: runner.DefaultConfig()}
}

// runB runs w, b's worker, over the attempts of job j open in st until ctx
// ends; the channel gets what Run returns.
func runB(ctx context.Context, w *runner.Worker, st *runner.State) <-chan error {
	w.Want(st.Open("j", "b"))
	ran := make(chan error, 1)
	go func() { ran <- w.Run(ctx) }()
	return ran
}

// expectRestartReport receives b's report of step at a and fails t unless
// it names b's restart mid-attempt.
func expectRestartReport(t *testing.T, ctx context.Context, net *jobtest.Network, step job.Step) {
	t.Helper()
	msg, err := net.Party("a").Receive(ctx, "b", step.Key(runner.OutputType))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Output    []byte `msgpack:"output"`
		Error     string `msgpack:"error"`
		Restarted bool   `msgpack:"restarted"`
	}
	if err := wire.Unmarshal(msg.Body, &r); err != nil {
		t.Fatal(err)
	}
	if !r.Restarted || !strings.Contains(r.Error, "party b restarted mid-attempt of step p/0 (attempt 1)") {
		t.Fatalf("reported %q, want the restart named", r.Error)
	}
}

// flakySends fails the first n sends of a report, as a reset stream would.
type flakySends struct {
	job.Party
	left atomic.Int32
}

func (f *flakySends) Send(ctx context.Context, to string, m *wire.Message, d wire.Disclosure) error {
	if m.Type == runner.OutputType && f.left.Add(-1) >= 0 {
		return errors.New("stream reset")
	}
	return f.Party.Send(ctx, to, m, d)
}

// A report whose send fails is sent again while the attempt is open: the
// coordinator gets it instead of counting the party silent after the step
// timeout (ten minutes here; the test's context ends after one).
func TestWorkerRetriesAFailedReport(t *testing.T) {
	st, step := startedJob(t)
	net := jobtest.NewNetwork("a", "b", "c")
	flaky := &flakySends{Party: net.Party("b")}
	flaky.left.Store(3)
	w := &runner.Worker{Self: "b", Job: runner.ActiveJob{ID: "j", Spec: []byte(spec3)}, Kinds: job.Registry{"touchy": &touchy{}},
		Net: flaky, State: st, Member: dirMember{member{"a"}, t.TempDir()}, Config: runner.DefaultConfig()}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ran := runB(ctx, w, st)
	defer func() {
		cancel()
		if err := <-ran; err != nil {
			t.Error(err)
		}
	}()
	m, err := net.Party("a").Receive(ctx, "b", step.Key(runner.OutputType))
	if err != nil {
		t.Fatalf("no report after three failed sends: %v", err)
	}
	var r struct {
		Output []byte `msgpack:"output"`
		Error  string `msgpack:"error"`
	}
	if err := wire.Unmarshal(m.Body, &r); err != nil || string(r.Output) != "data" {
		t.Fatalf("report %q (error %q), %v", r.Output, r.Error, err)
	}
}

// rebootedMember says that one attempt began before its node's process
// started (runner.Rebooted).
type rebootedMember struct {
	dirMember
	before job.Step
}

func (m rebootedMember) StartedBeforeBoot(s job.Step) bool {
	return s.Job == m.before.Job && s.Phase == m.before.Phase && s.Round == m.before.Round && s.Attempt == m.before.Attempt
}

// A worker whose node's log held the attempt's start when its process
// started reports a restart at once, even without a mark of the attempt
// (the earlier process may have died before the mark was durable, with
// messages of the attempt acknowledged and lost), and opens no session.
func TestWorkerReportsAnAttemptBegunBeforeBoot(t *testing.T) {
	st, step := startedJob(t)
	net := jobtest.NewNetwork("a", "b", "c")
	k := &stuck{entered: make(chan struct{}, 1)}
	w := stuckWorker(t, st, net, k, rebootedMember{dirMember{member{"a"}, t.TempDir()}, step})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ran := runB(ctx, w, st)
	defer func() {
		cancel()
		if err := <-ran; err != nil {
			t.Error(err)
		}
	}()
	expectRestartReport(t, ctx, net, step)
	if n := k.opened.Load(); n != 0 {
		t.Errorf("the session was opened %d times, want none", n)
	}
}

// A member that knows its boot keeps no started mark: it runs an attempt
// its log did not hold at boot, and leaves nothing of it on disk.
func TestWorkerKeepsNoMarkWhenItKnowsItsBoot(t *testing.T) {
	st, step := startedJob(t)
	net := jobtest.NewNetwork("a", "b", "c")
	k := &stuck{entered: make(chan struct{}, 1)}
	dir := t.TempDir()
	other := step
	other.Attempt = 2
	w := stuckWorker(t, st, net, k, rebootedMember{dirMember{member{"a"}, dir}, other})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ran := runB(ctx, w, st)
	select {
	case <-k.entered:
	case <-ctx.Done():
		t.Fatal("the attempt did not run")
	}
	cancel()
	if err := <-ran; err != nil {
		t.Error(err)
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("the worker left %s behind", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
