package policy

import (
	"fmt"
	"slices"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
)

// Guard checks what one job's session on this node discloses while the job
// runs: every message it sends, every aggregate its data enters and every
// noise draw. It implements job.Guard. Its errors are *Refusal values
// wrapped with the node's name.
type Guard struct {
	e       *Enforcer
	job     string
	parties []string
	allowed map[protocol.Disclosure]bool
}

// refusal is a refusal by this node, as the job's failure names it.
func (g *Guard) refusal(r *Refusal) error {
	return fmt.Errorf("refused by %s's policy: %w", g.e.self, r)
}

// Send checks one message before it leaves: its disclosure must be one the
// job was admitted for, its recipient one of the job's parties (or the
// attempt's coordinator, for the runtime's reports) and a peer the policy
// allows, and a decryption share only of a step with enough parties.
// stepParties are the parties of the message's step.
func (g *Guard) Send(to string, m *protocol.Message, d protocol.Disclosure, coordinator string, stepParties []string) error {
	p, err := g.e.source()
	if err != nil {
		return g.refusal(&Refusal{Rule: "policy", Reason: "this node's policy cannot be read"})
	}
	if g.allowed != nil && !g.allowed[d] {
		return g.refusal(refuse("forms", "job %s was not admitted to send %s (message %s)", g.job, d, m.Type))
	}
	if to != coordinator && !slices.Contains(g.parties, to) {
		return g.refusal(refuse("peers", "%s is not a party of job %s", to, g.job))
	}
	if to != g.e.self && !allows(p.Peers, []string{to}) {
		return g.refusal(refuse("peers", "this node does not work with %s", to))
	}
	if d == protocol.DiscloseDecryptionShare && len(stepParties) < p.Floors.MinParties {
		return g.refusal(refuse("floors.min_parties", "a decryption share of step %s/%d over %d parties is below this node's floor", m.Phase, m.Round, len(stepParties)))
	}
	return nil
}

// Aggregate implements job.Guard: the floor on parties, the differencing
// rules against this node's earlier aggregates over the same column, then
// the record of this one.
func (g *Guard) Aggregate(step job.Step, a job.Aggregate) error {
	p, err := g.e.source()
	if err != nil {
		return g.refusal(&Refusal{Rule: "policy", Reason: "this node's policy cannot be read"})
	}
	parties := slices.Sorted(slices.Values(a.Parties))
	what := a.Table + "." + a.Column
	if len(parties) < p.Floors.MinParties {
		return g.refusal(refuse("floors.min_parties", "an aggregate of %s over %d parties is below this node's floor", what, len(parties)))
	}
	rec := AggregateRecord{Job: g.job, Table: a.Table, Column: a.Column, Parties: parties, Rows: a.Rows, Noised: a.Noised, Time: time.Now().UTC()}
	if !a.Noised {
		u := job.Use{Table: a.Table, Column: a.Column, Parties: parties}
		if r := p.checkDifferencing(g.job, u, g.e.store.earlier); r != nil {
			return g.refusal(r)
		}
		if r := p.checkRows(g.job, rec, g.e.store.earlier); r != nil {
			return g.refusal(r)
		}
	}
	if err := g.e.store.addAggregate(rec); err != nil {
		return fmt.Errorf("%s: record the aggregate: %w", g.e.self, err)
	}
	return nil
}

// Spend implements job.Guard: a draw of noise spends its ε and δ on the
// column, re-runs included, or is refused when the budget cannot hold it.
func (g *Guard) Spend(step job.Step, s job.Spend) error {
	p, err := g.e.source()
	if err != nil {
		return g.refusal(&Refusal{Rule: "policy", Reason: "this node's policy cannot be read"})
	}
	ok, err := g.e.store.spend(s.Table+"."+s.Column, Amount{Epsilon: s.Epsilon, Delta: s.Delta}, p.budgetOf(s.Table, s.Column))
	if err != nil {
		return fmt.Errorf("%s: record the spending: %w", g.e.self, err)
	}
	if !ok {
		return g.refusal(refuse("budget", "a noised result over %s.%s would exceed its privacy budget", s.Table, s.Column))
	}
	return nil
}
