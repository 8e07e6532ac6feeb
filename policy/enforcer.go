package policy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Enforcer is a node's policy at work: the policy in force (re-read when
// its file changes), the store of what the node decided, aggregated and
// spent, and the hook that writes each decision to the audit ledger.
type Enforcer struct {
	self   string
	source func() (*Policy, error)
	store  *Store
	record func(jobID string, d Decision)

	mu      sync.Mutex
	changed chan struct{} // closed and replaced at every approval or rejection
}

// Options build an Enforcer.
type Options struct {
	// Self is the node's name, which refusals name.
	Self string
	// Policy is a fixed policy; File, if set instead, is read whenever it
	// changes (a reload takes effect at the next check).
	Policy *Policy
	File   string
	// Store keeps decisions, aggregates and spending (MemoryStore if nil).
	Store *Store
	// Record, if set, sees every change of a decision (the audit ledger).
	Record func(jobID string, d Decision)
}

// NewEnforcer returns the enforcer of one node.
func NewEnforcer(o Options) (*Enforcer, error) {
	e := &Enforcer{self: o.Self, store: o.Store, record: o.Record, changed: make(chan struct{})}
	if e.store == nil {
		e.store = MemoryStore()
	}
	switch {
	case o.File != "":
		r := &reloader{path: o.File}
		if _, err := r.get(); err != nil {
			return nil, err
		}
		e.source = r.get
	case o.Policy != nil:
		p := o.Policy
		e.source = func() (*Policy, error) { return p, nil }
	default:
		p := Default()
		e.source = func() (*Policy, error) { return p, nil }
	}
	return e, nil
}

// Permissive returns a policy that allows everything: no floors, every
// form to everyone, no budget limit. It is for tests of protocols and of
// the runtime, never a node's.
func Permissive() *Policy {
	all := Grant{}
	for _, d := range wire.Disclosures() {
		all[d] = []string{Any}
	}
	cols := map[string]Grant{}
	for _, r := range roles {
		cols[r] = all
	}
	return &Policy{Approval: ApprovalAuto, Kinds: Members{Any: {Any}}, Peers: []string{Any}, Submitters: []string{Any},
		Columns: cols, Budget: Budget{Epsilon: math.MaxFloat64, Delta: 1}, ExactReleases: math.MaxInt, SyntheticReleases: math.MaxInt, undeclared: true}
}

// reloader reads a policy file again when its size or time changes.
type reloader struct {
	path string
	mu   sync.Mutex
	p    *Policy
	mod  time.Time
	size int64
}

func (r *reloader) get() (*Policy, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fi, err := os.Stat(r.path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPolicy, err)
	}
	if r.p != nil && fi.ModTime().Equal(r.mod) && fi.Size() == r.size {
		return r.p, nil
	}
	p, err := Load(r.path)
	if err != nil {
		return nil, err
	}
	r.p, r.mod, r.size = p, fi.ModTime(), fi.Size()
	return p, nil
}

// Policy returns the policy in force.
func (e *Enforcer) Policy() (*Policy, error) { return e.source() }

// Admit decides whether this node takes part in a job, before it reads a
// row and again at every step: Accepted, Refused (naming the rule) or, with
// manual approval, Awaiting until a person approves or rejects it here.
// Each change of the decision is kept and recorded.
func (e *Enforcer) Admit(req *Request) Decision {
	d := e.decide(req)
	d.Time = time.Now().UTC()
	if d.Fault != nil {
		return d // not a decision: nothing to keep or record
	}
	if changed, err := e.store.setDecision(req.Job, d); err == nil && changed && e.record != nil {
		e.record(req.Job, d)
	}
	return d
}

func (e *Enforcer) decide(req *Request) Decision {
	p, err := e.source()
	if err != nil {
		// An unreadable policy refuses everything until it is fixed; the
		// reason stays here (it may name a path).
		return Decision{Verdict: Refused, Rule: "policy", Reason: "this node's policy cannot be read"}
	}
	if r, err := e.checkSubmission(p, req); err != nil {
		return Decision{Verdict: Refused, Rule: "submission", Reason: err.Error(), Fault: err}
	} else if r != nil {
		return Decision{Verdict: Refused, Rule: r.Rule, Reason: r.Reason, Detail: r.Detail}
	}
	if r := p.Check(req, e.store.HistoryFor(req.Job)); r != nil {
		return Decision{Verdict: Refused, Rule: r.Rule, Reason: r.Reason, Detail: r.Detail}
	}
	if a, ok := e.store.approval(req.Job); ok {
		if a.Approval == "rejected" {
			return Decision{Verdict: Refused, Rule: "approval", Reason: "rejected at " + e.self + ": " + a.Reason, Approval: a.Approval}
		}
		return Decision{Verdict: Accepted, Approval: a.Approval}
	}
	if p.Approval == ApprovalManual {
		return Decision{Verdict: Awaiting, Rule: "approval"}
	}
	return Decision{Verdict: Accepted}
}

// checkSubmission refuses a job that no member signed, and a replayed
// submission: one whose nonce another job used, or whose time lies outside
// the submission window when this node first sees the job (a job it has
// decided on before is not refused for running long). Its error is a
// *StateError: the nonce could not be kept, so this node cannot decide.
func (e *Enforcer) checkSubmission(p *Policy, req *Request) (*Refusal, error) {
	if p.undeclared {
		return nil, nil // Permissive: protocol and runtime tests
	}
	if !req.Signed || len(req.Nonce) == 0 {
		return refuse("submission", "job %s carries no signed submission", req.Job), nil
	}
	window := time.Duration(p.SubmissionWindow)
	if window <= 0 {
		window = DefaultSubmissionWindow
	}
	now := time.Now().UTC()
	if _, seen := e.store.decision(req.Job); !seen {
		if d := now.Sub(req.SubmittedAt); d > window || d < -window {
			return refuse("submission", "job %s was submitted outside this node's submission window", req.Job), nil
		}
	}
	err := e.store.useNonce(fmt.Sprintf("%x", req.Nonce), req.Job, req.SubmittedAt, window, now)
	var stateErr *StateError
	if errors.As(err, &stateErr) {
		return nil, err
	}
	if err != nil {
		return refuse("submission", "this submission was already used by %s", err.Error()), nil
	}
	return nil, nil
}

// DefaultSubmissionWindow is the submission window of a policy that sets
// none.
const DefaultSubmissionWindow = 24 * time.Hour

// Decision returns this node's latest decision on a job.
func (e *Enforcer) Decision(jobID string) (Decision, bool) { return e.store.decision(jobID) }

// ApprovalTimeout is how long a job may wait for a person's decision.
func (e *Enforcer) ApprovalTimeout() time.Duration {
	if p, err := e.source(); err == nil && p.ApprovalTimeout > 0 {
		return time.Duration(p.ApprovalTimeout)
	}
	return 24 * time.Hour
}

// Approve records a person's approval of a job awaiting it here.
func (e *Enforcer) Approve(jobID string) error {
	return e.setApproval(jobID, Decision{Verdict: Accepted, Approval: "approved", Time: time.Now().UTC()})
}

// Reject records a person's rejection of a job, with their reason, which
// the job's failure will carry.
func (e *Enforcer) Reject(jobID, reason string) error {
	if reason == "" {
		return fmt.Errorf("a rejection needs a reason")
	}
	return e.setApproval(jobID, Decision{Verdict: Refused, Approval: "rejected", Reason: reason, Time: time.Now().UTC()})
}

func (e *Enforcer) setApproval(jobID string, d Decision) error {
	if err := e.store.setApproval(jobID, d); err != nil {
		return err
	}
	e.mu.Lock()
	close(e.changed)
	e.changed = make(chan struct{})
	e.mu.Unlock()
	return nil
}

// WaitApproval waits until a person has approved or rejected a job here
// (or ctx ends) and returns the decision Admit then makes.
func (e *Enforcer) WaitApproval(ctx context.Context, req *Request) (Decision, error) {
	for {
		e.mu.Lock()
		changed := e.changed
		e.mu.Unlock()
		if d := e.Admit(req); d.Verdict != Awaiting {
			return d, nil
		}
		select {
		case <-ctx.Done():
			return Decision{}, fmt.Errorf("waiting for approval at %s: %w", e.self, ctx.Err())
		case <-changed:
		}
	}
}

// Guard returns the guard of one job's session on this node (see
// job.Guard), which also checks every message the session sends. datasets
// maps the spec's names of this party's tables to the datasets they
// resolved to at admission (Request.Datasets).
func (e *Enforcer) Guard(jobID string, uses []job.Use, parties []string, datasets map[string]string) *Guard {
	g := &Guard{e: e, job: jobID, parties: parties, datasets: datasets, inStep: map[stepKey][]FormedRecord{},
		allowed: map[wire.Disclosure]bool{wire.DiscloseControl: true, wire.DisclosePublicResult: true}}
	for _, u := range uses {
		for _, d := range messageForms(u.Form) {
			g.allowed[d] = true
		}
	}
	if p, err := e.source(); err == nil && p.undeclared {
		g.allowed = nil // Permissive: every disclosure
	}
	return g
}

// messageForms lists the disclosures a message may carry for a job that
// was admitted for a use of form f.
func messageForms(f wire.Disclosure) []wire.Disclosure {
	switch f {
	case wire.DiscloseCiphertext:
		// A secret share of counts in a computation whose only output is
		// public (quantile's brackets' check) hides them as a ciphertext
		// does, from any coalition below the threshold.
		return []wire.Disclosure{wire.DiscloseCiphertext, wire.DiscloseDecryptionShare, wire.DiscloseSecretShare}
	case wire.DiscloseSplitAttribute:
		return []wire.Disclosure{wire.DiscloseSplitSummary, wire.DiscloseScore}
	case wire.DiscloseRaw:
		return []wire.Disclosure{wire.DiscloseRaw, wire.DiscloseAggregate}
	}
	return []wire.Disclosure{f}
}

// Show is the policy in force, the budget spent and left per dataset
// column, and the exact and synthetic releases made per dataset.
type Show struct {
	Policy   *Policy           `json:"policy"`
	Spent    map[string]Amount `json:"spent"`
	Left     map[string]Amount `json:"left"`
	Releases map[string]int    `json:"exact_releases"`
	// Synthetic is the synthetic releases (kde's samples, pgen's trees)
	// published per dataset, against the policy's synthetic_releases.
	Synthetic map[string]int `json:"synthetic_releases"`
	// Legacy is what a store from before datasets had spent, by column;
	// it counts against every dataset's column of that name.
	Legacy map[string]Amount `json:"legacy_spent,omitempty"`
}

// Show returns the policy in force with the budget spent and left.
func (e *Enforcer) Show() (*Show, error) {
	p, err := e.source()
	if err != nil {
		return nil, err
	}
	h := e.store.History()
	spent := h.Spent
	left := map[string]Amount{}
	for k, s := range spent {
		b, l := p.budgetOfKey(k), h.LegacySpent[columnOf(k)]
		left[k] = Amount{Epsilon: max(0, b.Epsilon-s.Epsilon-l.Epsilon), Delta: max(0, b.Delta-s.Delta-l.Delta)}
	}
	return &Show{Policy: p, Spent: spent, Left: left, Releases: h.Releases, Synthetic: e.store.syntheticMade(), Legacy: h.LegacySpent}, nil
}
