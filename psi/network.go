package psi

import (
	"context"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Network carries one party's PSI messages: typed byte strings to and
// from named parties. The protocols (Run, RunAlign) are written against it
// and do no I/O of their own, so a test can run them over a network in
// memory; a job runs them over StepNetwork. What the bytes mean, and the
// checks on what arrives, are psi's.
type Network interface {
	// Self is this party's name.
	Self() string
	// Send delivers a message of type typ to party to. Everything psi
	// sends is blinded or pseudorandom (disclosure psi-blinded).
	Send(ctx context.Context, to, typ string, body []byte) error
	// Receive returns the body of the next message of type typ from party
	// from, waiting until one arrives or ctx ends.
	Receive(ctx context.Context, from, typ string) ([]byte, error)
	// Sub returns the network of the sub-protocol named channel: its
	// messages never answer this network's or another channel's, and its
	// Scope names the channel.
	Sub(channel string) Network
	// Scope is what the run's hashes are bound to (DomainTag).
	Scope() Scope
}

// Scope names where a PSI runs: the job, phase and round of its step and
// its channel. Hash-to-group tags and OT digests are bound to it (and to
// Config.Edge), so values blinded in one run are useless in another.
type Scope struct {
	Job, Phase string
	Round      int
	Channel    string
}

// tag is DomainTag of the scope and edge.
func (s Scope) tag(edge string) []byte {
	return DomainTag(s.Job, s.Phase, s.Round, s.Channel, edge)
}

// StepNetwork is the Network of a job step: messages go through p, keyed
// by the step's job, phase, round, attempt and channel, and are recorded
// in the audit ledger as disclosing psi-blinded values.
func StepNetwork(p job.Party, step job.Step) Network {
	return stepNetwork{job.StepNet{Party: p, Step: step}}
}

// stepNetwork is a job.StepNet whose every message discloses psi-blinded
// values.
type stepNetwork struct{ net job.StepNet }

func (n stepNetwork) Self() string { return n.net.Self() }

func (n stepNetwork) Send(ctx context.Context, to, typ string, body []byte) error {
	return n.net.Send(ctx, to, typ, body, wire.DisclosePSIBlinded)
}

func (n stepNetwork) Receive(ctx context.Context, from, typ string) ([]byte, error) {
	return n.net.Receive(ctx, from, typ)
}

func (n stepNetwork) Sub(channel string) Network { return stepNetwork{n.net.Sub(channel)} }

func (n stepNetwork) Scope() Scope {
	st := n.net.Step
	return Scope{Job: st.Job, Phase: st.Phase, Round: st.Round, Channel: st.Channel}
}

// Intersect runs e over StepNetwork(p, step).
func (e ECDH) Intersect(ctx context.Context, p job.Party, step job.Step, peer string, role Role, elems [][]byte) (*Result, error) {
	return e.Run(ctx, StepNetwork(p, step), peer, role, elems)
}

// Intersect runs o over StepNetwork(p, step).
func (o OT) Intersect(ctx context.Context, p job.Party, step job.Step, peer string, role Role, elems [][]byte) (*Result, error) {
	return o.Run(ctx, StepNetwork(p, step), peer, role, elems)
}

// Intersect runs v over StepNetwork(p, step).
func (v VOLE) Intersect(ctx context.Context, p job.Party, step job.Step, peer string, role Role, elems [][]byte) (*Result, error) {
	return v.Run(ctx, StepNetwork(p, step), peer, role, elems)
}

// Intersect runs a over StepNetwork(p, step).
func (a Auto) Intersect(ctx context.Context, p job.Party, step job.Step, peer string, role Role, elems [][]byte) (*Result, error) {
	return a.Run(ctx, StepNetwork(p, step), peer, role, elems)
}

// Align is RunAlign over StepNetwork(p, step): every party of parties
// calls it with the same step, hub, parties and config.
func Align(ctx context.Context, p job.Party, step job.Step, hub string, parties []string, cfg Config, elems [][]byte) (*Result, error) {
	return RunAlign(ctx, StepNetwork(p, step), hub, parties, cfg, elems)
}
