package node

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
)

// The participant side: running the steps this node takes part in.

// outputType is the message a party sends the coordinator when it finishes a step.
const outputType = "job/output"

// stepOutput is the body of an output message.
type stepOutput struct {
	Output []byte `msgpack:"output"`
	Error  string `msgpack:"error"`
	Bytes  int64  `msgpack:"bytes"`
}

// party implements job.Party (and job.Participant) for one job on this node.
type party struct {
	n    *Node
	id   string
	spec *job.Spec
}

func (p *party) Self() string         { return p.n.cfg.Name }
func (p *party) JobID() string        { return p.id }
func (p *party) Spec() *job.Spec      { return p.spec }
func (p *party) Secrets() job.Secrets { return p.n.secrets }
func (p *party) Send(ctx context.Context, to string, m *protocol.Message, d protocol.Disclosure) error {
	return p.n.ms.send(ctx, to, m, d)
}
func (p *party) Receive(ctx context.Context, from string, k protocol.Key) (*protocol.Message, error) {
	return p.n.ms.box.get(ctx, from, k)
}

// TablePath resolves a table against the node's tables dir (the spec's own
// directory in simulations).
func (p *party) TablePath(t job.TableSpec) string {
	if filepath.IsAbs(t.Path) {
		return t.Path
	}
	return filepath.Join(p.n.cfg.TablesDir, t.Path)
}

func (n *Node) jobSpec(j *JobRecord) (*job.Spec, job.Kind, error) {
	spec, err := job.ParseSpec(j.Spec, "job "+j.ID)
	if err != nil {
		return nil, nil, err
	}
	kind, ok := n.kinds[spec.Kind]
	if !ok {
		return nil, nil, fmt.Errorf("%w: unknown job kind %q", job.ErrSpec, spec.Kind)
	}
	return spec, kind, nil
}

// participate runs one step attempt and reports its output to the coordinator.
func (n *Node) participate(ctx context.Context, j *JobRecord, step job.Step, id stepID) {
	defer n.wg.Done()
	defer func() {
		n.mu.Lock()
		delete(n.participating, id)
		n.mu.Unlock()
	}()
	var out stepOutput
	disclosure := protocol.DiscloseControl
	spec, kind, err := n.jobSpec(j)
	if err == nil {
		disclosure = kind.OutputDisclosure(step)
		stepCtx, cancel := context.WithTimeout(ctx, step.Timeout())
		out.Output, err = kind.Participate(stepCtx, &party{n: n, id: j.ID, spec: spec}, step)
		cancel()
	}
	if ctx.Err() != nil {
		return // superseded or shutting down; the new attempt reruns it
	}
	if err != nil {
		out.Error = err.Error()
		n.log.Warn("step failed", "job", j.ID, "phase", step.Phase, "round", step.Round, "err", err)
	}
	out.Bytes = n.ms.bytesSent(j.ID)
	body, err := protocol.Marshal(&out)
	if err == nil {
		msg := step.Message(n.cfg.Name, outputType, body)
		err = n.ms.send(ctx, step.Coordinator, msg, disclosure)
	}
	if err != nil {
		n.log.Warn("could not report step output", "job", j.ID, "phase", step.Phase, "coordinator", step.Coordinator, "err", err)
		return
	}
	n.mu.Lock()
	n.finished[id] = true
	n.mu.Unlock()
}
