package node

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
	"github.com/cohortdm/cohort/table"
)

// The participant side: one worker per job this node takes part in. The
// worker owns the job's session: it opens it at the first step this node
// runs (again after a restart), runs the step attempts the log holds open
// one at a time, reports each output to that attempt's coordinator alone,
// and closes the session when the job ends.

// worker runs one job's steps on this node.
type worker struct {
	n      *Node
	job    activeJob
	ctx    context.Context // ends when the job ends here
	cancel context.CancelFunc
	wake   chan struct{}
	kind   job.Kind // set when the session opens; used only by run's goroutine

	// ended is set when the job has ended in the log, so that the
	// worker removes the job's scratch once its session is closed.
	ended atomic.Bool

	mu       sync.Mutex
	open     []job.Step      // attempts the log holds open for this node, oldest first
	reported map[stepID]bool // attempts whose output was sent
}

// newWorker starts a job's worker; n.mu is held.
func (n *Node) newWorker(j activeJob) *worker {
	ctx, cancel := context.WithCancel(n.ctx)
	w := &worker{n: n, job: j, ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1),
		reported: map[stepID]bool{}}
	n.wg.Add(1)
	go w.run()
	return w
}

// want tells the worker which attempts are open now.
func (w *worker) want(open []job.Step) {
	w.mu.Lock()
	w.open = open
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// stop ends the job here: the running step is cancelled and the session
// closed by the worker's goroutine.
func (w *worker) stop() { w.cancel() }

// end stops the worker of a job that has ended in the log; its scratch
// goes once the session is closed.
func (w *worker) end() {
	w.ended.Store(true)
	w.cancel()
}

func idOf(s job.Step) stepID { return stepID{s.Job, s.Phase, s.Round, s.Attempt} }

// next returns the oldest open attempt not yet reported.
func (w *worker) next() (job.Step, bool) {
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
func (w *worker) stillOpen(id stepID) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.open {
		if idOf(s) == id {
			return true
		}
	}
	return false
}

func (w *worker) run() {
	defer w.n.wg.Done()
	var sess job.Session
	defer func() {
		if sess != nil {
			sess.Close()
		}
		if w.ended.Load() {
			w.n.removeScratch(w.job.ID)
		}
	}()
	for {
		step, ok := w.next()
		if !ok {
			select {
			case <-w.ctx.Done():
				return
			case <-w.wake:
				continue
			}
		}
		id := idOf(step)
		// Run the attempt; cancel it if the log supersedes or finishes it.
		ctx, cancel := context.WithCancel(w.ctx)
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			for {
				select {
				case <-ctx.Done():
					return
				case <-w.wake:
					if !w.stillOpen(id) {
						cancel()
						return
					}
				}
			}
		}()
		var out []byte
		var err error
		if sess == nil {
			sess, err = w.openSession(ctx)
		}
		if err == nil {
			stepCtx, stepCancel := context.WithTimeout(ctx, step.Timeout())
			out, err = sess.Step(stepCtx, step)
			stepCancel()
		}
		superseded := ctx.Err() != nil
		cancel()
		<-finished
		if w.ctx.Err() != nil {
			return
		}
		if superseded {
			w.markReported(id) // the log moved on; a newer attempt reruns it
			continue
		}
		w.report(step, out, err)
		w.markReported(id)
		// Pass on a wake-up the watcher may have consumed.
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

func (w *worker) markReported(id stepID) {
	w.mu.Lock()
	w.reported[id] = true
	w.mu.Unlock()
}

// openSession opens the job's session on this node.
func (w *worker) openSession(ctx context.Context) (job.Session, error) {
	spec, kind, err := w.n.jobSpec(w.job.Kind, w.job.ID, w.job.Spec)
	if err != nil {
		return nil, err
	}
	sess, err := kind.Open(w.ctx, &party{n: w.n, id: w.job.ID, spec: spec, seed: w.job.Seed})
	if err != nil {
		return nil, fmt.Errorf("party %s: open job session: %w", w.n.cfg.Name, err)
	}
	w.kind = kind
	return sess, ctx.Err()
}

// report sends the attempt's output (or error) to its coordinator alone.
func (w *worker) report(step job.Step, output []byte, err error) {
	n := w.n
	out := job.Report{Output: output}
	disclosure := protocol.DiscloseControl
	if err != nil {
		out.Output, out.Error = nil, n.cfg.redactPaths(err.Error())
		n.log.Warn("step failed", "job", step.Job, "phase", step.Phase, "round", step.Round, "err", err)
	} else if w.kind != nil {
		disclosure = w.kind.OutputDisclosure(step)
	}
	out.Bytes = n.ms.bytesSent(step.Job)
	body, err := protocol.Marshal(&out)
	if err == nil {
		err = n.ms.send(w.ctx, step.Coordinator, step.Message(n.cfg.Name, job.OutputType, body), disclosure)
	}
	if err != nil && errors.Is(err, errLedger) {
		// The node cannot record what it sends (a full disk): say so, with
		// nothing of the party's data, so the result names the cause.
		failure, _ := protocol.Marshal(&job.Report{Error: fmt.Sprintf("party %s: %v", n.cfg.Name, err), Bytes: out.Bytes})
		err = n.ms.sendFailure(w.ctx, step.Coordinator, step.Message(n.cfg.Name, job.OutputType, failure))
	}
	if err != nil {
		n.log.Warn("could not report step output", "job", step.Job, "phase", step.Phase, "coordinator", step.Coordinator, "err", err)
	}
}

// party implements job.Participant (and the coordinator's job.Party) for
// one job on this node.
type party struct {
	n    *Node
	id   string
	spec *job.Spec
	seed []byte
}

func (p *party) Self() string         { return p.n.cfg.Name }
func (p *party) JobID() string        { return p.id }
func (p *party) Spec() *job.Spec      { return p.spec }
func (p *party) Seed() []byte         { return p.seed }
func (p *party) Secrets() job.Secrets { return p.n.secrets }
func (p *party) History() []*job.Record {
	return p.n.fsm.history(p.id)
}
func (p *party) Send(ctx context.Context, to string, m *protocol.Message, d protocol.Disclosure) error {
	return p.n.ms.send(ctx, to, m, d)
}
func (p *party) Receive(ctx context.Context, from string, k protocol.Key) (*protocol.Message, error) {
	return p.n.ms.box.Get(ctx, from, k)
}

// TableSource resolves a table through the node's own mapping (node.yaml
// tables:), else the spec's path, inside the node's tables dir (the spec's
// own directory in simulations); nothing outside it can be named, and a
// source named by the spec itself is refused (job.ResolveSource).
func (p *party) TableSource(t job.TableSpec) (table.Source, error) {
	return job.ResolveSource(p.n.cfg.TablesDir, t, p.n.cfg.Tables, false)
}

// jobSpec parses a committed spec and finds its kind.
func (n *Node) jobSpec(kindName, id string, raw []byte) (*job.Spec, job.Kind, error) {
	spec, err := job.ParseSpec(raw, "job "+id)
	if err != nil {
		return nil, nil, err
	}
	kind, ok := n.kinds[spec.Kind]
	if !ok {
		return nil, nil, fmt.Errorf("%w: unknown job kind %q (this node runs %v)", job.ErrSpec, kindName, n.kinds.Names())
	}
	return spec, kind, nil
}
