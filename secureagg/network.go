package secureagg

import (
	"context"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Network carries one party's secure-aggregation messages: typed byte
// strings to and from named parties. The aggregation, its joint
// decryption and the lattice backend are written against it and do no
// I/O of their own, so a test can run them over a network in memory; a
// job runs them over StepNetwork. What the bytes mean, and the checks on
// what arrives (sizes, shapes, digests, proofs), are secureagg's; the
// step the protocols are given says only who takes part and what the
// digests and proofs are bound to.
type Network interface {
	// Self is this party's name.
	Self() string
	// Send delivers a message of type typ to party to; d is what its body
	// discloses (ciphertexts, decryption shares, control, the result).
	Send(ctx context.Context, to, typ string, body []byte, d wire.Disclosure) error
	// Receive returns the body of the next message of type typ from party
	// from, waiting until one arrives or ctx ends.
	Receive(ctx context.Context, from, typ string) ([]byte, error)
	// Sub returns the network of the sub-channel named channel (a part of
	// a lattice blob, one quorum's shares): its messages never answer this
	// network's or another channel's.
	Sub(channel string) Network
}

// StepNetwork is the Network of a job step: messages go through p, keyed
// by the step's job, phase, round, attempt and channel, and each is
// recorded in the audit ledger with the disclosure it is sent with.
func StepNetwork(p job.Party, step job.Step) Network {
	return stepNetwork{job.StepNet{Party: p, Step: step}}
}

// stepNetwork is a job.StepNet whose Sub is a Network.
type stepNetwork struct{ job.StepNet }

func (n stepNetwork) Sub(channel string) Network { return stepNetwork{n.StepNet.Sub(channel)} }
