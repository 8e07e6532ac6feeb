package job

import (
	"context"
	"fmt"

	"github.com/cohortdm/cohort/wire"
)

// StepNet carries a step's messages as typed byte strings: each is keyed
// by the step's job, phase, round, attempt and channel, and goes through
// the party, which records in its ledger what it discloses. The protocol
// packages (psi, secureagg) each define the small Network their protocols
// are written against and adapt a StepNet to it, so the keying is written
// once, here.
type StepNet struct {
	Party Party
	Step  Step
}

// Self is this party's name.
func (n StepNet) Self() string { return n.Party.Self() }

// Send delivers body as a message of type typ to party to, recorded as
// disclosing d.
func (n StepNet) Send(ctx context.Context, to, typ string, body []byte, d wire.Disclosure) error {
	return n.Party.Send(ctx, to, n.Step.Message(n.Party.Self(), typ, body), d)
}

// Receive returns the body of the next message of type typ from party
// from, waiting until one arrives or ctx ends.
func (n StepNet) Receive(ctx context.Context, from, typ string) ([]byte, error) {
	m, err := n.Party.Receive(ctx, from, n.Step.Key(typ))
	if err != nil {
		return nil, err
	}
	if m.From != from {
		return nil, fmt.Errorf("%w: a message from %s claims to be from %s", wire.ErrMalformed, from, m.From)
	}
	return m.Body, nil
}

// Sub is the StepNet of the step's sub-channel named channel (Step.Sub).
func (n StepNet) Sub(channel string) StepNet {
	return StepNet{Party: n.Party, Step: n.Step.Sub(channel)}
}
