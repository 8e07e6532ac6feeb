package jobtest

import (
	"context"
	"testing"

	jobrun "github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/job/runner/runnertest"
)

// memLogs is the in-memory log as the conformance suite drives it: a
// leader's log is the log under the current term, and an election starts a
// new term, as a Fault's Leader does.
type memLogs struct{ l *memLog }

func (m memLogs) Leader() jobrun.Log { return termLog{m.l, m.l.currentTerm()} }

func (m memLogs) Elect(context.Context) error {
	m.l.newTerm()
	return nil
}

func TestLogConforms(t *testing.T) { runnertest.TestLog(t, memLogs{newLog()}) }

func TestPartyConforms(t *testing.T) {
	net := NewNetwork("a", "b")
	runnertest.TestParty(t, net.Party("a"), net.Party("b"))
}
