package node

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/wire"
)

// controlRequest is a follower forwarding a job submission or
// cancellation to the leader.
type controlRequest struct {
	Op   string `msgpack:"op"` // "submit", "cancel", "member-add", "member-remove" or "storage-fault"
	Spec []byte `msgpack:"spec,omitempty"`
	// Submission is the forwarding member's signed submission of Spec.
	Submission *runner.Submission `msgpack:"submission,omitempty"`
	Job        string             `msgpack:"job,omitempty"`
	Member     *Member            `msgpack:"member,omitempty"`
	// Fault is a storage fault's text (opStorageFault): the sender's
	// Raft log cannot be written.
	Fault string `msgpack:"fault,omitempty"`
}

type controlResponse struct {
	ID    string `msgpack:"id"`
	Error string `msgpack:"error"`
	// Refused marks a membership change the leader refused (ErrMembership).
	Refused bool `msgpack:"refused,omitempty"`
}

// ErrNoLeader means no coordinator is elected yet; try again shortly.
var ErrNoLeader = errors.New("no coordinator elected yet")

// Validate checks a spec against this node's job kinds and consortium
// before anything is committed.
func (n *Node) Validate(spec *job.Spec) error {
	kind, ok := n.kinds[spec.Kind]
	if !ok {
		return spec.Errorf("kind", "unknown job kind %q (known: %v)", spec.Kind, sortedNames(n.kinds))
	}
	cons := n.mesh.members()
	for i, p := range spec.Parties {
		if _, ok := cons.Member(p.Name); !ok {
			return spec.Errorf(fmt.Sprintf("parties[%d].name", i), "%q is not a member of the consortium (members: %v)", p.Name, cons.Names())
		}
	}
	return kind.Validate(spec)
}

// Submit validates a job spec and commits it, forwarding it to the leader
// when this node is not the leader. It returns the job id.
func (n *Node) Submit(ctx context.Context, specYAML []byte) (string, error) {
	spec, err := job.ParseSpec(specYAML, "submitted spec")
	if err != nil {
		return "", err
	}
	if err := n.Validate(spec); err != nil {
		return "", err
	}
	sub, err := n.sign(specYAML)
	if err != nil {
		return "", err
	}
	for {
		if n.IsLeader() {
			id, err := n.commitSubmit(specYAML, sub)
			if !errors.Is(err, errNotLeader) {
				return id, err
			}
		} else if leader := n.Leader(); leader != "" {
			id, err := n.forwardSubmit(ctx, leader, specYAML, sub)
			if err == nil {
				// Answer once this node has applied the job too, so that a
				// status query right after submitting finds it here.
				for {
					if _, ok := n.fsm.jobs.Status(id); ok {
						return id, nil
					}
					select {
					case <-ctx.Done():
						return id, nil
					case <-n.fsm.changed:
						n.fsm.notify() // pass the signal on to the reconcile loop
					case <-time.After(20 * time.Millisecond):
					}
				}
			}
			if !errors.Is(err, ErrNoLeader) {
				return id, err
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("submit: %w: %v", ErrNoLeader, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// commitSubmit commits a verified submission as a job. The job's id is
// derived from the signed submission, so committing it again (the leader
// lost its leadership after appending it, and Submit tried again through
// the next one) finds the same job instead of making a second, which the
// parties would refuse as a replayed submission.
func (n *Node) commitSubmit(specYAML []byte, sub *runner.Submission) (string, error) {
	if err := n.verifySubmission(specYAML, sub); err != nil {
		return "", err
	}
	id := submissionJobID(sub)
	if _, ok := n.fsm.jobs.Status(id); ok {
		return id, nil
	}
	seed := make([]byte, job.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return "", err
	}
	err := n.apply(&command{Entry: runner.Entry{Op: runner.OpSubmit, Job: id, Spec: specYAML, Seed: seed, Submission: sub}})
	if err != nil && !errors.Is(err, runner.ErrJobExists) {
		return "", err
	}
	return id, nil
}

// submissionJobID names the job of a signed submission: its time, and
// four bytes of a hash of its nonce and signature.
func submissionJobID(sub *runner.Submission) string {
	h := sha256.New()
	h.Write(sub.Nonce)
	h.Write(sub.Signature)
	return sub.Time.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(h.Sum(nil)[:4])
}

func (n *Node) forwardSubmit(ctx context.Context, leader string, specYAML []byte, sub *runner.Submission) (string, error) {
	return n.forward(ctx, leader, &controlRequest{Op: "submit", Spec: specYAML, Submission: sub})
}

// forward sends a control request to the leader and returns the job id it answers.
func (n *Node) forward(ctx context.Context, leader string, req *controlRequest) (string, error) {
	pid, ok := n.mesh.memberID(leader)
	if !ok {
		// It may have just been removed (and not yet stepped down): ask
		// again once another leads.
		return "", fmt.Errorf("%w: leader %q is not a member", ErrNoLeader, leader)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(n.timing.SendMS)*time.Millisecond)
	defer cancel()
	s, err := n.mesh.host.NewStream(ctx, pid, wire.ControlProtocol)
	if err != nil {
		return "", fmt.Errorf("%w: forward to leader %s: %v", ErrNoLeader, leader, err)
	}
	defer s.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = s.SetDeadline(dl)
	}
	body, err := wire.Marshal(req)
	if err != nil {
		return "", err
	}
	if err := wire.WriteFrame(s, body); err != nil {
		return "", fmt.Errorf("forward to leader %s: %w", leader, err)
	}
	b, err := wire.ReadFrame(s, 1<<16)
	if err != nil {
		return "", fmt.Errorf("%w: leader %s did not answer: %v", ErrNoLeader, leader, err)
	}
	var resp controlResponse
	if err := wire.Unmarshal(b, &resp); err != nil {
		return "", fmt.Errorf("leader %s: %w", leader, err)
	}
	if resp.Error != "" {
		if resp.Error == errNotLeader.Error() {
			return "", ErrNoLeader
		}
		if resp.Refused {
			return "", fmt.Errorf("%w (by leader %s): %s", ErrMembership, leader, resp.Error)
		}
		return "", fmt.Errorf("leader %s refused: %s", leader, resp.Error)
	}
	return resp.ID, nil
}

// handleControl serves forwarded submissions on the leader.
func (n *Node) handleControl(s network.Stream) {
	defer s.Close()
	remote := s.Conn().RemotePeer()
	name, ok := n.mesh.gater.name(remote)
	if !ok {
		s.Reset()
		return
	}
	_ = s.SetDeadline(time.Now().Add(time.Duration(n.timing.SendMS) * time.Millisecond))
	resp := n.serveControl(remote, name, s)
	b, err := wire.Marshal(&resp)
	if err == nil {
		_ = wire.WriteFrame(s, b)
	}
}

func (n *Node) serveControl(remote peer.ID, name string, s network.Stream) controlResponse {
	b, err := wire.ReadFrame(s, wire.MaxMessageSize)
	var req controlRequest
	if err == nil {
		err = wire.Unmarshal(b, &req)
	}
	if err != nil {
		n.log.Warn("bad control request", "peer", name, "err", err)
		return controlResponse{Error: err.Error()}
	}
	if req.Op == opStorageFault {
		// Kept whoever leads: a leader elected next has its own reports.
		// The member is the sender, named by its peer id, never a field.
		n.noteStorageFault(name, req.Fault)
		return controlResponse{}
	}
	if req.Op != "submit" && req.Op != "cancel" && req.Op != opAddMember && req.Op != opRemoveMember {
		return controlResponse{Error: fmt.Sprintf("unknown control operation %q", req.Op)}
	}
	if !n.IsLeader() {
		return controlResponse{Error: errNotLeader.Error()}
	}
	if req.Op == opAddMember || req.Op == opRemoveMember {
		err := n.commitMembers(req.Op, req.Member)
		if errors.Is(err, errNotLeader) {
			return controlResponse{Error: errNotLeader.Error()}
		}
		if err != nil {
			return controlResponse{Error: err.Error(), Refused: errors.Is(err, ErrMembership)}
		}
		n.log.Info("membership changed", "op", req.Op, "member", req.Member.Name, "via", name)
		return controlResponse{}
	}
	if req.Op == "cancel" {
		err := n.commitCancel(req.Job, name)
		if err != nil {
			return controlResponse{Error: err.Error()}
		}
		n.log.Info("job cancelled", "job", req.Job, "by", name)
		return controlResponse{ID: req.Job}
	}
	spec, err := job.ParseSpec(req.Spec, "spec forwarded by "+name)
	if err == nil {
		err = n.Validate(spec)
	}
	if err == nil && (req.Submission == nil || req.Submission.Member != name) {
		err = fmt.Errorf("%w: a member forwards only its own submissions", errSubmission)
	}
	var id string
	if err == nil {
		id, err = n.commitSubmit(req.Spec, req.Submission)
	}
	if errors.Is(err, errNotLeader) {
		return controlResponse{Error: errNotLeader.Error()}
	}
	if err != nil {
		return controlResponse{Error: err.Error()}
	}
	n.log.Info("job submitted", "job", id, "via", name)
	return controlResponse{ID: id}
}

// ErrNotRunning means a job cannot be cancelled because it has ended.
var ErrNotRunning = errors.New("job is not running")

// ErrNoJob means no job has the given id.
var ErrNoJob = errors.New("no such job")

// Cancel ends a running job everywhere: the job fails with "cancelled",
// every node stops its work for it and closes its session. It forwards to
// the leader when this node is not the leader.
func (n *Node) Cancel(ctx context.Context, id string) error {
	st, ok := n.fsm.jobs.Status(id)
	if !ok {
		return fmt.Errorf("%w: %s", ErrNoJob, id)
	}
	if st != StatusRunning {
		return fmt.Errorf("%w: job %s is %s", ErrNotRunning, id, st)
	}
	for {
		var err error
		if n.IsLeader() {
			err = n.commitCancel(id, n.cfg.Name)
		} else if leader := n.Leader(); leader != "" {
			_, err = n.forward(ctx, leader, &controlRequest{Op: "cancel", Job: id})
		} else {
			err = ErrNoLeader
		}
		if err == nil {
			_, werr := n.Wait(ctx, id)
			return werr
		}
		if !errors.Is(err, errNotLeader) && !errors.Is(err, ErrNoLeader) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cancel job %s: %w", id, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (n *Node) commitCancel(id, by string) error {
	st, ok := n.fsm.jobs.Status(id)
	if !ok {
		return fmt.Errorf("%w: %s", ErrNoJob, id)
	}
	if st != StatusRunning {
		return fmt.Errorf("%w: job %s is %s", ErrNotRunning, id, st)
	}
	return n.apply(&command{Entry: runner.Entry{Op: runner.OpCancel, Job: id, Error: "cancelled by " + by}})
}
