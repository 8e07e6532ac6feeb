package node

import (
	"context"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/table"
)

// The participant side: one runtime Worker (package job/runner) per job
// this node takes part in. It owns the job's session: it opens it at the
// first step this node runs (again after a restart), runs the step
// attempts the log holds open one at a time, reports each output to that
// attempt's coordinator alone, and closes the session when the job ends.

// worker is one job's runtime worker on this node.
type worker struct {
	w      *runner.Worker
	cancel context.CancelFunc
	// ended is set when the job has ended in the log, so that the
	// node removes the job's scratch once the session is closed.
	ended bool
}

// newWorker starts a job's worker; r.mu is held.
func (r *jobRunner) newWorker(j runner.ActiveJob) *worker {
	ctx, cancel := context.WithCancel(r.ctx)
	rw := &runner.Worker{Self: r.Self, Job: j, Kinds: r.Kinds, Net: r.Net, State: r.FSM.jobs,
		Member: r.Member, Policy: r.Policy, Config: r.Config(), Log: r.Log}
	w := &worker{w: rw, cancel: cancel}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		if err := rw.Run(ctx); err != nil {
			r.Log.Error("job not run here", "job", j.ID, "err", err)
		}
		r.mu.Lock()
		ended := w.ended
		r.mu.Unlock()
		if ended {
			r.removeScratch(j.ID)
		}
	}()
	return w
}

// want tells the worker which attempts are open now.
func (w *worker) want(open []job.Step) { w.w.Want(open) }

// stop ends the job here: the running step is cancelled and the session
// closed by the worker's goroutine.
func (w *worker) stop() { w.cancel() }

// end stops the worker of a job that has ended in the log; its scratch
// goes once the session is closed. r.mu is held.
func (w *worker) end() {
	w.ended = true
	w.cancel()
}

// member is what the runtime's worker needs of this node. Its secrets
// are made once: they cache what they parse.
type member struct {
	n       *Node
	secrets job.Secrets
}

func (m member) Secrets() job.Secrets { return m.secrets }

// StartedBeforeBoot implements runner.Rebooted: the attempt's start entry
// was in the node's log when its process started, or the leader appended
// it before the node began to take job messages (fsm.noteStart).
func (m member) StartedBeforeBoot(s job.Step) bool { return m.n.fsm.startedBeforeBoot(s) }

// TableSource resolves a table through the node's own mapping (node.yaml
// tables:), else the spec's path, inside the node's tables dir; nothing
// outside it can be named, and a source named by the spec itself is
// refused (job.ResolveSource).
// The node's max_table_rows applies unless the catalogue gives the table
// its own max_rows.
func (m member) TableSource(t job.TableSpec) (table.Source, error) {
	src, err := job.ResolveSource(m.n.cfg.TablesDir, t, m.n.cfg.Tables, false)
	if err == nil && src.MaxRows == 0 {
		src.MaxRows = m.n.cfg.MaxTableRows
	}
	return src, err
}

// Dataset names the dataset a table resolves to: the catalogue's name for
// it, else its path inside the tables dir (job.DatasetName).
func (m member) Dataset(t job.TableSpec) (string, error) {
	src, err := m.TableSource(t)
	if err != nil {
		return "", err
	}
	return job.DatasetName(m.n.cfg.TablesDir, src, m.n.cfg.Tables)
}

// Redact rewrites the node's own directories out of a step's error (see
// Config.redactPaths).
func (m member) Redact(msg string) string { return m.n.cfg.redactPaths(msg) }
