package onetable

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/internal/testkit/nodewatch"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// hub is the member that coordinates the leakage tests over real nodes
// and holds no table: what reaches it has left the party.
const hub = "hub"

// nodeTiming leaves a loaded machine room: the party is never dropped
// for being slow (RunWatched keeps hub leading, as the ledger checks
// expect).
var nodeTiming = node.Timing{SendMS: 10000, StepMS: 60000}

// runNodes runs spec s on real nodes (libp2p on loopback, Raft), the
// party and hub, hub leading, every node under pol and running the kind
// watched (every session's sends and outputs, every committed decision
// and failure, every node's log at debug level). It returns the job's
// record, the cluster, the ledgers' directory and the capture.
func runNodes(t *testing.T, s *job.Spec, pol *policy.Policy) (*node.JobRecord, *sim.Cluster, string, *nodewatch.Capture) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(s.Dir, "spec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r := simtest.RunWatched(t, []string{hub, s.PartyNames()[0]}, hub, "anonymize", nodewatch.Watch{Kind: Kind{}}, raw,
		sim.ClusterOptions{TablesDir: s.Dir, Timing: nodeTiming, Policy: pol})
	return r.Rec, r.Cluster, r.Audit, r.Capture
}

// kPolicy is the default node policy with its floor on k lowered to k: the
// seed table is small.
func kPolicy(k int) *policy.Policy {
	pol := policy.Default()
	pol.Floors.MinK = k
	return pol
}

// The leakage profile over real nodes, hub (a member that is not the
// party) coordinating: the party's session sends nothing itself; its one
// output, the publication, reaches hub alone, recorded in its ledger as
// generalised; the committed decision is that publication; no id, and no
// raw education value the publication does not show, is in any output,
// decision, failure, log record of any node, the job's record or hub's
// Raft store; hub's ledger holds control entries only.
func TestLeakageNodes(t *testing.T) {
	t.Parallel()
	s := seedSpec(t, "  algorithm: optimal\n  requirements: [{qid: [gender, education, age], k: 4}]\n", nil)
	rec, cl, auditDir, c := runNodes(t, s, kPolicy(4))
	if rec.Status != node.StatusDone {
		t.Fatalf("job %s: %s", rec.Status, rec.Error)
	}
	c.Mu.Lock()
	defer c.Mu.Unlock()
	for _, m := range c.Sent {
		t.Errorf("the session sent %s to %s disclosing %q: the profile has no message but its output", m.M.Type, m.To, m.D)
	}
	if len(c.Decisions) != 1 || c.Decisions[0] == nil || len(c.Outputs) == 0 {
		t.Fatalf("%d decisions, %d outputs: want the one publication", len(c.Decisions), len(c.Outputs))
	}
	var pub output
	if err := wire.Unmarshal(c.Decisions[0], &pub); err != nil {
		t.Fatal(err)
	}
	for _, o := range c.Outputs {
		if !bytes.Equal(o.Body, c.Decisions[0]) {
			t.Errorf("an output of attempt %d is not the committed publication", o.Attempt)
		}
	}
	hay := haystacks(t, c, rec)
	checkLedgers(t, auditDir, "clinic", 1)
	simtest.RaftFiles(t, cl, hub, func(path string, data []byte) { hay[path] = data })
	for _, nd := range needles(t, pub.Table) {
		for where, h := range hay {
			if bytes.Contains(h, []byte(nd)) {
				t.Errorf("%q is in %s", nd, where)
			}
		}
	}
}

// haystacks is everything captured that left the party or was written
// down: outputs, decisions, failures, every node's log, the job's result
// and error.
func haystacks(t *testing.T, c *nodewatch.Capture, rec *node.JobRecord) map[string][]byte {
	t.Helper()
	if c.LogBytes == 0 {
		t.Error("no node log captured: the check checks nothing")
	}
	hay := map[string][]byte{"the nodes' logs": c.Logs.Bytes(), "the job's result": rec.Result, "the job's error": []byte(rec.Error)}
	for i, o := range c.Outputs {
		hay[fmt.Sprint("output ", i)] = o.Body
	}
	for i, d := range c.Decisions {
		hay[fmt.Sprint("decision ", i)] = d
	}
	for p, f := range rec.Failures {
		hay["the failure of "+p] = []byte(f)
	}
	hay["the failures"] = []byte(strings.Join(c.Failures, "\n"))
	return hay
}

// checkLedgers checks the ledgers of party and hub: the party sent only
// the generalised publication (want of them) to hub in the anonymize
// phase and control entries (its admission answer or failure report to
// hub, its policy's decisions); hub sent control only.
func checkLedgers(t *testing.T, auditDir, party string, want int) {
	t.Helper()
	entries, err := audit.ReadFile(filepath.Join(auditDir, party+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	published := 0
	for _, e := range entries {
		switch {
		case e.Disclosure == string(wire.DiscloseGeneralised) && e.Phase == anonymizeRound.Phase && e.Peer == hub:
			published++
		case e.Disclosure == string(wire.DiscloseControl) && e.Type == audit.DecisionType:
		case e.Disclosure == string(wire.DiscloseControl) && e.Type == runner.OutputType && e.Peer == hub:
			// its admission answer, or a failure report (its text checked
			// with the failures)
		default:
			t.Errorf("%s's ledger holds %s in %s to %s disclosing %q", party, e.Type, e.Phase, e.Peer, e.Disclosure)
		}
	}
	if published != want {
		t.Errorf("%s's ledger holds %d generalised publications to %s, want %d", party, published, hub, want)
	}
	if len(audit.Decisions(entries)) == 0 {
		t.Errorf("%s's ledger holds no policy decision: the check checks nothing", party)
	}
	entries, err = audit.ReadFile(filepath.Join(auditDir, hub+".jsonl"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Disclosure != string(wire.DiscloseControl) {
			t.Errorf("%s's ledger holds %s in %s to %s disclosing %q", hub, e.Type, e.Phase, e.Peer, e.Disclosure)
		}
	}
}

// Bad input over real nodes: a value the taxonomy does not cover fails
// the job with an error naming the column and the count of rows, never
// the value; the value is in no failure, log record, ledger or hub's Raft
// store, and no publication left the party.
func TestBadInputNodes(t *testing.T) {
	t.Parallel()
	const secret = "Medicine"
	s := seedSpec(t, "  requirements: [{qid: [education], k: 4}]\n", func(r [][]string) [][]string { r[3][3] = secret; return r })
	rec, cl, auditDir, c := runNodes(t, s, kPolicy(4))
	if rec.Status == node.StatusDone || !strings.Contains(rec.Error, `column "education": 1 of 34 rows`) {
		t.Fatalf("job %s: %q, want a failure naming the column", rec.Status, rec.Error)
	}
	if !slices.ContainsFunc(c.Failures, func(f string) bool { return strings.Contains(f, `column "education"`) }) {
		t.Errorf("failures %q: want the party's naming the column", c.Failures)
	}
	checkLedgers(t, auditDir, "clinic", 0)
	c.Mu.Lock()
	hay := haystacks(t, c, rec)
	c.Mu.Unlock()
	simtest.RaftFiles(t, cl, hub, func(path string, data []byte) { hay[path] = data })
	for _, name := range []string{"clinic", hub} {
		b, err := os.ReadFile(filepath.Join(auditDir, name+".jsonl"))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		hay[name+"'s ledger"] = b
	}
	for where, h := range hay {
		if bytes.Contains(h, []byte(secret)) {
			t.Errorf("the uncovered value is in %s", where)
		}
	}
	for _, d := range c.Decisions {
		if d != nil {
			t.Errorf("a publication was committed: %x", d)
		}
	}
}
