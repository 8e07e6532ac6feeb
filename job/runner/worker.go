package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
	"github.com/cohortdm/cohort/table"
)

// ErrUnrecorded marks a send a member refused because it cannot record it
// in its audit ledger (a full disk). A Network that returns it implements
// UnrecordedSender, so the worker can still tell the coordinator why.
var ErrUnrecorded = errors.New("cannot record what is sent")

// UnrecordedSender is a Network that can send a failure report it cannot
// record: the message carries only the error, no data of the party.
type UnrecordedSender interface {
	SendUnrecorded(ctx context.Context, to string, m *protocol.Message) error
}

// Member is what a worker needs of the member it runs on besides the
// network: its own key material and tables.
type Member interface {
	// Secrets is the member's data dir (key shares, kept models, scratch).
	Secrets() job.Secrets
	// TableSource resolves one of the member's own tables (see
	// job.Participant.TableSource).
	TableSource(t job.TableSpec) (table.Source, error)
	// Redact rewrites what a failure report must not carry (the member's
	// own paths) before it leaves for the coordinator.
	Redact(msg string) string
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
	// Grace bounds how long sending a report may take.
	Grace time.Duration
	Log   *slog.Logger
	// OnOutput, if set, sees every output the session returned, before it
	// is sent.
	OnOutput func(step job.Step, output []byte)

	wake     chan struct{}
	mu       sync.Mutex
	open     []job.Step      // attempts the log holds open for this member, oldest first
	reported map[stepID]bool // attempts whose output was sent, or that were superseded
	kind     job.Kind        // set when the session opens; used only by Run's goroutine
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

// Run runs the job's steps until ctx ends, then closes the session.
func (w *Worker) Run(ctx context.Context) {
	w.mu.Lock()
	w.init()
	wake := w.wake
	w.mu.Unlock()
	var sess job.Session
	defer func() {
		if sess != nil {
			sess.Close()
		}
	}()
	for {
		step, ok := w.next()
		if !ok {
			select {
			case <-ctx.Done():
				return
			case <-wake:
				continue
			}
		}
		id := idOf(step)
		out, err, superseded := w.runAttempt(ctx, &sess, step, wake)
		if ctx.Err() != nil {
			return
		}
		if !superseded {
			w.report(ctx, step, out, err)
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
// cancels it if the log supersedes or finishes it meanwhile.
func (w *Worker) runAttempt(ctx context.Context, sess *job.Session, step job.Step, wake chan struct{}) ([]byte, error, bool) {
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
	var out []byte
	var err error
	if *sess == nil {
		*sess, err = w.openSession(ctx, actx)
	}
	if err == nil {
		stepCtx, stepCancel := context.WithTimeout(actx, step.Timeout())
		out, err = (*sess).Step(stepCtx, step)
		stepCancel()
	}
	superseded := actx.Err() != nil
	cancel()
	<-finished
	return out, err, superseded
}

// openSession opens the job's session on this member: sessionCtx ends with
// the job here, attemptCtx with the attempt that opens it.
func (w *Worker) openSession(sessionCtx, attemptCtx context.Context) (job.Session, error) {
	spec, kind, err := ParseJob(w.Kinds, w.Job.ID, w.Job.Spec)
	if err != nil {
		return nil, err
	}
	p := &participant{Party: w.Net, w: w, spec: spec}
	sess, err := kind.Open(sessionCtx, p)
	if err != nil {
		return nil, fmt.Errorf("party %s: open job session: %w", w.Self, err)
	}
	w.kind = kind
	return sess, attemptCtx.Err()
}

// report sends the attempt's output (or error) to its coordinator alone.
func (w *Worker) report(ctx context.Context, step job.Step, output []byte, err error) {
	r := report{Output: output}
	disclosure := protocol.DiscloseControl
	if err != nil {
		r.Output, r.Error = nil, w.Member.Redact(err.Error())
		w.logger().Warn("step failed", "job", step.Job, "phase", step.Phase, "round", step.Round, "err", err)
	} else {
		if w.kind != nil {
			disclosure = w.kind.OutputDisclosure(step)
		}
		if w.OnOutput != nil {
			w.OnOutput(step, slices.Clone(output))
		}
	}
	body, err := protocol.Marshal(&r)
	if err != nil {
		body, _ = protocol.Marshal(&report{Error: fmt.Sprintf("party %s: encode output: %v", w.Self, err)})
		disclosure = protocol.DiscloseControl
	}
	sctx, cancel := context.WithTimeout(ctx, w.Grace)
	defer cancel()
	err = w.Net.Send(sctx, step.Coordinator, step.Message(w.Self, OutputType, body), disclosure)
	if us, ok := w.Net.(UnrecordedSender); ok && errors.Is(err, ErrUnrecorded) {
		// The member cannot record what it sends: say so, with nothing of
		// the party's data, so the job's failure names the cause.
		failure, _ := protocol.Marshal(&report{Error: fmt.Sprintf("party %s: %v", w.Self, err)})
		err = us.SendUnrecorded(sctx, step.Coordinator, step.Message(w.Self, OutputType, failure))
	}
	if err != nil {
		w.logger().Warn("could not report step output", "job", step.Job, "phase", step.Phase, "coordinator", step.Coordinator, "err", err)
	}
}

func (w *Worker) logger() *slog.Logger {
	if w.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Log
}

// participant implements job.Participant for one job's session.
type participant struct {
	job.Party
	w    *Worker
	spec *job.Spec
}

func (p *participant) Self() string           { return p.w.Self }
func (p *participant) JobID() string          { return p.w.Job.ID }
func (p *participant) Spec() *job.Spec        { return p.spec }
func (p *participant) Seed() []byte           { return slices.Clone(p.w.Job.Seed) }
func (p *participant) Secrets() job.Secrets   { return p.w.Member.Secrets() }
func (p *participant) History() []*job.Record { return p.w.State.History(p.w.Job.ID) }
func (p *participant) TableSource(t job.TableSpec) (table.Source, error) {
	return p.w.Member.TableSource(t)
}
