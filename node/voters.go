package node

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/hashicorp/raft"
)

// Raft voters. A Raft group's every commit waits for a majority of its
// voters, and every voter takes part in elections, so a group slows down and
// elects less reliably as voters are added. A consortium therefore has a
// small voter set (DefaultVoters, or the consortium file's voters:) and the
// other members are non-voting replicas: they receive and apply the whole
// log, run the steps of every job they are a party to and are never asked
// to vote.
//
// The voters are chosen deterministically, so every node bootstraps the
// same configuration from the consortium file alone: the first members in
// sorted name order. While it leads, a node keeps that rule true of the
// members that are up: a voter the leader has not heard from for
// Timing.VoterDownMS is demoted and the next member in sorted order
// promoted (the promotion first, so the voter count never drops), and a
// member that comes back, or a voter that was removed, is rebalanced the
// same way. A voter is demoted only once its replacement votes, so a
// consortium no larger than its voter set never loses a voter this way.

// DefaultVoters is the voter count of a consortium file without voters:.
const DefaultVoters = 5

// VoterCount is how many of n members vote when the file asks for want (0:
// DefaultVoters). Every member votes in a consortium of up to that many.
func VoterCount(n, want int) int {
	if want <= 0 {
		want = DefaultVoters
	}
	return min(n, want)
}

// Voters returns the consortium's initial voter set: the first
// VoterCount members by sorted name.
func (c *Consortium) Voters() []string {
	names := c.Names()
	return names[:VoterCount(len(names), c.VotersWanted)]
}

// raftConfiguration is the configuration every node bootstraps with.
func (c *Consortium) raftConfiguration() raft.Configuration {
	voters := c.Voters()
	var cfg raft.Configuration
	for _, m := range c.Members {
		s := raft.Server{ID: raft.ServerID(m.Name), Address: raft.ServerAddress(m.PeerID), Suffrage: raft.Nonvoter}
		if slices.Contains(voters, m.Name) {
			s.Suffrage = raft.Voter
		}
		cfg.Servers = append(cfg.Servers, s)
	}
	return cfg
}

// RaftVoters returns the voters of the node's current Raft configuration,
// sorted.
func (n *Node) RaftVoters() []string {
	if n.consensus == nil {
		return nil
	}
	return n.consensus.voters()
}

// keepVoters runs on every node until ctx ends; while the node leads it
// rebalances the voter set once a second and whenever a follower's
// heartbeats start failing or resume.
func (c *consensus) keepVoters(ctx context.Context) {
	obs := make(chan raft.Observation, 64)
	observer := raft.NewObserver(obs, false, func(o *raft.Observation) bool {
		switch o.Data.(type) {
		case raft.FailedHeartbeatObservation, raft.ResumedHeartbeatObservation, raft.LeaderObservation:
			return true
		}
		return false
	})
	c.raft.RegisterObserver(observer)
	defer c.raft.DeregisterObserver(observer)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	// down holds, per follower whose heartbeats fail, when it was last
	// heard from. Only a leader sends heartbeats, so only it fills this.
	down := map[raft.ServerID]time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case o := <-obs:
			switch d := o.Data.(type) {
			case raft.FailedHeartbeatObservation:
				if _, ok := down[d.PeerID]; !ok {
					since := d.LastContact
					if since.IsZero() {
						since = time.Now()
					}
					down[d.PeerID] = since
				}
			case raft.ResumedHeartbeatObservation:
				delete(down, d.PeerID)
			case raft.LeaderObservation:
				clear(down) // a new leader learns for itself
			}
			continue
		case <-tick.C:
		}
		if c.raft.State() == raft.Leader {
			c.rebalanceVoters(ctx, down)
		}
	}
}

// rebalanceVoters makes at most one configuration change: toward the log's
// members (members.go), else toward the voter set the rule asks for.
func (c *consensus) rebalanceVoters(ctx context.Context, down map[raft.ServerID]time.Time) {
	f := c.raft.GetConfiguration()
	if f.Error() != nil {
		return
	}
	servers := f.Configuration().Servers
	sort.Slice(servers, func(i, j int) bool { return servers[i].ID < servers[j].ID })
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	timeout := time.Until(deadline(ctx))
	if c.reconcileRaftMembers(servers, timeout) {
		return
	}
	wantN := VoterCount(len(servers), c.votersWanted())
	downFor := c.voterDown
	self := raft.ServerID(c.self)
	var want []raft.Server
	for _, s := range servers {
		since, failing := down[s.ID]
		if s.ID != self && failing && time.Since(since) > downFor {
			continue
		}
		if len(want) < wantN {
			want = append(want, s)
		}
	}
	for _, s := range want { // promote first, so the voters never shrink below wantN
		if s.Suffrage != raft.Voter {
			c.log.Info("promoting a member to Raft voter", "member", s.ID)
			if err := c.raft.AddVoter(s.ID, s.Address, 0, timeout).Error(); err != nil {
				c.log.Warn("promote to voter failed", "member", s.ID, "err", err)
			}
			return
		}
	}
	// Demote only while there are more voters than wanted, i.e. once a
	// replacement has been promoted: a down voter with no member to take
	// its place still counts toward the quorum when it comes back.
	voters := 0
	for _, s := range servers {
		if s.Suffrage == raft.Voter {
			voters++
		}
	}
	if voters <= wantN {
		return
	}
	for _, s := range servers {
		if s.Suffrage == raft.Voter && !slices.ContainsFunc(want, func(w raft.Server) bool { return w.ID == s.ID }) {
			c.log.Info("demoting a Raft voter to non-voter", "member", s.ID, "down_since", down[s.ID])
			if err := c.raft.DemoteVoter(s.ID, 0, timeout).Error(); err != nil {
				c.log.Warn("demote voter failed", "member", s.ID, "err", err)
			}
			return
		}
	}
}

func (c *consensus) votersWanted() int {
	cons := c.members()
	if cons == nil {
		return 0
	}
	return cons.VotersWanted
}

func deadline(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}
