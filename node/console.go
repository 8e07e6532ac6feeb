package node

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/cohortdm/cohort/api"
	"github.com/cohortdm/cohort/console"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/policy"
)

// The node's side of its web console (package console), which Handler
// mounts at console.Prefix: the console.Node the console reads, and what
// the node keeps only for it: its last warnings, when each member's
// connection opened or closed, and the leader changes, failing heartbeats
// and membership changes it has seen since it started.

// Kept for the console: the last warnings and consortium events.
const (
	consoleWarnings = 100
	consoleEvents   = 100
)

// consoleSite is one node's console, made when Handler first mounts it.
type consoleSite struct {
	warnings   *console.Warnings
	ledgerPath string
	version    string // Options.Version

	once    sync.Once
	handler http.Handler

	mu      sync.Mutex
	closed  map[string]time.Time // when a member's last connection closed
	failing map[string]time.Time // while leading: members whose heartbeats fail, with their last reply
	events  []console.Event
	members string // the membership last seen, to tell its changes
	voters  string
}

// newConsoleSite wraps the node's logger so the console can show its
// recent warnings.
func newConsoleSite(lg *slog.Logger, version string) (*consoleSite, *slog.Logger) {
	s := &consoleSite{version: version, warnings: console.NewWarnings(lg.Handler(), consoleWarnings),
		closed: map[string]time.Time{}, failing: map[string]time.Time{}}
	return s, slog.New(s.warnings)
}

// consoleHandler makes the console once and returns it.
func (n *Node) consoleHandler() http.Handler {
	s := n.console
	s.once.Do(func() {
		c, err := console.New(consoleNode{n}, console.Options{DataDir: n.cfg.DataDir, Version: s.version, LedgerPath: s.ledgerPath, Warnings: s.warnings,
			Preload: n.cfg.HTTP != ""})
		if err != nil {
			n.log.Error("console unavailable", "err", err)
			s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "console unavailable: "+err.Error(), http.StatusInternalServerError)
			})
			return
		}
		s.handler = c
		n.mesh.host.Network().Notify(&network.NotifyBundle{DisconnectedF: func(_ network.Network, c network.Conn) {
			if name, ok := n.mesh.gater.name(c.RemotePeer()); ok {
				s.mu.Lock()
				s.closed[name] = time.Now()
				s.mu.Unlock()
			}
		}})
		if n.consensus != nil {
			// The filter sees every observation as Raft makes it and keeps
			// what the console shows; with no channel nothing is queued.
			n.consensus.raft.RegisterObserver(raft.NewObserver(nil, false, func(o *raft.Observation) bool {
				s.observe(n, o)
				return false
			}))
			lead := n.Leader()
			s.leaderEvent(fmt.Sprintf("console started; leader %s, this node %s", orNone(lead), n.consensus.raft.State()), lead)
		}
	})
	return s.handler
}

// observe keeps one Raft observation. It runs on Raft's goroutines, so it
// only records (it must not call back into Raft).
func (s *consoleSite) observe(n *Node, o *raft.Observation) {
	switch d := o.Data.(type) {
	case raft.LeaderObservation:
		s.leaderEvent("leader is now "+orNone(string(d.LeaderID)), string(d.LeaderID))
	case raft.RaftState:
		s.event("this node is now " + d.String())
	case raft.FailedHeartbeatObservation:
		s.mu.Lock()
		if _, ok := s.failing[string(d.PeerID)]; !ok {
			s.failing[string(d.PeerID)] = d.LastContact
			s.events = appendEvent(s.events, fmt.Sprintf("heartbeats to %s failing", d.PeerID))
		}
		s.mu.Unlock()
	case raft.ResumedHeartbeatObservation:
		s.mu.Lock()
		delete(s.failing, string(d.PeerID))
		s.events = appendEvent(s.events, fmt.Sprintf("heartbeats to %s resumed", d.PeerID))
		s.mu.Unlock()
	}
	if c := n.mesh.members(); c != nil {
		s.seeMembers(strings.Join(c.Names(), ", "), "")
	}
}

func (s *consoleSite) event(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = appendEvent(s.events, what)
}

// leaderEvent records who leads from now on ("" no one), which the job
// timelines read to name a finished step's coordinator.
func (s *consoleSite) leaderEvent(what, leader string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = keepEvents(append(s.events, console.Event{Time: time.Now().UTC(), What: what, LeaderChange: true, Leader: leader}))
}

func appendEvent(es []console.Event, what string) []console.Event {
	return keepEvents(append(es, console.Event{Time: time.Now().UTC(), What: what}))
}

// keepEvents keeps the last consoleEvents events.
func keepEvents(es []console.Event) []console.Event {
	if len(es) > consoleEvents {
		es = slices.Delete(es, 0, len(es)-consoleEvents)
	}
	return es
}

// seeMembers records a change of the members or the voters ("" leaves
// either as it was).
func (s *consoleSite) seeMembers(members, voters string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if members != "" && members != s.members {
		if s.members != "" {
			s.events = appendEvent(s.events, "members are now "+members)
		}
		s.members = members
	}
	if voters != "" && voters != s.voters {
		if s.voters != "" {
			s.events = appendEvent(s.events, "voters are now "+voters)
		}
		s.voters = voters
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// consoleNode is the node as its console reads it.
type consoleNode struct{ n *Node }

var _ console.Node = consoleNode{}

func (v consoleNode) Name() string                              { return v.n.cfg.Name }
func (v consoleNode) Status() api.Status                        { return v.n.Status() }
func (v consoleNode) JobKinds() []string                        { return v.n.JobKinds() }
func (v consoleNode) FinishedCounts(kind string) map[string]int { return v.n.FinishedCounts(kind) }
func (v consoleNode) RunningJobs(kind string) []string          { return v.n.RunningJobs(kind) }
func (v consoleNode) FinishedJobs(kind, status string, offset, limit int) []string {
	return v.n.FinishedJobs(kind, status, offset, limit)
}
func (v consoleNode) JobsChanged() <-chan struct{}               { return v.n.fsm.jobs.Watch() }
func (v consoleNode) Policy() (*policy.Show, error)              { return v.n.policy.Show() }
func (v consoleNode) Decision(id string) (policy.Decision, bool) { return v.n.policy.Decision(id) }
func (v consoleNode) APIToken() string                           { return v.n.token }

func (v consoleNode) Approve(ctx context.Context, id string) error { return v.n.Approve(ctx, id) }
func (v consoleNode) Reject(ctx context.Context, id, reason string) error {
	return v.n.Reject(ctx, id, reason)
}

// Job is the API's view of a job with the spec, result and step
// coordinators the API leaves out.
func (v consoleNode) Job(id string) (*console.Job, bool) {
	rec, ok := v.n.fsm.jobs.Job(id)
	if !ok {
		return nil, false
	}
	js := &console.Job{JobStatus: v.n.status(rec), Spec: rec.Spec, Result: rec.Result, Coordinators: make([]string, len(rec.Steps))}
	for i, s := range rec.Steps {
		js.Coordinators[i] = s.Step.Coordinator
	}
	return js, true
}

// Done is closed when the node stops (never before it has started).
func (v consoleNode) Done() <-chan struct{} {
	if v.n.ctx == nil {
		return nil
	}
	return v.n.ctx.Done()
}

// Uses says what a job would disclose of this node's data, as its kind
// declares it to this node's policy.
func (v consoleNode) Uses(id string) ([]job.Use, error) {
	rec, ok := v.n.fsm.jobs.Job(id)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoJob, id)
	}
	spec, err := job.ParseSpec(rec.Spec, "job "+id)
	if err != nil {
		return nil, err
	}
	kind, ok := v.n.kinds[spec.Kind]
	if !ok {
		return nil, fmt.Errorf("this node does not run %s jobs", spec.Kind)
	}
	d, ok := kind.(job.Discloser)
	if !ok {
		return nil, fmt.Errorf("kind %s declares nothing of what it discloses", spec.Kind)
	}
	return d.Uses(spec, v.n.cfg.Name)
}

// Consortium is the membership and each member's health as this node
// sees them.
func (v consoleNode) Consortium() console.Consortium {
	n, s := v.n, v.n.console
	out := console.Consortium{Leader: n.Leader(), Voters: n.RaftVoters()}
	if n.consensus != nil {
		out.Role = n.consensus.raft.State().String()
		if n.consensus.raft.State() != raft.Leader {
			out.LeaderContact = n.consensus.raft.LastContact()
		}
	}
	cons := n.Consortium()
	s.seeMembers(strings.Join(cons.Names(), ", "), strings.Join(out.Voters, ", "))
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range cons.Members {
		cm := console.Member{Member: m, Self: m.Name == n.cfg.Name, Voter: slices.Contains(out.Voters, m.Name), Leader: m.Name == out.Leader}
		if id, err := peer.Decode(m.PeerID); err == nil && !cm.Self {
			for _, c := range n.mesh.host.Network().ConnsToPeer(id) {
				if opened := c.Stat().Opened; !cm.Connected || opened.Before(cm.Since) {
					cm.Connected, cm.Since = true, opened
				}
			}
			if !cm.Connected {
				cm.Since = s.closed[m.Name]
			}
		}
		if last, ok := s.failing[m.Name]; ok {
			cm.HeartbeatFailing, cm.LastContact = true, last
		}
		out.Members = append(out.Members, cm)
	}
	out.Events = slices.Clone(s.events)
	return out
}
