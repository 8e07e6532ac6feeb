package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/raft"

	"github.com/cohortdm/cohort/job/runner"
)

// Membership changes. The consortium is part of the replicated state: the
// consortium file gives its members at start, and `cohort consortium add`
// and `remove` commit member-add and member-remove entries to the Raft log.
// Every node applies them in log order: it admits exactly the members the
// log names (a new member's connections are refused until its add is
// committed, a removed member's from the moment its remove is), updates its
// peer addresses and rewrites its consortium file. The leader then brings
// Raft's own configuration in line: a new member joins as a non-voting
// replica (promoted if the voter rule wants it, see voters.go), a removed
// one leaves it.
//
// A change is refused while a job runs: the job's parties, its threshold key
// and its coordinator's view of who takes part must not change under it.
// The threshold key is dealt for a fixed member set: after a change, deal a
// new one (cohort keys deal) for the new members before running jobs that
// decrypt; a new member has no share of the old key, and a removed member's
// share of it still decrypts with the others'.

// ErrMembership marks a membership change that was refused (a running job,
// a duplicate, an unknown member); the API answers it with 409.
var ErrMembership = errors.New("membership change refused")

// setMembers sets the consortium the log starts from.
func (f *fsm) setMembers(c *Consortium) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.members, f.voters = slices.Clone(c.Members), c.VotersWanted
}

func (f *fsm) consortiumLocked() *Consortium {
	return &Consortium{Members: slices.Clone(f.members), VotersWanted: f.voters}
}

// checkMembers says why a membership change cannot be committed now, or nil.
func (f *fsm) checkMembers(op string, m *Member) error {
	if m == nil {
		return fmt.Errorf("%w: %s without a member", ErrMembership, op)
	}
	if running := f.jobs.Running(); len(running) > 0 {
		return fmt.Errorf("%w: job %s is running; change the membership between jobs (cohort job cancel, or wait)", ErrMembership, running[0])
	}
	cur := f.consortiumLocked()
	switch op {
	case opAddMember:
		if _, ok := cur.Member(m.Name); ok {
			return fmt.Errorf("%w: %q is already a member", ErrMembership, m.Name)
		}
		next := &Consortium{Members: append(cur.Members, *m), VotersWanted: cur.VotersWanted}
		if err := next.Validate("member " + m.Name); err != nil {
			return fmt.Errorf("%w: %w", ErrMembership, err)
		}
		if err := CheckName(m.Name); err != nil {
			return fmt.Errorf("%w: %w", ErrMembership, err)
		}
	case opRemoveMember:
		if _, ok := cur.Member(m.Name); !ok {
			return fmt.Errorf("%w: %q is not a member (members: %v)", ErrMembership, m.Name, cur.Names())
		}
		if len(cur.Members) == 1 {
			return fmt.Errorf("%w: %q is the last member", ErrMembership, m.Name)
		}
	}
	return nil
}

// applyMembers applies a member-add or member-remove entry (lock held).
func (f *fsm) applyMembers(c *command) error {
	if err := f.checkMembers(c.Op, c.Member); err != nil {
		return err
	}
	if c.Op == opAddMember {
		f.members = append(slices.Clone(f.members), *c.Member)
	} else {
		f.members = slices.DeleteFunc(slices.Clone(f.members), func(m Member) bool { return m.Name == c.Member.Name })
	}
	if f.onMembers != nil {
		f.onMembers(f.consortiumLocked())
	}
	return nil
}

// Consortium returns the members as this node's log has them.
func (n *Node) Consortium() *Consortium {
	c := n.mesh.members()
	return &Consortium{Members: slices.Clone(c.Members), VotersWanted: c.VotersWanted}
}

// membersChanged makes the node admit and find exactly the log's members
// (mesh.setMembers) and rewrites its consortium file. The fsm calls it on
// every change.
func (n *Node) membersChanged(c *Consortium) {
	n.mesh.setMembers(c)
	if n.cfg.Consortium == "" {
		return
	}
	if err := c.Save(n.cfg.Consortium); err != nil {
		n.log.Error("rewrite the consortium file after a membership change", "path", n.cfg.Consortium, "err", err)
		return
	}
	n.log.Info("consortium changed", "members", c.Names(), "file", n.cfg.Consortium)
}

// AddMember commits a new member to the consortium (through the leader)
// and returns once this node has applied it.
func (n *Node) AddMember(ctx context.Context, m Member) error {
	return n.changeMembers(ctx, opAddMember, &m)
}

// RemoveMember commits a member's removal (through the leader) and returns
// once this node has applied it.
func (n *Node) RemoveMember(ctx context.Context, name string) error {
	return n.changeMembers(ctx, opRemoveMember, &Member{Name: name})
}

func (n *Node) changeMembers(ctx context.Context, op string, m *Member) error {
	n.fsm.mu.RLock()
	err := n.fsm.checkMembers(op, m)
	n.fsm.mu.RUnlock()
	if err != nil {
		return err
	}
	for {
		// A change committed by an attempt whose answer was lost (the
		// leader that removed itself stepped down first) is not sent again.
		if _, has := n.mesh.members().Member(m.Name); has == (op == opAddMember) {
			break
		}
		if n.IsLeader() {
			err = n.apply(&command{Entry: runner.Entry{Op: op}, Member: m})
		} else if leader := n.Leader(); leader != "" {
			_, err = n.forward(ctx, leader, &controlRequest{Op: op, Member: m})
		} else {
			err = ErrNoLeader
		}
		if err == nil {
			break
		}
		if !errors.Is(err, errNotLeader) && !errors.Is(err, ErrNoLeader) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s %s: %w", op, m.Name, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	for { // answer once this node has applied it too
		_, has := n.mesh.members().Member(m.Name)
		if has == (op == opAddMember) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s %s: committed, but this node has not applied it yet: %w", op, m.Name, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// commitMembers is the leader's side of a forwarded membership change.
func (n *Node) commitMembers(op string, m *Member) error {
	return n.apply(&command{Entry: runner.Entry{Op: op}, Member: m})
}

// reconcileRaftMembers makes at most one change to Raft's configuration
// toward the log's members: a server that is no longer a member leaves, a
// member that is not a server joins as a non-voter. It reports whether it
// changed something.
func (c *consensus) reconcileRaftMembers(servers []raft.Server, timeout time.Duration) bool {
	cons := c.members()
	for _, s := range servers {
		if _, ok := cons.Member(string(s.ID)); !ok {
			c.log.Info("removing a former member from Raft", "member", s.ID)
			if err := c.raft.RemoveServer(s.ID, 0, timeout).Error(); err != nil {
				c.log.Warn("remove from Raft failed", "member", s.ID, "err", err)
			}
			return true
		}
	}
	for _, m := range cons.Members {
		if !slices.ContainsFunc(servers, func(s raft.Server) bool { return string(s.ID) == m.Name }) {
			c.log.Info("adding a new member to Raft as a non-voter", "member", m.Name)
			if err := c.raft.AddNonvoter(raft.ServerID(m.Name), raft.ServerAddress(m.PeerID), 0, timeout).Error(); err != nil {
				c.log.Warn("add to Raft failed", "member", m.Name, "err", err)
			}
			return true
		}
	}
	return false
}
