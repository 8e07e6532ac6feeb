package jobtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
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
	// StepTimeout is the timeout of a step that sets none (default 10 s).
	StepTimeout time.Duration
	// Grace is how long one message may take (default 1 s): the
	// coordinator waits for outputs this long beyond the step timeout, and
	// a party gives up reporting its output after it.
	Grace time.Duration
	// OnStep, when set, is called at every attempt's start and every
	// step's commit and returns the fault to inject there (see Event).
	OnStep func(Event) Fault
	// OnSend, when set, is called for every message a member sends, as it
	// is sent (before delays, tampering and delivery), and returns a fault
	// that takes effect at once: a leader change in the middle of a
	// step's protocol, say once the first decryption share is sent. Calls
	// of OnStep and OnSend never overlap.
	OnSend func(Sent) Fault
}

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

// Event is a point of the job where OnStep may inject a fault. Steps a
// replaying coordinator answers from the log raise no events: nothing runs.
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
// allowed, for checking a kind's leakage profile.
func (r *Report) SentOutside(allowed ...protocol.Disclosure) []Sent {
	var out []Sent
	for _, s := range r.Sent {
		if !slices.Contains(allowed, s.Disclosure) {
			out = append(out, s)
		}
	}
	return out
}

// Records returns the committed records of the log's done entries, in
// commit order.
func (r *Report) Records() []*job.Record {
	var out []*job.Record
	for _, e := range r.Log {
		if e.Op == OpDone {
			out = append(out, e.Record)
		}
	}
	return out
}

// Run runs one job of kind with spec to its end, in memory: the spec is
// validated and submitted to a fresh log, the leader calls kind.Coordinate,
// and every party runs its steps in its own Session over the Network. It
// returns the report once the job has finished or failed (the report is
// there with the error, for inspection), or ctx has ended. Every goroutine
// it starts has ended when it returns.
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
	kind    job.Kind
	id      string
	spec    []byte // the spec as committed
	seed    []byte
	opts    Options
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
	if opts.StepTimeout <= 0 {
		opts.StepTimeout = 10 * time.Second
	}
	if opts.Grace <= 0 {
		opts.Grace = time.Second
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
	r := &runner{ctx: ctx, kind: kind, id: opts.JobID, spec: raw, seed: seed, opts: opts, net: net, log: newLog(),
		members: members, leader: leader, workers: map[string]*worker{}}
	if err := r.log.append(0, &Entry{Op: OpSubmit, Job: r.id, Spec: raw, Seed: seed}); err != nil {
		return nil, err
	}
	return r, nil
}

// parseSpec parses the committed spec, as every node does for itself.
func (r *runner) parseSpec() (*job.Spec, error) {
	spec, err := job.ParseSpec(r.spec, "job "+r.id)
	if err != nil {
		return nil, fmt.Errorf("jobtest: committed spec: %w", err)
	}
	return spec, nil
}

// drive starts the parties' workers and runs Coordinate on each leader in
// turn until one of them ends the job.
func (r *runner) drive() (job.Result, error) {
	spec, err := r.parseSpec()
	if err != nil {
		return nil, err
	}
	for _, p := range spec.PartyNames() {
		r.startWorker(p, nil)
	}
	for {
		term, running := r.log.currentTerm()
		if !running {
			return nil, fmt.Errorf("jobtest: job %s ended without a result", r.id)
		}
		ctx, cancel := context.WithCancel(r.ctx)
		r.mu.Lock()
		leader := r.leader
		r.leaders = append(r.leaders, leader)
		r.coordCtx = cancel
		r.mu.Unlock()
		c, err := r.newCoordinator(leader, term)
		var res job.Result
		if err == nil {
			res, err = r.kind.Coordinate(ctx, c)
		}
		cancel()
		if err := r.ctx.Err(); err != nil {
			return nil, fmt.Errorf("jobtest: job %s: %w", r.id, err)
		}
		if now, _ := r.log.currentTerm(); now != term {
			continue // deposed: the next leader coordinates from the top
		}
		if err == nil {
			b, merr := json.Marshal(res)
			if merr == nil {
				aerr := r.log.append(term, &Entry{Op: OpFinish, Job: r.id, Result: b})
				switch {
				case aerr == nil:
					return res, nil
				case errors.Is(aerr, errDeposed):
					continue // deposed just now: the next leader replays and finishes
				}
				return nil, fmt.Errorf("jobtest: job %s: log the result: %w", r.id, aerr)
			}
			err = fmt.Errorf("encode the result: %w", merr)
		}
		fail := &Entry{Op: OpFail, Job: r.id, Error: err.Error(), Failures: r.log.lastFailures()}
		if aerr := r.log.append(term, fail); errors.Is(aerr, errDeposed) {
			continue
		} else if aerr != nil {
			return nil, fmt.Errorf("jobtest: job %s failed (%w), and the failure could not be logged: %w", r.id, err, aerr)
		}
		return nil, fmt.Errorf("jobtest: job %s failed: %w", r.id, err)
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

// startWorker starts a party's worker. It begins once prev, the worker of
// the party's previous life (if any), has ended and closed its session.
func (r *runner) startWorker(name string, prev *worker) {
	ctx, cancel := context.WithCancel(r.ctx)
	w := &worker{r: r, name: name, ctx: ctx, cancel: cancel, done: make(chan struct{})}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		cancel()
		return // a fault injected while the run ends: nothing runs any more
	}
	r.workers[name] = w
	r.workerDone.Add(1)
	go func() {
		defer r.workerDone.Done()
		if prev != nil {
			<-prev.done // the old session's step honours its cancelled context
		}
		w.run()
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

// errNoSecrets is what a party given no Secrets reads.
var errNoSecrets = errors.New("jobtest: no secrets given for this party (Options.Secrets)")

type noSecrets struct{ party string }

func (s noSecrets) ReadSecret(name string) ([]byte, error) {
	return nil, fmt.Errorf("party %s: read %s: %w", s.party, name, errNoSecrets)
}

func (s noSecrets) WriteSecret(name string, _ []byte) error {
	return fmt.Errorf("party %s: write %s: %w", s.party, name, errNoSecrets)
}

func (s noSecrets) Parsed(names []string, _ func([][]byte) (any, error)) (any, error) {
	return nil, fmt.Errorf("party %s: read %v: %w", s.party, names, errNoSecrets)
}
