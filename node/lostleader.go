package node

import (
	"sync"
	"time"
)

// lostLeaders remembers when this node last heard from each member that
// led the consortium and was replaced, as Raft saw it: the last heartbeat
// from that leader (raft.LastContact) when the leader changed.
//
// An election is the quorum's own evidence that the old leader has gone
// quiet, so a coordinator that takes over a job need not start that
// party's silence from zero: probing it counts from its last heartbeat
// (watchParty). A killed leader that was also a party is then found
// unreachable about one probe after the new leader resumes the step,
// rather than a whole unreachable window later.
type lostLeaders struct {
	self string

	mu     sync.Mutex
	leader string               // the last non-empty leader observed
	last   map[string]time.Time // replaced leader → its last heartbeat here
}

func newLostLeaders(self string) *lostLeaders {
	return &lostLeaders{self: self, last: map[string]time.Time{}}
}

// observe takes one leader observation (leader "" while there is none)
// with Raft's last contact at that moment. It runs on Raft's goroutine and
// only records.
func (l *lostLeaders) observe(leader string, lastContact time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if old := l.leader; old != "" && old != leader && old != l.self && !lastContact.IsZero() {
		if t, ok := l.last[old]; !ok || lastContact.Before(t) {
			l.last[old] = lastContact
		}
	}
	if leader != "" {
		l.leader = leader
		delete(l.last, leader)
	}
}

// heard forgets p's loss: it has answered since.
func (l *lostLeaders) heard(p string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.last, p)
}

// since is the last heartbeat from p if p is a leader this node saw
// replaced and has not heard from since.
func (l *lostLeaders) since(p string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.last[p]
	return t, ok
}
