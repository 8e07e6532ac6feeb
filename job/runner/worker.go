package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/wire"
)

// ErrUnrecorded marks a send a member refused because it cannot record it
// in its audit ledger (a full disk). A Network that returns it implements
// UnrecordedSender, so the worker can still tell the coordinator why.
var ErrUnrecorded = errors.New("cannot record what is sent")

// ErrRestarted marks an attempt this member began before its node
// restarted: the messages of the attempt it received are gone, so it
// tells the coordinator at once instead of waiting out the step timeout.
var ErrRestarted = errors.New("restarted mid-attempt")

// UnrecordedSender is a Network that can send a failure report it cannot
// record: the message carries only the error, no data of the party.
type UnrecordedSender interface {
	SendUnrecorded(ctx context.Context, to string, m *wire.Message) error
}

// Member is what a worker needs of the member it runs on besides the
// network: its own key material and tables.
type Member interface {
	// Secrets is the member's data dir (key shares, kept models, scratch).
	Secrets() job.Secrets
	// TableSource resolves one of the member's own tables (see
	// job.Participant.TableSource).
	TableSource(t job.TableSpec) (table.Source, error)
	// Dataset names the dataset one of the member's tables resolves to
	// (job.DatasetName): what its policy decides about. Its error, that the
	// table resolves to nothing usable, stays in the member's own log.
	Dataset(t job.TableSpec) (string, error)
	// Redact rewrites what a failure report must not carry (the member's
	// own paths) before it leaves for the coordinator.
	Redact(msg string) string
	// Submitter verifies a job's submission against the spec and returns
	// the member that signed it.
	Submitter(spec []byte, s *Submission) (string, error)
	// Leader is the member that leads now, as this member knows it from
	// the log's authenticated transport ("" while none is known). A step's
	// Coordinator must be the leader: a party sends its output, and a kind
	// gives the root of its aggregations, by that name.
	Leader(ctx context.Context) string
}

// Rebooted is a Member that knows which attempts began before its node
// started: those its node's log held when the node's process started, and
// those its peers began before (peers run an attempt as soon as their own
// logs hold it, and may send this node its messages before its log does).
// An attempt begun before may have had messages acknowledged by the
// node's earlier process and lost with it, before any mark of it was
// durable, so the worker reports such an attempt as restarted at once
// rather than wait for messages that will not come until the step's
// timeout, and keeps no mark (markStarted). An attempt the earlier
// process never began is re-run for nothing, which costs one attempt.
type Rebooted interface {
	StartedBeforeBoot(step job.Step) bool
}

// Worker runs one job's steps on one member: it opens the job's session at
// the first step the member takes part in (again after a restart), runs
// the attempts the log holds open one at a time in log order, reports each
// output to that attempt's coordinator alone, and closes the session when
// its context ends.
type Worker struct {
	Self   string
	Job    ActiveJob // the job: id, spec and seed (Open is ignored)
	Kinds  job.Registry
	Net    job.Party
	State  *State
	Member Member
	// Policy is the member's organisation policy; nil runs every job (tests
	// of the runtime itself).
	Policy *policy.Enforcer
	// Config holds the timeouts; a worker reads Grace, which bounds how
	// long sending a report may take. Run refuses one that does not
	// Validate.
	Config
	Log *slog.Logger
	// OnOutput, if set, sees every output the session returned, before it
	// is sent.
	OnOutput func(step job.Step, output []byte)

	wake     chan struct{}
	mu       sync.Mutex
	open     []job.Step      // attempts the log holds open for this member, oldest first
	reported map[stepID]bool // attempts whose output was sent, or that were superseded
	marking  chan struct{}   // closed once the attempt's mark is written (Run's goroutine only)
	markText string          // markOf, once computed (Run's goroutine only)
	req      *policy.Request // the job's admission request, built once (Run's goroutine only)
	kind     job.Kind        // set when the session opens; used only by Run's goroutine
	guard    *policy.Guard   // the policy's guard of the open session
	watching *peerFailures   // the running attempt's peers' failure notices (under mu)
}

type stepID struct {
	phase          string
	round, attempt int
}

func idOf(s job.Step) stepID { return stepID{s.Phase, s.Round, s.Attempt} }

// Want tells the worker which attempts are open now. It may be called
// before Run and from any goroutine.
func (w *Worker) Want(open []job.Step) {
	w.mu.Lock()
	w.init()
	w.open = open
	wake := w.wake
	w.mu.Unlock()
	select {
	case wake <- struct{}{}:
	default:
	}
}

// init makes the worker's channels; w.mu is held.
func (w *Worker) init() {
	if w.wake == nil {
		w.wake = make(chan struct{}, 1)
		w.reported = map[stepID]bool{}
	}
}

// next returns the oldest open attempt not yet reported.
func (w *Worker) next() (job.Step, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.open {
		if !w.reported[idOf(s)] {
			return s, true
		}
	}
	return job.Step{}, false
}

// stillOpen reports whether an attempt is still open in the log.
func (w *Worker) stillOpen(id stepID) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.ContainsFunc(w.open, func(s job.Step) bool { return idOf(s) == id })
}

func (w *Worker) markReported(id stepID) {
	w.mu.Lock()
	w.reported[id] = true
	w.mu.Unlock()
}

// Run runs the job's steps until ctx ends, then closes the session, and
// returns nil. It returns an error wrapping ErrConfig at once, having run
// nothing, when w's Config does not Validate.
func (w *Worker) Run(ctx context.Context) error {
	if err := w.Validate(); err != nil {
		return fmt.Errorf("worker %s, job %s: %w", w.Self, w.Job.ID, err)
	}
	w.mu.Lock()
	w.init()
	wake := w.wake
	w.mu.Unlock()
	var sess job.Session
	defer func() {
		w.waitMark()
		if sess != nil {
			sess.Close()
		}
	}()
	for {
		step, ok := w.next()
		if !ok {
			select {
			case <-ctx.Done():
				return nil
			case <-wake:
				continue
			}
		}
		id := idOf(step)
		out, err, superseded, cutShort := w.runAttempt(ctx, &sess, step, wake)
		if ctx.Err() != nil {
			return nil
		}
		if !superseded {
			if err != nil && step.Phase != AdmitPhase && !errors.Is(err, ErrRestarted) {
				w.tellPeers(ctx, step) // a restart ends the attempt at the coordinator anyway
			}
			w.report(ctx, step, out, err, cutShort)
		}
		w.markReported(id) // a superseded attempt: the log moved on, a newer one reruns it
		// Pass on a wake-up the watcher may have consumed.
		select {
		case wake <- struct{}{}:
		default:
		}
	}
}

// runAttempt runs one attempt, opening the session first if needed, and
// cancels it if the log supersedes or finishes it meanwhile. cutShort
// reports a step that failed because another party failed it.
func (w *Worker) runAttempt(ctx context.Context, sess *job.Session, step job.Step, wake chan struct{}) (out []byte, err error, superseded, cutShort bool) {
	id := idOf(step)
	actx, cancel := context.WithCancel(ctx)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-actx.Done():
				return
			case <-wake:
				if !w.stillOpen(id) {
					cancel()
					return
				}
			}
		}
	}()
	stepCtx, stepCancel := context.WithTimeout(actx, step.Timeout())
	stopWatch := func() {}
	if step.Phase != AdmitPhase {
		stopWatch = w.watchPeers(stepCtx, step)
	}
	out, err = w.runStep(ctx, stepCtx, sess, step)
	cutShort = errors.Is(err, ErrPeerFailed)
	stopWatch()
	stepCancel()
	superseded = actx.Err() != nil
	cancel()
	<-finished
	return out, err, superseded, cutShort
}

// runStep runs one step: the admit phase is the runtime's own; any other
// step runs in the kind's session, once this member's policy admits the
// job, opening the session first if needed (sessionCtx ends with the job
// here, stepCtx with the attempt).
func (w *Worker) runStep(sessionCtx, stepCtx context.Context, sess *job.Session, step job.Step) ([]byte, error) {
	spec, kind, err := ParseJob(w.Kinds, w.Job.ID, w.Job.Spec)
	if err != nil {
		return nil, err
	}
	if lead := w.Member.Leader(stepCtx); lead != step.Coordinator {
		return nil, fmt.Errorf("%w: step %s/%d names %s its coordinator, but %s leads", ErrRefused, step.Phase, step.Round, step.Coordinator, lead)
	}
	if step.Phase == AdmitPhase {
		return w.admitStep(stepCtx, step, spec, kind)
	}
	req, err := w.admitted(step, spec, kind)
	if err != nil {
		return nil, err
	}
	if err := w.markStarted(step); err != nil {
		return nil, err
	}
	if *sess == nil {
		if w.Policy != nil {
			w.guard = w.Policy.Guard(w.Job.ID, req.Uses, spec.PartyNames(), req.Datasets)
		}
		p := &participant{w: w, spec: spec}
		var s job.Session
		if _, err := w.guarded(step, sess, func() ([]byte, error) {
			var err error
			s, err = kind.Open(sessionCtx, p)
			return nil, err
		}); errors.Is(err, errSessionPanicked) {
			return nil, err
		} else if err != nil {
			return nil, fmt.Errorf("party %s: open job session: %w", w.Self, err)
		}
		*sess, w.kind = s, kind
		if err := stepCtx.Err(); err != nil {
			return nil, err
		}
	}
	return w.guarded(step, sess, func() ([]byte, error) { return (*sess).Step(stepCtx, step) })
}

// errSessionPanicked is a kind's code that panicked in a step.
var errSessionPanicked = errors.New("the job's session failed unexpectedly (a bug: the member's log has it)")

// guarded runs f, a call into the kind's code, and turns a panic into the
// step's error: a kind's bug, or a hostile member's bytes its decoder did
// not refuse, then ends this member's attempt instead of its node and
// every other job on it. The panic's value and stack go to the member's
// own log only (the value may hold data); the session, in no known state,
// is closed, and the next attempt opens a new one, as after a restart.
// Goroutines a session starts itself are its own to guard.
func (w *Worker) guarded(step job.Step, sess *job.Session, f func() ([]byte, error)) (out []byte, err error) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		w.logger().Error("the job's session panicked", "job", w.Job.ID, "phase", step.Phase, "round", step.Round,
			"attempt", step.Attempt, "panic", v, "stack", string(debug.Stack()))
		if *sess != nil {
			func() {
				defer func() { _ = recover() }()
				(*sess).Close()
			}()
			*sess = nil
		}
		out, err = nil, fmt.Errorf("party %s, step %s/%d: %w", w.Self, step.Phase, step.Round, errSessionPanicked)
	}()
	return f()
}

// startedName is the job scratch file that marks an attempt this member
// began (job.Secrets keeps it across restarts and drops it with the job).
func startedName(step job.Step) string {
	return fmt.Sprintf("jobs/%s/runner/started-%s-%d-%d", step.Job, url.PathEscape(step.Phase), step.Round, step.Attempt)
}

// markStarted records that this member begins an attempt, or returns
// ErrRestarted when it began it before: a worker runs each attempt once,
// so such a mark was left by this member before its node restarted. (If
// it had reported the attempt before, the coordinator has its output and
// reads no second report.) A mark carries the job's seed, so one left by
// another job of the same id (a test's fixed id) is not this job's. The
// mark only speeds recovery up (the step timeout would end the attempt
// too), so it is written while the step runs (a durable write costs an
// fsync, which a short step would otherwise wait for), and a member that
// cannot keep it runs the attempt and logs why.
//
// A member that knows its boot (Rebooted) keeps no mark: every attempt a
// mark could show begun was started by an entry its log held when the
// process started, so StartedBeforeBoot already reports it, and the
// mark's file (a create, an fsync and a rename per step, 10 % of sjc's
// test CPU on this machine's disk) would add nothing.
func (w *Worker) markStarted(step job.Step) error {
	if r, ok := w.Member.(Rebooted); ok {
		if r.StartedBeforeBoot(step) {
			return w.restarted(step, "the attempt began before its node started")
		}
		return nil
	}
	w.waitMark()
	mark := w.markOf()
	b, err := w.Member.Secrets().ReadSecret(startedName(step))
	switch {
	case err == nil && string(b) == mark:
		return w.restarted(step, "what it had received of the attempt is lost")
	case err == nil || errors.Is(err, fs.ErrNotExist):
		done := make(chan struct{})
		w.marking = done
		go func() {
			defer close(done)
			if err := w.Member.Secrets().WriteSecret(startedName(step), []byte(mark)); err != nil {
				w.markFailed(step, err)
			}
		}()
	default:
		w.markFailed(step, err)
	}
	return nil
}

// restarted is ErrRestarted for an attempt this member began before, and
// why it knows.
func (w *Worker) restarted(step job.Step, why string) error {
	return fmt.Errorf("party %s %w of step %s/%d (attempt %d): %s", w.Self, ErrRestarted, step.Phase, step.Round, step.Attempt, why)
}

// waitMark waits for the mark being written, if any (Run waits for it
// before it returns, so the write has an owner).
func (w *Worker) waitMark() {
	if w.marking != nil {
		<-w.marking
		w.marking = nil
	}
}

// markOf is a mark's contents: a digest of the job's seed and
// submission, which a job of the same id submitted again (a test's fixed
// id and seed) does not share.
func (w *Worker) markOf() string {
	if w.markText == "" {
		h := sha256.New()
		h.Write(w.Job.Seed)
		if rec, ok := w.State.Job(w.Job.ID); ok && rec.Submission != nil {
			fmt.Fprintf(h, "\x00%d\x00%x", rec.Submission.Time.UnixNano(), rec.Submission.Nonce)
		}
		w.markText = "begun " + hex.EncodeToString(h.Sum(nil)[:8]) + "\n"
	}
	return w.markText
}

func (w *Worker) markFailed(step job.Step, err error) {
	w.logger().Warn("cannot mark the attempt; a restart in it will wait for the step timeout",
		"job", step.Job, "phase", step.Phase, "round", step.Round, "err", err)
}

// report sends the attempt's output (or error) to its coordinator alone;
// cutShort marks an error that followed another party's failure.
func (w *Worker) report(ctx context.Context, step job.Step, output []byte, err error, cutShort bool) {
	r := report{Output: output}
	disclosure := wire.DiscloseControl
	if err != nil {
		r.Output, r.Error, r.Restarted = nil, w.Member.Redact(err.Error()), errors.Is(err, ErrRestarted)
		r.CutShort = cutShort && !r.Restarted
		w.logger().Warn("step failed", "job", step.Job, "phase", step.Phase, "round", step.Round, "err", err)
	} else if step.Phase != AdmitPhase {
		if w.kind != nil {
			disclosure = w.kind.OutputDisclosure(step)
		}
		if err := w.check(step.Coordinator, step.Message(w.Self, OutputType, nil), disclosure); err != nil {
			r = report{Error: err.Error()} // the output stays here
			disclosure = wire.DiscloseControl
		} else if w.OnOutput != nil {
			w.OnOutput(step, slices.Clone(output))
		}
	}
	body, err := wire.Marshal(&r)
	if err != nil {
		body, _ = wire.Marshal(&report{Error: fmt.Sprintf("party %s: encode output: %v", w.Self, err)})
		disclosure = wire.DiscloseControl
	}
	w.sendReport(ctx, step, body, disclosure)
}

// Report retries: the first wait after a failed send, and the longest.
const (
	reportRetryFirst = 100 * time.Millisecond
	reportRetryMax   = 2 * time.Second
)

// sendReport sends a report to the attempt's coordinator, and again after
// a send that failed (a stream reset, the coordinator's node busy) for as
// long as the attempt stays open, up to the step's timeout: a report lost
// to one failed send would leave the party silent for the whole step
// timeout. The coordinator reads the first report that arrives; a
// duplicate waits in its mailbox until the job ends. Each send is bounded
// by the grace period.
func (w *Worker) sendReport(ctx context.Context, step job.Step, body []byte, d wire.Disclosure) {
	give := time.Now().Add(step.Timeout())
	wait := reportRetryFirst
	for {
		err := w.sendReportOnce(ctx, step, body, d)
		if err == nil {
			return
		}
		if ctx.Err() != nil || !w.stillOpen(idOf(step)) || time.Now().After(give) {
			w.logger().Warn("could not report step output", "job", step.Job, "phase", step.Phase, "coordinator", step.Coordinator, "err", err)
			return
		}
		w.logger().Debug("report not sent; retrying", "job", step.Job, "phase", step.Phase, "coordinator", step.Coordinator, "in", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, reportRetryMax)
	}
}

// sendReportOnce makes one attempt to send a report. A member that cannot
// record it says so unrecorded, with nothing of the party's data, so that
// the job's failure names the cause.
func (w *Worker) sendReportOnce(ctx context.Context, step job.Step, body []byte, d wire.Disclosure) error {
	sctx, cancel := context.WithTimeout(ctx, w.Grace)
	defer cancel()
	err := w.Net.Send(sctx, step.Coordinator, step.Message(w.Self, OutputType, body), d)
	if us, ok := w.Net.(UnrecordedSender); ok && errors.Is(err, ErrUnrecorded) {
		failure, _ := wire.Marshal(&report{Error: fmt.Sprintf("party %s: %v", w.Self, err)})
		err = us.SendUnrecorded(sctx, step.Coordinator, step.Message(w.Self, OutputType, failure))
	}
	return err
}

func (w *Worker) logger() *slog.Logger {
	if w.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Log
}

// check asks the policy's guard whether a message may leave for to.
func (w *Worker) check(to string, m *wire.Message, d wire.Disclosure) error {
	if w.guard == nil {
		return nil
	}
	rec, _, ok := w.State.Step(w.Job.ID, m.Phase, m.Round)
	var coordinator string
	var parties []string
	if ok && rec != nil {
		coordinator, parties = rec.Step.Coordinator, rec.Step.Parties
	}
	return w.guard.Send(to, m, d, coordinator, parties)
}

// participant implements job.Participant for one job's session. Every
// message its session sends passes the policy's guard first.
type participant struct {
	w    *Worker
	spec *job.Spec
}

func (p *participant) Send(ctx context.Context, to string, m *wire.Message, d wire.Disclosure) error {
	if err := p.w.check(to, m, d); err != nil {
		return err
	}
	return p.w.Net.Send(ctx, to, m, d)
}

// Receive ends at once when from fails the attempt (peerfail.go).
func (p *participant) Receive(ctx context.Context, from string, k wire.Key) (*wire.Message, error) {
	return p.w.receive(ctx, from, k)
}

// Guard is the policy's guard of the session (one that allows everything
// when the member runs without a policy).
func (p *participant) Guard() job.Guard {
	if p.w.guard == nil {
		return allowAll{}
	}
	return p.w.guard
}

// allowAll is the guard of a member without a policy.
type allowAll struct{}

func (allowAll) Aggregate(job.Step, job.Aggregate) error        { return nil }
func (allowAll) Spend(job.Step, job.Spend) error                { return nil }
func (allowAll) Bounds(string, string) (float64, float64, bool) { return 0, 0, false }
func (allowAll) Release(job.Step, job.Release) error            { return nil }
func (allowAll) Publish(job.Step, job.Publication) error        { return nil }
func (allowAll) Formed(job.Step) error                          { return nil }
func (allowAll) Synthetic(job.Step, string) error               { return nil }
func (allowAll) MinK() (int, error)                             { return 0, nil }

func (p *participant) Self() string           { return p.w.Self }
func (p *participant) JobID() string          { return p.w.Job.ID }
func (p *participant) Spec() *job.Spec        { return p.spec }
func (p *participant) Seed() []byte           { return slices.Clone(p.w.Job.Seed) }
func (p *participant) Secrets() job.Secrets   { return p.w.Member.Secrets() }
func (p *participant) History() []*job.Record { return KindHistory(p.w.State.History(p.w.Job.ID)) }

// Log is the member's log, with the job's id.
func (p *participant) Log() *slog.Logger { return p.w.logger().With("job", p.w.Job.ID) }

func (p *participant) TableSource(t job.TableSpec) (table.Source, error) {
	return p.w.Member.TableSource(t)
}
