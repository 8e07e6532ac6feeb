package node

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/policy"
)

// The node's side of its organisation's policy (package policy): the
// enforcer the runtime consults, the signature on every job this node
// submits, and the check of every job's submission against the member who
// claims it.

// newEnforcer builds the node's policy enforcer: the policy of
// Options.Policy, else node.yaml's policy_file (re-read when it changes),
// else the default; decisions, aggregates and spending in the data dir;
// every decision recorded in the audit ledger.
func newEnforcer(cfg *Config, p *policy.Policy, ledger *audit.Ledger) (*policy.Enforcer, error) {
	store, err := policy.OpenStore(filepath.Join(cfg.DataDir, policy.StateFile))
	if err != nil {
		return nil, err
	}
	o := policy.Options{Self: cfg.Name, Store: store, Policy: p, Record: func(jobID string, d policy.Decision) {
		// The ledger is the organisation's own: it keeps what the refusal
		// sent to the log leaves out (which dataset, which file).
		reason := d.Reason
		if d.Detail != "" {
			reason += " (here: " + d.Detail + ")"
		}
		_ = ledger.Append(audit.Entry{Time: d.Time, Job: jobID, Type: audit.DecisionType, Disclosure: "control",
			Decision: d.Verdict, Rule: d.Rule, Reason: reason})
	}}
	if p == nil && cfg.PolicyFile != "" {
		o.File = cfg.PolicyFile
	}
	return policy.NewEnforcer(o)
}

// Policy is this node's policy enforcer.
func (n *Node) Policy() *policy.Enforcer { return n.policy }

// sign makes this node's submission of a spec.
func (n *Node) sign(spec []byte) (*runner.Submission, error) {
	s := &runner.Submission{Member: n.cfg.Name, Nonce: make([]byte, 16), Time: time.Now().UTC()}
	if _, err := rand.Read(s.Nonce); err != nil {
		return nil, err
	}
	sig, err := n.key.Sign(runner.SubmissionDigest(spec, s))
	if err != nil {
		return nil, fmt.Errorf("sign the submission: %w", err)
	}
	s.Signature = sig
	return s, nil
}

// errSubmission marks a submission whose signature does not verify.
var errSubmission = errors.New("submission does not verify")

// verifySubmission checks a submission's signature against the public key
// of the member it names.
func (n *Node) verifySubmission(spec []byte, s *runner.Submission) error {
	if s == nil {
		return fmt.Errorf("%w: no submission", errSubmission)
	}
	m, ok := n.mesh.members().Member(s.Member)
	if !ok {
		return fmt.Errorf("%w: %q is not a member", errSubmission, s.Member)
	}
	id, err := peer.Decode(m.PeerID)
	if err != nil {
		return fmt.Errorf("%w: %v", errSubmission, err)
	}
	pub, err := id.ExtractPublicKey()
	if err != nil {
		return fmt.Errorf("%w: %v", errSubmission, err)
	}
	if ok, err := pub.Verify(runner.SubmissionDigest(spec, s), s.Signature); err != nil || !ok {
		return fmt.Errorf("%w: not signed by %s", errSubmission, s.Member)
	}
	return nil
}

// Submitter implements runner.Member: the member who signed the job.
func (m member) Submitter(spec []byte, s *runner.Submission) (string, error) {
	if err := m.n.verifySubmission(spec, s); err != nil {
		return "", err
	}
	return s.Member, nil
}

// Leader implements runner.Member: the Raft leader as this node knows it
// (Raft's RPCs are authenticated, see raftnet.go), waiting up to
// leaderWait while none is known.
func (m member) Leader(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, leaderWait)
	defer cancel()
	for {
		if l := m.n.Leader(); l != "" {
			return l
		}
		select {
		case <-ctx.Done():
			return ""
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// leaderWait bounds how long a step waits to learn who leads.
const leaderWait = 5 * time.Second

// Approve records this organisation's approval of a job that awaits it
// here; the node's worker then answers the coordinator.
func (n *Node) Approve(ctx context.Context, id string) error {
	if err := n.awaiting(id); err != nil {
		return err
	}
	return n.policy.Approve(id)
}

// Reject records this organisation's rejection of a job, with a reason
// that the job's failure carries.
func (n *Node) Reject(ctx context.Context, id, reason string) error {
	if err := n.awaiting(id); err != nil {
		return err
	}
	return n.policy.Reject(id, reason)
}

// ErrNotAwaiting means a job does not await this node's approval.
var ErrNotAwaiting = errors.New("job does not await this node's approval")

func (n *Node) awaiting(id string) error {
	st, ok := n.fsm.jobs.Status(id)
	if !ok {
		return fmt.Errorf("%w: %s", ErrNoJob, id)
	}
	if st != StatusRunning {
		return fmt.Errorf("%w: job %s is %s", ErrNotRunning, id, st)
	}
	if d, ok := n.policy.Decision(id); !ok || d.Verdict != policy.Awaiting {
		return fmt.Errorf("%w: %s", ErrNotAwaiting, id)
	}
	return nil
}
