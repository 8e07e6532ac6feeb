package publish

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

// hub is the member that coordinates the tests over real nodes and holds
// no table: what reaches it has left the party.
const hub = "hub"

// nodeTiming leaves a loaded machine room: the party is never dropped
// for being slow (RunWatched keeps hub leading, as the ledger checks
// expect).
var nodeTiming = node.Timing{SendMS: 10000, StepMS: 60000}

// nodeRun is one job over real nodes, watched (simtest.RunWatched).
type nodeRun struct{ *simtest.Watched }

// runNodes runs spec s on real nodes (libp2p on loopback, Raft), the
// party and hub, hub leading when the job is submitted, every node under
// pol and running w watched (every session's sends and outputs, every
// committed decision and failure, every node's log at debug level).
func runNodes(t *testing.T, s *job.Spec, pol *policy.Policy, w nodewatch.Watch) *nodeRun {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(s.Dir, "spec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r := simtest.RunWatched(t, []string{hub, s.PartyNames()[0]}, hub, "coherence", w, raw,
		sim.ClusterOptions{TablesDir: s.Dir, Timing: nodeTiming, Policy: pol})
	return &nodeRun{r}
}

// ledger checks the ledgers of party and hub: the party sent hub its
// outputs, recorded as public results, in the phases listed in want (how
// many of each), and control entries only besides (its admission answer
// or failure report to hub, its policy's decisions); hub sent control
// only.
func (r *nodeRun) ledger(t *testing.T, party string, want map[string]int) {
	t.Helper()
	entries, err := audit.ReadFile(filepath.Join(r.Audit, party+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, e := range entries {
		switch {
		case e.Disclosure == string(wire.DisclosePublicResult) && e.Type == runner.OutputType && e.Peer == hub:
			got[e.Phase]++
		case e.Disclosure == string(wire.DiscloseControl) && e.Type == audit.DecisionType:
		case e.Disclosure == string(wire.DiscloseControl) && e.Type == runner.OutputType && e.Peer == hub:
		default:
			t.Errorf("%s's ledger holds %s in %s to %s disclosing %q", party, e.Type, e.Phase, e.Peer, e.Disclosure)
		}
	}
	for _, ph := range []string{job.PhaseSeedCommit, job.PhaseSeedReveal, phase} {
		if got[ph] != want[ph] {
			t.Errorf("%s's ledger holds %d public results of step %s, want %d", party, got[ph], ph, want[ph])
		}
	}
	if len(audit.Decisions(entries)) == 0 {
		t.Errorf("%s's ledger holds no policy decision: the check checks nothing", party)
	}
	if entries, err = audit.ReadFile(filepath.Join(r.Audit, hub+".jsonl")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Disclosure != string(wire.DiscloseControl) {
			t.Errorf("%s's ledger holds %s in %s to %s disclosing %q", hub, e.Type, e.Phase, e.Peer, e.Disclosure)
		}
	}
}

// noneHolds checks that no needle is in any output, decision, failure,
// log record of any node, ledger, the job's result or error, or hub's
// Raft store. It closes the cluster.
func (r *nodeRun) noneHolds(t *testing.T, needles []string) {
	t.Helper()
	c := r.Capture
	c.Mu.Lock()
	if c.LogBytes == 0 {
		t.Error("no node log captured: the check checks nothing")
	}
	hay := map[string][]byte{"the nodes' logs": bytes.Clone(c.Logs.Bytes()), "the job's result": r.Rec.Result,
		"the job's error": []byte(r.Rec.Error), "the failures": []byte(strings.Join(c.Failures, "\n"))}
	for i, o := range c.Outputs {
		hay[fmt.Sprint("output ", i)] = o.Body
	}
	for i, d := range c.Decisions {
		hay[fmt.Sprint("decision ", i)] = d
	}
	for _, m := range c.Sent {
		hay[fmt.Sprint("message ", m.M.Type)] = m.M.Body
	}
	c.Mu.Unlock()
	for p, f := range r.Rec.Failures {
		hay["the failure of "+p] = []byte(f)
	}
	simtest.RaftFiles(t, r.Cluster, hub, func(path string, data []byte) { hay[path] = data })
	for _, name := range r.Cluster.Names {
		b, err := os.ReadFile(filepath.Join(r.Audit, name+".jsonl"))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		hay[name+"'s ledger"] = b
	}
	for _, nd := range needles {
		for where, h := range hay {
			if bytes.Contains(h, []byte(nd)) {
				t.Errorf("%q is in %s", nd, where)
			}
		}
	}
}

// tids are the transaction ids of a tid,item CSV, each once.
func tids(data string) []string {
	var out []string
	for _, line := range strings.Split(data, "\n")[1:] {
		if tid, _, _ := strings.Cut(line, ","); tid != "" {
			out = append(out, tid)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// The leakage profile over real nodes, hub (a member that is not the
// party) coordinating: the session sends nothing itself; its outputs
// reach hub alone, recorded as public results, one per step (commitment,
// opening, publication); the log's commitments and openings fold into the
// job's joint seed, the opening checking against the commitment; the
// committed publication is the party's output; no customer id is in any
// output, decision, failure, log record, ledger, the job's record or hub's
// Raft store.
func TestLeakageNodes(t *testing.T) {
	t.Parallel()
	data := basketsCSV(120, 9)
	s := writeSpec(t, "baskets.csv", data, "  h: 0.6\n  k: 5\n  p: 2\n  private: [s0, s1, s2]\n")
	r := runNodes(t, s, policy.Default(), nodewatch.Watch{Kind: Kind{}})
	if r.Rec.Status != node.StatusDone {
		t.Fatalf("job %s: %s", r.Rec.Status, r.Rec.Error)
	}
	c := r.Capture
	c.Mu.Lock()
	for _, m := range c.Sent {
		t.Errorf("the session sent %s to %s disclosing %q: the profile has no message but its outputs", m.M.Type, m.To, m.D)
	}
	if len(c.Decisions) != 3 || len(c.Outputs) != 3 {
		t.Fatalf("%d decisions, %d outputs: want the commitment, the opening and the publication", len(c.Decisions), len(c.Outputs))
	}
	var com job.SeedCommitments
	var ops job.SeedOpenings
	if err := wire.Unmarshal(c.Decisions[0], &com); err != nil {
		t.Fatal(err)
	}
	if err := wire.Unmarshal(c.Decisions[1], &ops); err != nil {
		t.Fatal(err)
	}
	if _, err := jointSeed(r.Rec.ID, s).Fold(com, ops); err != nil {
		t.Errorf("the log's joint seed: %v", err)
	}
	if !bytes.Equal(c.Outputs[2].Body, c.Decisions[2]) {
		t.Error("the committed publication is not the party's output")
	}
	c.Mu.Unlock()
	r.ledger(t, "shop", map[string]int{job.PhaseSeedCommit: 1, job.PhaseSeedReveal: 1, phase: 1})
	r.noneHolds(t, tids(data))
}

// Bad input over real nodes: a private item in every transaction fails
// the job (Theorem 3) with an error naming params.h, never a value: no
// transaction id is in any failure, log record, ledger or hub's Raft
// store, and no publication left the party.
func TestBadDataNodes(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("tid,item\n")
	for i := range 6 {
		fmt.Fprintf(&b, "x-secret-x%d,a\nx-secret-x%d,ill\n", i, i)
	}
	s := writeSpec(t, "b.csv", b.String(), "  h: 0.5\n  k: 5\n  p: 2\n  private: [ill]\n")
	r := runNodes(t, s, policy.Default(), nodewatch.Watch{Kind: Kind{}})
	if r.Rec.Status == node.StatusDone || !strings.Contains(r.Rec.Error, "params.h") {
		t.Fatalf("job %s: %q, want a failure naming params.h", r.Rec.Status, r.Rec.Error)
	}
	r.ledger(t, "shop", map[string]int{job.PhaseSeedCommit: 1, job.PhaseSeedReveal: 1})
	r.noneHolds(t, append(tids(b.String()), "x-secret-x"))
}
