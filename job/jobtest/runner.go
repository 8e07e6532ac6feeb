package jobtest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/cohortdm/cohort/job"
	jobrun "github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/wire"
)

// Options configure Run. The zero value runs the job on its spec's parties
// with no faults.
type Options struct {
	// JobID is the job's id (default "job-1").
	JobID string
	// Seed is the job's seed (default job.SeedSize random bytes).
	Seed []byte
	// Members are members of the consortium besides the spec's parties:
	// nodes that can coordinate without taking part.
	Members []string
	// Leader is the first coordinator (default the first party by name).
	Leader string
	// Network carries every message. Nil makes one over the parties and
	// Members; a given one must hold them all, and serves one Run at a
	// time. Set drops, delays and interceptions on it before Run, or from
	// OnStep (Event.Net).
	Network *Network
	// TablesDir is the directory Participant.TableSource resolves tables
	// in, as a node's tables_dir (default the spec's Dir).
	TablesDir string
	// Secrets is each party's key material (DirSecrets reads a node's data
	// dir); a party without an entry gets a Secrets that fails.
	Secrets map[string]job.Secrets
	// StepTimeout is the timeout of a step that sets none, and Grace how
	// long one message may take (runner.Config). Zero takes jobtest's
	// defaults, 10 s and 1 s, shorter than a node's (runner.DefaultConfig)
	// so that a test with a silent party ends in seconds; a negative one
	// fails Run.
	StepTimeout time.Duration
	Grace       time.Duration
	// OnStep, when set, is called at every attempt's start and every
	// step's commit and returns the fault to inject there (see Event).
	OnStep func(Event) Fault
	// Policy is every party's organisation policy (policy.Permissive when
	// nil); Enforcers, if it names a party, gives that party's instead
	// (so a test can keep a node's record of aggregates and spending across
	// runs). Submitter is the member the job's submission names (the first
	// party by default).
	Policy    *policy.Policy
	Enforcers map[string]*policy.Enforcer
	Submitter string
	// OnSend, when set, is called for every message a member sends, as it
	// is sent (before delays, tampering and delivery), and returns a fault
	// that takes effect at once: a leader change in the middle of a
	// step's protocol, say once the first decryption share is sent. Calls
	// of OnStep and OnSend never overlap.
	OnSend func(Sent) Fault
	// Log, when set, is every member's log (with the member's name as
	// "member"), as a node's is: what a session logs, such as the queries
	// a table source is asked (table.ReadOptions.Log), at debug level.
	Log *slog.Logger
}

// jobtest's default timeouts (Options.StepTimeout, Options.Grace).
const (
	testStepTimeout = 10 * time.Second
	testGrace       = time.Second
)

// EventKind says where in a step an Event is.
type EventKind int

const (
	// Starting: an attempt is about to be committed to the log; no party
	// has seen it yet, so drops, delays and interceptions set now apply to
	// the whole attempt. A Fault takes effect once the start record is
	// committed: a leader change then leaves the attempt unfinished, to be
	// re-run with a higher attempt number.
	Starting EventKind = iota + 1
	// Committed: a step's record has just been committed. A Fault takes
	// effect before the coordinator starts its next step: a leader change
	// is one between steps.
	Committed
)

func (k EventKind) String() string {
	switch k {
	case Starting:
		return "starting"
	case Committed:
		return "committed"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is a point of the job where OnStep may inject a fault: the kind's
// steps, not the runtime's admit phase (a fault there is set on the
// Network before Run). Steps a replaying coordinator answers from the log
// raise no events: nothing runs.
type Event struct {
	Kind EventKind
	// Step is the attempt as committed (job, attempt, coordinator and
	// timeout filled in).
	Step job.Step
	// Record is the committed record (Committed only).
	Record *job.Record
	// Leader is the member coordinating.
	Leader string
	// Net is the job's network, for drops, delays and interceptions.
	Net *Network
}

// Fault is what OnStep or OnSend injects; the zero Fault injects nothing.
type Fault struct {
	// Leader makes this member the leader (itself included: a re-election):
	// the running Coordinate is cancelled, its appends refused, and Leader
	// calls Coordinate from the top against the same log.
	Leader string
	// Restart names parties whose node restarts: the step each runs is
	// cancelled, its session closed, and a fresh session is opened at its
	// next step (which may be the attempt it was running, if still open;
	// the messages its old session received are gone).
	Restart []string
}

// Output is one output a party's session returned for an attempt and
// reported to that attempt's coordinator.
type Output struct {
	Party  string
	Step   job.Step
	Output []byte
}

// Report is what a job left behind.
type Report struct {
	JobID string
	// Result is what Coordinate returned; nil when the job failed.
	Result job.Result
	// Log holds every committed entry, in order.
	Log []Entry
	// Sent holds every message every member sent (as sent, before
	// tampering), by sender in name order, each sender's in send order.
	Sent []Sent
	// Outputs holds every output a session returned, in report order.
	Outputs []Output
	// Leaders lists the coordinators in the order they led, one per call
	// of Coordinate.
	Leaders []string
	// Net is the job's network.
	Net *Network
}

// LogHolding returns the log entries whose committed bytes contain b
// (none for an empty b).
func (r *Report) LogHolding(b []byte) []Entry {
	var out []Entry
	for _, e := range r.Log {
		if len(b) > 0 && bytes.Contains(e.Data, b) {
			out = append(out, e)
		}
	}
	return out
}

// SentHolding returns the captured messages whose body contains b (none
// for an empty b).
func (r *Report) SentHolding(b []byte) []Sent {
	var out []Sent
	for _, s := range r.Sent {
		if len(b) > 0 && bytes.Contains(s.Message.Body, b) {
			out = append(out, s)
		}
	}
	return out
}

// SentOutside returns the captured messages whose disclosure is none of
// allowed, for checking a kind's leakage profile. The runtime's answers in
// its admit phase (control: a verdict, a rule) are not the kind's and are
// left out; package job/runner checks them.
func (r *Report) SentOutside(allowed ...wire.Disclosure) []Sent {
	var out []Sent
	for _, s := range r.Sent {
		if s.Message.Phase == jobrun.AdmitPhase && s.Message.Type == jobrun.OutputType && s.Disclosure == wire.DiscloseControl {
			continue
		}
		if !slices.Contains(allowed, s.Disclosure) {
			out = append(out, s)
		}
	}
	return out
}

// Records returns the committed records of the kind's steps, in commit
// order (the runtime's admit phase is in Log).
func (r *Report) Records() []*job.Record { return records(r.Log) }

// Run runs one job of kind with spec to its end, in memory: the spec is
// validated and submitted to a fresh log, the leader drives the job with
// the runtime's Coordinator (package job/runner), and every party runs its
// steps with the runtime's Worker over the Network. It returns the report
// once the job has finished or failed (the report is there with the error,
// for inspection), or ctx has ended. Every goroutine it starts has ended
// when it returns.
func Run(ctx context.Context, kind job.Kind, spec *job.Spec, opts Options) (*Report, error) {
	if err := kind.Validate(spec); err != nil {
		return nil, fmt.Errorf("jobtest: %w", err)
	}
	r, err := newRunner(ctx, kind, spec, opts)
	if err != nil {
		return nil, err
	}
	if opts.OnSend != nil {
		r.net.setObserver(func(s Sent) { r.inject(r.hookSend(s)) })
		defer r.net.setObserver(nil)
	}
	res, err := r.drive()
	r.stopWorkers()
	rep := &Report{JobID: r.id, Result: res, Log: r.log.snapshot(), Leaders: r.leaders, Net: r.net}
	for _, name := range r.net.names() {
		rep.Sent = append(rep.Sent, r.net.Captured(name)...)
	}
	r.mu.Lock()
	rep.Outputs = r.outputs
	r.mu.Unlock()
	return rep, err
}

// runner is one job's run.
type runner struct {
	ctx     context.Context // Run's
	kinds   job.Registry
	id      string
	active  jobrun.ActiveJob // the job as submitted
	opts    Options
	cfg     jobrun.Config               // every member's timeouts
	policy  map[string]*policy.Enforcer // each party's
	net     *Network
	log     *memLog
	members []string

	hookMu sync.Mutex // hook calls and the faults they inject never overlap

	mu         sync.Mutex
	leader     string
	leaders    []string
	coordCtx   context.CancelFunc // cancels the running Coordinate
	workers    map[string]*worker
	stopped    bool // no worker starts any more
	outputs    []Output
	workerDone sync.WaitGroup
}

func newRunner(ctx context.Context, kind job.Kind, spec *job.Spec, opts Options) (*runner, error) {
	if opts.JobID == "" {
		opts.JobID = "job-1"
	}
	cfg := jobrun.DefaultConfig()
	cfg.StepTimeout = cmp.Or(opts.StepTimeout, testStepTimeout)
	cfg.Grace = cmp.Or(opts.Grace, testGrace)
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("jobtest: %w", err)
	}
	if opts.TablesDir == "" {
		opts.TablesDir = spec.Dir
	}
	seed := opts.Seed
	if seed == nil {
		seed = make([]byte, job.SeedSize)
		if _, err := rand.Read(seed); err != nil {
			return nil, fmt.Errorf("jobtest: job seed: %w", err)
		}
	}
	members := slices.Sorted(slices.Values(append(spec.PartyNames(), opts.Members...)))
	members = slices.Compact(members)
	net := opts.Network
	if net == nil {
		net = NewNetwork(members...)
	}
	have := net.names()
	for _, m := range members {
		if !slices.Contains(have, m) {
			return nil, fmt.Errorf("jobtest: member %q is not on the given network (%v)", m, have)
		}
		net.Capture(m)
	}
	leader := opts.Leader
	if leader == "" {
		leader = spec.PartyNames()[0]
	} else if !slices.Contains(members, leader) {
		return nil, fmt.Errorf("jobtest: leader %q is not a member (%v)", leader, members)
	}
	raw, err := spec.Marshal()
	if err != nil {
		return nil, fmt.Errorf("jobtest: %w", err)
	}
	r := &runner{ctx: ctx, kinds: job.Registry{spec.Kind: kind}, id: opts.JobID, opts: opts, cfg: cfg, net: net, log: newLog(),
		members: members, leader: leader, workers: map[string]*worker{},
		active: jobrun.ActiveJob{ID: opts.JobID, Kind: spec.Kind, Spec: raw, Seed: seed}}
	if r.opts.Submitter == "" {
		r.opts.Submitter = spec.PartyNames()[0]
	}
	sub := &jobrun.Submission{Member: r.opts.Submitter, Nonce: []byte(r.id), Time: time.Now().UTC()}
	if err := r.log.commit(0, &jobrun.Entry{Op: OpSubmit, Job: r.id, Spec: raw, Seed: seed, Submission: sub}); err != nil {
		return nil, err
	}
	if r.policy, err = enforcers(spec.PartyNames(), opts); err != nil {
		return nil, err
	}
	return r, nil
}

// drive starts the parties' workers and runs the runtime's Coordinator on
// each leader in turn until one of them ends the job.
func (r *runner) drive() (job.Result, error) {
	spec, _, err := jobrun.ParseJob(r.kinds, r.id, r.active.Spec)
	if err != nil {
		return nil, fmt.Errorf("jobtest: committed spec: %w", err)
	}
	for _, p := range spec.PartyNames() {
		r.startWorker(p, nil)
	}
	for {
		term := r.log.currentTerm()
		if j, _ := r.log.state.Job(r.id); j.Status != jobrun.StatusRunning {
			return nil, fmt.Errorf("jobtest: job %s ended without a result: %s", r.id, j.Error)
		}
		ctx, cancel := context.WithCancel(r.ctx)
		r.mu.Lock()
		leader := r.leader
		r.leaders = append(r.leaders, leader)
		r.coordCtx = cancel
		r.mu.Unlock()
		res, _, err := r.coordinator(leader, term).Run(ctx, r.id)
		cancel()
		if err := r.ctx.Err(); err != nil {
			return nil, fmt.Errorf("jobtest: job %s: %w", r.id, err)
		}
		switch {
		case r.log.currentTerm() != term || errors.Is(err, jobrun.ErrDeposed):
			continue // deposed: the next leader coordinates from the top
		case err != nil:
			return nil, fmt.Errorf("jobtest: job %s failed: %w", r.id, err)
		}
		return res, nil
	}
}

// coordinator is the runtime's coordinator for one leader's term, with
// the test's hooks at every attempt's start and every step's commit.
func (r *runner) coordinator(leader string, term int) *jobrun.Coordinator {
	return &jobrun.Coordinator{
		Self: leader, Kinds: r.kinds, Log: termLog{r.log, term}, Net: r.net.Party(leader),
		Config: r.cfg,
		Watch: func(ctx context.Context, parties []string, down func(string, error)) {
			r.watchReachable(ctx, leader, parties, down)
		},
		Starting: func(step job.Step) func() {
			if r.log.currentTerm() != term || step.Phase == jobrun.AdmitPhase {
				return nil // no event for a leader deposed already, nor for the runtime's admission
			}
			fault := r.hook(Event{Kind: Starting, Step: step, Leader: leader})
			return func() { r.inject(fault) }
		},
		Committed: func(step job.Step, rec *job.Record, _ time.Time) {
			if step.Phase == jobrun.AdmitPhase {
				return
			}
			r.inject(r.hook(Event{Kind: Committed, Step: step, Record: rec, Leader: leader}))
		},
	}
}

// watchReachable calls down for the first party other than the leader
// found dropped with DropFail, until ctx ends. It stands for the node's
// reachability probes, without their delay.
func (r *runner) watchReachable(ctx context.Context, leader string, parties []string, down func(string, error)) {
	for {
		p, changed := r.net.failed(parties, leader)
		if p != "" {
			down(p, ErrDropped)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

// hook calls OnStep.
func (r *runner) hook(ev Event) Fault {
	if r.opts.OnStep == nil {
		return Fault{}
	}
	r.hookMu.Lock()
	defer r.hookMu.Unlock()
	ev.Net = r.net
	return r.opts.OnStep(ev)
}

// hookSend calls OnSend.
func (r *runner) hookSend(s Sent) Fault {
	r.hookMu.Lock()
	defer r.hookMu.Unlock()
	return r.opts.OnSend(s)
}

// inject applies a fault. A name that is not a member is a bug in the
// test, and panics like Network.Party.
func (r *runner) inject(f Fault) {
	r.hookMu.Lock()
	defer r.hookMu.Unlock()
	for _, p := range f.Restart {
		r.restart(p)
	}
	if f.Leader == "" {
		return
	}
	if !slices.Contains(r.members, f.Leader) {
		panic(fmt.Sprintf("jobtest: fault makes %q the leader, not a member (%v)", f.Leader, r.members))
	}
	r.log.newTerm()
	r.mu.Lock()
	r.leader = f.Leader
	cancel := r.coordCtx
	r.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// worker is one party's runtime worker and the goroutine that tells it
// which attempts the log holds open.
type worker struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// startWorker starts a party's worker. It begins once prev, the worker of
// the party's previous life (if any), has ended and closed its session.
func (r *runner) startWorker(name string, prev *worker) {
	ctx, cancel := context.WithCancel(r.ctx)
	w := &worker{cancel: cancel, done: make(chan struct{})}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		cancel()
		return // a fault injected while the run ends: nothing runs any more
	}
	r.workers[name] = w
	secrets, ok := r.opts.Secrets[name]
	if !ok {
		secrets = noSecrets{name}
	}
	rw := &jobrun.Worker{Self: name, Job: r.active, Kinds: r.kinds, Net: r.net.Party(name), State: r.log.state,
		Member: member{secrets: secrets, tablesDir: r.opts.TablesDir, name: name, r: r}, Policy: r.policy[name], Config: r.cfg,
		OnOutput: func(step job.Step, out []byte) { r.recordOutput(Output{Party: name, Step: step, Output: out}) }}
	if r.opts.Log != nil {
		rw.Log = r.opts.Log.With("member", name)
	}
	r.workerDone.Add(1)
	go func() {
		defer r.workerDone.Done()
		defer close(w.done)
		if prev != nil {
			<-prev.done // the old session's step honours its cancelled context
		}
		var feed sync.WaitGroup
		feed.Go(func() {
			for {
				changed := r.log.state.Watch()
				rw.Want(r.log.state.Open(r.id, name))
				select {
				case <-ctx.Done():
					return
				case <-changed:
				}
			}
		})
		if err := rw.Run(ctx); err != nil {
			// Internal error: newRunner validated the config.
			panic(err)
		}
		feed.Wait()
	}()
}

// restart stops a party's worker, which closes its session, and starts a
// fresh one. It does not wait, so a party's own send may restart it.
func (r *runner) restart(name string) {
	r.mu.Lock()
	w, ok := r.workers[name]
	r.mu.Unlock()
	if !ok {
		panic(fmt.Sprintf("jobtest: fault restarts %q, not a party", name))
	}
	w.cancel()
	r.startWorker(name, w)
}

// stopWorkers ends every party's worker and waits for them.
func (r *runner) stopWorkers() {
	r.mu.Lock()
	r.stopped = true
	for _, w := range r.workers {
		w.cancel()
	}
	r.mu.Unlock()
	r.workerDone.Wait()
}

func (r *runner) recordOutput(o Output) {
	r.mu.Lock()
	r.outputs = append(r.outputs, o)
	r.mu.Unlock()
}

// member is a party's own key material and tables, for the worker.
type member struct {
	secrets   job.Secrets
	tablesDir string
	name      string
	r         *runner
}

// Leader is the member that leads now.
func (m member) Leader(context.Context) string {
	m.r.mu.Lock()
	defer m.r.mu.Unlock()
	return m.r.leader
}

func (m member) Secrets() job.Secrets   { return m.secrets }
func (m member) Redact(s string) string { return s }

// TableSource resolves a table as a simulation does: the spec's own source
// or path, inside Options.TablesDir; nothing outside it can be named.
func (m member) TableSource(t job.TableSpec) (table.Source, error) {
	if m.tablesDir == "" {
		return table.Source{}, fmt.Errorf("jobtest: party %s: no tables directory (Options.TablesDir)", m.name)
	}
	return job.ResolveSource(m.tablesDir, t, nil, true)
}

// Dataset names the dataset a table resolves to, as a node without a
// catalogue does: the file's path inside Options.TablesDir.
func (m member) Dataset(t job.TableSpec) (string, error) {
	src, err := m.TableSource(t)
	if err != nil {
		return "", err
	}
	return job.DatasetName(m.tablesDir, src, nil)
}

// DirSecrets returns the secrets in a node's data dir, as a node reads
// them (job.DirSecrets).
func DirSecrets(dir string) job.Secrets { return job.DirSecrets(dir) }

// Submitter trusts the submission's name: jobtest has no identities.
func (m member) Submitter(_ []byte, s *jobrun.Submission) (string, error) { return s.Member, nil }

// enforcers builds each party's policy enforcer.
func enforcers(parties []string, opts Options) (map[string]*policy.Enforcer, error) {
	out := map[string]*policy.Enforcer{}
	p := opts.Policy
	if p == nil {
		p = policy.Permissive()
	}
	for _, name := range parties {
		if e, ok := opts.Enforcers[name]; ok {
			out[name] = e
			continue
		}
		e, err := policy.NewEnforcer(policy.Options{Self: name, Policy: p})
		if err != nil {
			return nil, fmt.Errorf("jobtest: policy of %s: %w", name, err)
		}
		out[name] = e
	}
	return out, nil
}
