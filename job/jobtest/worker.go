package jobtest

import (
	"context"
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
	"github.com/cohortdm/cohort/table"
)

// The participant side, as the node's: one worker per party owns the
// party's session, opens it at the first step the party runs (again after
// a restart), runs the attempts the log holds open one at a time in log
// order, reports each output to that attempt's coordinator alone, and
// closes the session when the job ends or the party restarts.

// worker runs one party's steps.
type worker struct {
	r      *runner
	name   string
	ctx    context.Context // ends when the job ends or the party restarts
	cancel context.CancelFunc
	done   chan struct{}
}

func (w *worker) run() {
	defer close(w.done)
	var sess job.Session
	defer func() {
		if sess != nil {
			sess.Close()
		}
	}()
	seen := map[stepID]bool{} // attempts reported or superseded
	for w.ctx.Err() == nil {
		changed := w.r.log.watch()
		step, ok, running := w.r.log.next(w.name, seen)
		if !running {
			return
		}
		if !ok {
			select {
			case <-w.ctx.Done():
				return
			case <-changed:
				continue
			}
		}
		id := idOf(step)
		// Run the attempt; cancel it once the log supersedes or finishes it.
		ctx, cancel := context.WithCancel(w.ctx)
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			for {
				changed := w.r.log.watch()
				if !w.r.log.open(id) {
					cancel()
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-changed:
				}
			}
		}()
		var out []byte
		var err error
		if sess == nil {
			sess, err = w.open()
		}
		if err == nil {
			stepCtx, stepCancel := context.WithTimeout(ctx, step.Timeout())
			out, err = sess.Step(stepCtx, step)
			stepCancel()
		}
		superseded := ctx.Err() != nil
		cancel()
		<-watched
		if w.ctx.Err() != nil {
			return
		}
		seen[id] = true
		if !superseded {
			w.report(step, out, err)
		}
	}
}

// open opens the party's session for the job.
func (w *worker) open() (job.Session, error) {
	spec, err := w.r.parseSpec()
	if err != nil {
		return nil, err
	}
	secrets, ok := w.r.opts.Secrets[w.name]
	if !ok {
		secrets = noSecrets{w.name}
	}
	p := &participant{Party: w.r.net.Party(w.name), r: w.r, spec: spec, secrets: secrets}
	sess, err := w.r.kind.Open(w.ctx, p)
	if err != nil {
		return nil, fmt.Errorf("party %s: open job session: %w", w.name, err)
	}
	return sess, nil
}

// report sends the attempt's output (or error) to its coordinator alone,
// disclosing what the kind says the output discloses.
func (w *worker) report(step job.Step, output []byte, err error) {
	out := job.Report{Output: output, Bytes: w.r.net.BytesSent(w.name)}
	disclosure := protocol.DiscloseControl
	if err != nil {
		out.Output, out.Error = nil, err.Error()
	} else {
		disclosure = w.r.kind.OutputDisclosure(step)
		w.r.recordOutput(Output{Party: w.name, Step: step, Output: slices.Clone(output)})
	}
	body, err := protocol.Marshal(&out)
	if err != nil {
		body, _ = protocol.Marshal(&job.Report{Error: fmt.Sprintf("party %s: encode output: %v", w.name, err), Bytes: out.Bytes})
		disclosure = protocol.DiscloseControl
	}
	ctx, cancel := context.WithTimeout(w.ctx, w.r.opts.Grace)
	defer cancel()
	// A report that fails is lost, as over the network: the coordinator
	// counts the party silent.
	_ = w.r.net.Party(w.name).Send(ctx, step.Coordinator, step.Message(w.name, job.OutputType, body), disclosure)
}

// participant implements job.Participant for one party's session.
type participant struct {
	job.Party
	r       *runner
	spec    *job.Spec
	secrets job.Secrets
}

func (p *participant) JobID() string          { return p.r.id }
func (p *participant) Spec() *job.Spec        { return p.spec }
func (p *participant) Seed() []byte           { return slices.Clone(p.r.seed) }
func (p *participant) Secrets() job.Secrets   { return p.secrets }
func (p *participant) History() []*job.Record { return p.r.log.history() }

// TableSource resolves a table as a simulation does: the spec's own source
// or path, inside Options.TablesDir; nothing outside it can be named.
func (p *participant) TableSource(t job.TableSpec) (table.Source, error) {
	if p.r.opts.TablesDir == "" {
		return table.Source{}, fmt.Errorf("jobtest: party %s: no tables directory (Options.TablesDir)", p.Self())
	}
	return job.ResolveSource(p.r.opts.TablesDir, t, nil, true)
}

// DirSecrets returns the secrets in a node's data dir, as a node reads
// them (job.DirSecrets).
func DirSecrets(dir string) job.Secrets { return job.DirSecrets(dir) }
