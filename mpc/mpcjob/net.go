// Package mpcjob runs package mpc's protocols over a job step's messages:
// one mpc.Network per step (or per sub-protocol of a step), the parties
// indexed by their place in the step's sorted party list. Every share
// leaves through the party's Send, so the node's policy checks it
// (wire.DiscloseSecretShare) and its ledger records it.
package mpcjob

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/mpc"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/wire"
)

// ErrPeer marks a round that did not complete with a peer: its vector did
// not come in time, or ours could not be delivered (the peer is gone, or
// the step ended). A new attempt may succeed; a refusal by this node's
// policy is not one.
var ErrPeer = errors.New("a peer missed a round")

// TypeShares is the message type of one party's vector of shares for one
// peer in one round.
const TypeShares = "mpc/shares"

// Net is one party's mpc.Network over a step: round r's vectors travel
// in messages of the step whose channel ends in r, so the rounds of one
// computation, and of two computations on different channels, never
// answer each other.
type Net struct {
	party   job.Party
	step    job.Step
	parties []string
	self    int
}

// New returns the network of the party p over step's parties, and p's
// index among them (the index mpc.NewParty takes).
func New(p job.Party, step job.Step) (*Net, int, error) {
	parties := slices.Sorted(slices.Values(step.Parties))
	self := slices.Index(parties, p.Self())
	if self < 0 {
		return nil, 0, fmt.Errorf("mpcjob: %s is not a party of step %s/%d", p.Self(), step.Phase, step.Round)
	}
	return &Net{party: p, step: step, parties: parties, self: self}, self, nil
}

// Parties are the step's parties in index order.
func (n *Net) Parties() []string { return slices.Clone(n.parties) }

// Exchange sends out[j] to every other party at once and waits for each
// one's vector of the same round. Its errors name the round and the
// party, never an element.
func (n *Net) Exchange(ctx context.Context, round uint32, out [][]mpc.Elem) ([][]mpc.Elem, error) {
	if len(out) != len(n.parties) {
		return nil, fmt.Errorf("mpcjob: round %d: %d vectors for %d parties", round, len(out), len(n.parties))
	}
	st := n.step.Sub(strconv.FormatUint(uint64(round), 10))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	in := make([][]mpc.Elem, len(n.parties))
	sendErrs, recvErrs := make([]error, len(n.parties)), make([]error, len(n.parties))
	var wg sync.WaitGroup
	for j, peer := range n.parties {
		if j == n.self {
			continue
		}
		wg.Add(2)
		go func() {
			defer wg.Done()
			m := st.Message(n.party.Self(), TypeShares, mpc.AppendVec(nil, out[j]))
			if err := n.party.Send(ctx, peer, m, wire.DiscloseSecretShare); err != nil {
				sendErrs[j] = fmt.Errorf("send to %s: %w", peer, err)
				if !errors.As(err, new(*policy.Refusal)) {
					sendErrs[j] = fmt.Errorf("%w: %w", ErrPeer, sendErrs[j])
				}
				cancel()
			}
		}()
		go func() {
			defer wg.Done()
			if in[j], recvErrs[j] = n.receive(ctx, st, peer); recvErrs[j] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	// A failed send ends the round for every peer: the receives it cut
	// short say nothing more.
	if err := errors.Join(sendErrs...); err != nil {
		return nil, fmt.Errorf("mpcjob: round %d: %w", round, err)
	}
	if err := errors.Join(recvErrs...); err != nil {
		return nil, fmt.Errorf("mpcjob: round %d: %w", round, err)
	}
	return in, nil
}

// receive waits for peer's vector of the round and decodes it.
func (n *Net) receive(ctx context.Context, st job.Step, peer string) ([]mpc.Elem, error) {
	m, err := n.party.Receive(ctx, peer, st.Key(TypeShares))
	if err != nil {
		return nil, fmt.Errorf("%w: waiting for %s: %w", ErrPeer, peer, err)
	}
	v, err := mpc.DecodeVec(m.Body)
	if err != nil {
		return nil, fmt.Errorf("from %s: %w", peer, err)
	}
	return v, nil
}
