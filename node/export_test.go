package node

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/wire"
)

// MetricSum adds up every sample of the named counter or gauge in the
// node's registry (0 if it has none), for tests in package node_test.
func MetricSum(n *Node, name string) float64 { return metricSum(n.metrics, name) }

// metricSum adds up every sample of the named counter or gauge in m.
func metricSum(m *metrics, name string) float64 {
	mfs, err := m.reg.Gather()
	if err != nil {
		return -1
	}
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if c := m.GetCounter(); c != nil {
				total += c.GetValue()
			} else if g := m.GetGauge(); g != nil {
				total += g.GetValue()
			}
		}
	}
	return total
}

// Connected reports whether n has a live libp2p connection to id.
func Connected(n *Node, id peer.ID) bool {
	return n.mesh.host.Network().Connectedness(id) == network.Connected
}

// CommitUnsigned commits a job with no submission, as a leader running
// other code could (tests of the parties' refusal): n must lead.
func CommitUnsigned(n *Node, spec []byte) (string, error) {
	id := "unsigned-" + time.Now().UTC().Format("150405.000000")
	return id, n.apply(&command{Entry: runner.Entry{Op: runner.OpSubmit, Job: id, Spec: spec, Seed: make([]byte, job.SeedSize)}})
}

// Retained is what a node holds for jobs outside the replicated state:
// the runner's workers and coordinations, the progress board's entries,
// and the mailbox's queued messages.
type Retained struct{ Workers, Coordinating, Progress, Queued int }

// RetainedOf counts what n holds for jobs (Retained).
func RetainedOf(n *Node) Retained {
	var r Retained
	if n.jobs != nil {
		n.jobs.mu.Lock()
		r.Workers, r.Coordinating = len(n.jobs.workers), len(n.jobs.coordinating)
		n.jobs.mu.Unlock()
	}
	n.progress.mu.Lock()
	r.Progress = len(n.progress.m)
	n.progress.mu.Unlock()
	r.Queued = n.ms.box.Len()
	return r
}

// CommitTwice signs spec once as n and commits that one submission twice,
// as Submit does when the leader it went through lost its leadership after
// appending it; n must lead.
func CommitTwice(n *Node, spec []byte) (string, string, error) {
	sub, err := n.sign(spec)
	if err != nil {
		return "", "", err
	}
	first, err := n.commitSubmit(spec, sub)
	if err != nil {
		return "", "", err
	}
	second, err := n.commitSubmit(spec, sub)
	return first, second, err
}

// WriteConfig is writeConfig, for tests in package node_test.
func WriteConfig(t testing.TB, dir, extra string) string { return writeConfig(t, dir, extra) }

// writeConfig writes dir/node.yaml: the smallest one LoadConfig accepts,
// then extra (the settings a test checks), and returns its path.
func writeConfig(t testing.TB, dir, extra string) string {
	t.Helper()
	p := filepath.Join(dir, "node.yaml")
	if err := os.WriteFile(p, []byte("name: a\ndata_dir: d\nconsortium: c.yaml\n"+extra), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// WithholdStart makes n's Raft log refuse to store the start entry of one
// attempt (and so every entry after it), as if replication to n lagged,
// until n closes: n's peers run the attempt while n's log does not hold
// it. The refusals are not storage faults; n reports none.
func WithholdStart(n *Node, phase string, round, attempt int) {
	pick := func(l *raft.Log) bool {
		var c command
		if l.Type != raft.LogCommand || wire.Unmarshal(l.Data, &c) != nil {
			return false
		}
		s := c.Entry.Step
		return c.Op == runner.OpStart && s != nil && s.Phase == phase && s.Round == round && s.Attempt == attempt
	}
	n.consensus.logs.withhold.Store(&pick)
}
