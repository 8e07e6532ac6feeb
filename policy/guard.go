package policy

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Guard checks what one job's session on this node discloses while the job
// runs: every message it sends, every aggregate its data enters, every
// noise draw, exact release and verbatim publication. It implements
// job.Guard. Kinds name tables as the spec does; the guard keys every
// decision on the dataset the node resolved each name to at admission. Its
// errors are *Refusal values wrapped with the node's name.
type Guard struct {
	e        *Enforcer
	job      string
	parties  []string
	allowed  map[wire.Disclosure]bool
	datasets map[string]string // the spec's table names → datasets

	mu sync.Mutex
	// inStep lists, per step attempt, the dataset columns this node's data
	// entered, so that a decryption share of that step records them formed.
	inStep map[stepKey][]FormedRecord
}

// stepKey names one attempt of a step as its messages do, whatever
// sub-channel a message travels on (a backend's decryption shares may).
type stepKey struct {
	phase          string
	round, attempt int
}

func keyOf(m *wire.Message) stepKey {
	return stepKey{phase: m.Phase, round: m.Round, attempt: m.Attempt}
}

func keyOfStep(s job.Step) stepKey {
	return stepKey{phase: s.Phase, round: s.Round, attempt: s.Attempt}
}

// refusal is a refusal by this node, as the job's failure names it.
func (g *Guard) refusal(r *Refusal) error {
	return fmt.Errorf("refused by %s's policy: %w", g.e.self, r)
}

func (g *Guard) policy() (*Policy, error) {
	p, err := g.e.source()
	if err != nil {
		return nil, g.refusal(&Refusal{Rule: "policy", Reason: "this node's policy cannot be read"})
	}
	return p, nil
}

// dataset returns the dataset a spec's table resolved to at admission.
func (g *Guard) dataset(p *Policy, table string) (string, error) {
	if d, ok := g.datasets[table]; ok {
		return d, nil
	}
	if p.undeclared && g.datasets == nil {
		return table, nil // Permissive without datasets: protocol tests
	}
	return "", g.refusal(unavailable(table))
}

// Send checks one message before it leaves: its disclosure must be one the
// job was admitted for, its recipient one of the job's parties (or the
// attempt's coordinator, for the runtime's reports) and a peer the policy
// allows; a ciphertext, a decryption share or a secret share only of a step with enough
// parties. stepParties are the parties of the message's step as the log
// holds it. A decryption share is where this node helps form a total: it
// records that total formed before the share leaves, whatever the root
// reports after.
func (g *Guard) Send(to string, m *wire.Message, d wire.Disclosure, coordinator string, stepParties []string) error {
	p, err := g.policy()
	if err != nil {
		return err
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
	if (d == wire.DiscloseDecryptionShare || d == wire.DiscloseCiphertext || d == wire.DiscloseSecretShare) && len(stepParties) < p.Floors.MinParties {
		return g.refusal(refuse("floors.min_parties", "%s of step %s/%d over its parties is below this node's floor", d, m.Phase, m.Round))
	}
	if d == wire.DiscloseDecryptionShare {
		return g.formed(keyOf(m))
	}
	return nil
}

// Formed implements job.Guard: the total of step was formed here.
func (g *Guard) Formed(step job.Step) error { return g.formed(keyOfStep(step)) }

// formed records the dataset columns this node's data entered at step k
// as formed over the step's parties.
func (g *Guard) formed(k stepKey) error {
	g.mu.Lock()
	recs := g.inStep[k]
	g.mu.Unlock()
	if err := g.e.store.addFormed(g.job, recs); err != nil {
		return fmt.Errorf("%s: record the total formed: %w", g.e.self, err)
	}
	return nil
}

// Aggregate implements job.Guard: the floor on parties (the only check of
// an aggregate with no Table, which sums no data of the party); noise only as the
// owner sized it; within the job, no aggregate over fewer parties than a
// total of the same column already decrypted; the differencing rules
// against this node's earlier aggregates over the same dataset column;
// then the record of this one.
func (g *Guard) Aggregate(step job.Step, a job.Aggregate) error {
	p, err := g.policy()
	if err != nil {
		return err
	}
	parties := slices.Sorted(slices.Values(a.Parties))
	what := a.Table
	if a.Column != "" {
		what += "." + a.Column
	}
	if len(parties) < p.Floors.MinParties {
		return g.refusal(refuse("floors.min_parties", "an aggregate at step %s/%d over its parties is below this node's floor", step.Phase, step.Round))
	}
	if a.Table == "" {
		return nil // no data of the party (a probe, a key's confirmation): the floor only
	}
	dataset, err := g.dataset(p, a.Table)
	if err != nil {
		return err
	}
	if a.Noised && !(a.PerRow > 0 && a.Sensitivity >= a.PerRow) {
		return g.refusal(refuse("bounds", "a noised aggregate of %s needs bounds this node declares and a sensitivity no smaller than they give", what).
			with("dataset %s column %s", dataset, a.Column))
	}
	for _, f := range g.e.store.formed(g.job) {
		if f.Table == dataset && f.Column == a.Column && !isSubset(f.Parties, parties) {
			return g.refusal(refuse("formed", "step %s/%d aggregates %s without a party of a total of it this job already formed (coordinator %s)", step.Phase, step.Round, what, step.Coordinator))
		}
	}
	rec := AggregateRecord{Job: g.job, Table: dataset, Column: a.Column, Parties: parties, Rows: a.Rows, Noised: a.Noised, Time: time.Now().UTC()}
	if !a.Noised {
		u := job.Use{Table: a.Table, Column: a.Column, Parties: parties}
		if r := p.checkDifferencing(g.job, dataset, u, g.e.store.earlier); r != nil {
			return g.refusal(r)
		}
		if r := p.checkRows(g.job, what, rec, g.e.store.earlier); r != nil {
			return g.refusal(r)
		}
	}
	if err := g.e.store.addAggregate(rec); err != nil {
		return fmt.Errorf("%s: record the aggregate: %w", g.e.self, err)
	}
	g.mu.Lock()
	k := keyOfStep(step)
	g.inStep[k] = append(g.inStep[k], FormedRecord{Table: dataset, Column: a.Column, Parties: parties})
	g.mu.Unlock()
	return nil
}

// isSubset reports whether every element of a is in b.
func isSubset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// Spend implements job.Guard: a draw of noise spends its ε and δ on the
// dataset column, re-runs included, or is refused when the budget cannot
// hold it.
func (g *Guard) Spend(step job.Step, s job.Spend) error {
	p, err := g.policy()
	if err != nil {
		return err
	}
	dataset, err := g.dataset(p, s.Table)
	if err != nil {
		return err
	}
	ok, err := g.e.store.spend(g.job, dataset, s.Column, Amount{Epsilon: s.Epsilon, Delta: s.Delta}, p.budgetOf(dataset, s.Column))
	if err != nil {
		return fmt.Errorf("%s: record the spending: %w", g.e.self, err)
	}
	if !ok {
		return g.refusal(refuse("budget", "a noised result over %s.%s would exceed its privacy budget", s.Table, s.Column))
	}
	return nil
}

// Bounds implements job.Guard: the owner's bounds on a column of the
// dataset a spec's table resolved to.
func (g *Guard) Bounds(table, column string) (lo, hi float64, ok bool) {
	p, err := g.e.source()
	if err != nil {
		return 0, 0, false
	}
	dataset, err := g.dataset(p, table)
	if err != nil {
		return 0, 0, false
	}
	b, ok := p.bounds(dataset, column)
	return b[0], b[1], ok
}

// Release implements job.Guard: an exact value of pooled data is released
// only when at least the floor's k rows lie on either side of its rank and
// in its bracket, and only while the dataset's allowance of exact releases
// lasts (every release counts, re-runs included).
func (g *Guard) Release(step job.Step, r job.Release) error {
	p, err := g.policy()
	if err != nil {
		return err
	}
	dataset, err := g.dataset(p, r.Table)
	if err != nil {
		return err
	}
	what := r.Table + "." + r.Column
	k := p.Floors.MinK
	if r.Rank <= k || r.Rows-r.Rank < k || r.Bracket < k {
		return g.refusal(refuse("floors.min_k", "an exact value of %s at step %s/%d lies too near the ends of the pooled rows or in too small a bracket", what, step.Phase, step.Round))
	}
	if r.Searching {
		return nil // checked, not yet released
	}
	ok, err := g.e.store.release(g.job, dataset, p.ExactReleases)
	if err != nil {
		return fmt.Errorf("%s: record the release: %w", g.e.self, err)
	}
	if !ok {
		return g.refusal(refuse("exact_releases", "an exact value of %s would exceed this node's allowance of exact releases", what))
	}
	return nil
}

// MinK implements job.Guard: the policy's floors.min_k.
func (g *Guard) MinK() (int, error) {
	p, err := g.policy()
	if err != nil {
		return 0, err
	}
	return p.Floors.MinK, nil
}

// nearlyUnique is the share of a column's rows holding a value no other
// row holds above which the column singles out its rows: published value
// by value, it would name them.
const nearlyUnique = 0.5

// Publish implements job.Guard: a column whose values single out most of
// its rows (an id) is never published value by value unless a taxonomy
// generalises it.
func (g *Guard) Publish(step job.Step, pub job.Publication) error {
	if pub.Generalised || pub.Rows == 0 {
		return nil
	}
	if float64(pub.Unique) > nearlyUnique*float64(pub.Rows) {
		return g.refusal(refuse("unique", "column %s.%s singles out its rows and no taxonomy generalises it, so it is not published", pub.Table, pub.Column))
	}
	return nil
}
