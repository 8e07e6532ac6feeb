package integrate

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/internal/testkit/nodewatch"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/psi"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// The lying coordinator of TestCoordinatorCannotExtract and a hostile
// member of the alignment, played over real nodes: libp2p on loopback,
// Raft, the default node policy, south leading.

// nodeTiming bounds a step at a minute (the tests wait on the job's end);
// RunWatched keeps the leader through a loaded moment, so the refusals
// name the coordinator the test made leader.
var nodeTiming = node.Timing{SendMS: 3000, StepMS: 60000}

// nodeRun is one job run on real nodes, watched (simtest.RunWatched).
type nodeRun struct{ *simtest.Watched }

// runOnNodes runs j on north, south and west under the default policy,
// south leading, with the kind watched as w says; the cluster is closed
// when it returns, so that every capture and store is final.
func runOnNodes(t *testing.T, j *testJob, w nodewatch.Watch) *nodeRun {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(j.dir, "spec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r := simtest.RunWatched(t, []string{"north", "south", "west"}, "south", "integrate", w, raw,
		sim.ClusterOptions{TablesDir: j.dir, Timing: nodeTiming, Policy: policy.Default()})
	return &nodeRun{r}
}

// lastStep is the step the job ended at, the one a test's lie was
// refused in.
func (r *nodeRun) lastStep(t *testing.T) *runner.StepRecord {
	t.Helper()
	if r.Rec.Status == node.StatusDone || len(r.Rec.Steps) == 0 {
		t.Fatalf("the job is %s after %d steps", r.Rec.Status, len(r.Rec.Steps))
	}
	last := r.Rec.Steps[len(r.Rec.Steps)-1]
	t.Logf("%s/%d failed: %s", last.Phase, last.Round, r.Rec.Error)
	return last
}

// noCell checks that no id and no raw value of j (nothing is published,
// so every one is private) is in the job's failure texts, in any message a
// party sent, in any node's log or in any member's Raft store.
func (r *nodeRun) noCell(t *testing.T, j *testJob) {
	t.Helper()
	var needles []string
	for _, p := range j.parties {
		for _, row := range p.rows {
			needles = append(needles, row[0])
			needles = append(needles, row[2:]...)
		}
	}
	r.Capture.Mu.Lock()
	defer r.Capture.Mu.Unlock()
	text := r.Rec.Error + "\n" + strings.Join(r.Capture.Failures, "\n")
	for _, f := range r.Rec.Failures {
		text += "\n" + f
	}
	if len(r.Capture.Sent) == 0 || r.Capture.Logs.Len() == 0 || len(r.Capture.Failures) == 0 {
		t.Fatalf("captured %d messages, %d log bytes, %d failures", len(r.Capture.Sent), r.Capture.Logs.Len(), len(r.Capture.Failures))
	}
	stores := map[string][]byte{}
	for _, name := range r.Cluster.Names {
		simtest.RaftFiles(t, r.Cluster, name, func(path string, b []byte) { stores[path] = b })
	}
	for _, nd := range needles {
		b := []byte(nd)
		if strings.Contains(text, nd) {
			t.Errorf("a failure text holds %q", nd)
		}
		for _, s := range r.Capture.Sent {
			if bytes.Contains(s.M.Body, b) {
				t.Errorf("%s's %s to %s holds %q", s.From, s.M.Type, s.To, nd)
			}
		}
		if bytes.Contains(r.Capture.Logs.Bytes(), b) {
			t.Errorf("a node's log holds %q", nd)
		}
		for path, st := range stores {
			if bytes.Contains(st, b) {
				t.Errorf("Raft store %s holds %q", path, nd)
			}
		}
	}
}

// nodeJob is TestCoordinatorCannotExtract's job with every k at the
// default policy's floor, params.algorithm as given, and extra params.
func nodeJob(t *testing.T, algorithm, extra string) *testJob {
	reqs := []anonymize.Requirement{{QID: []string{"noa", "soa", "wea"}, K: 5}, {QID: []string{"nob", "sob", "web"}, K: 5}}
	return randomJob(t, 5, 200, reqs, "  algorithm: "+algorithm+"\n"+extra)
}

// TestCoordinatorCannotExtract's cases over real nodes, one of each kind
// of defence: a step the log does not determine (a split asked of a
// loser), a forged committed split every party counts k on, and a Mondrian
// cut of a group the log does not hold. Each victim refuses naming the
// step and coordinator south, reports no output of the refused step (its
// ledger holds its refusal, control, alone), and no id or raw value is in
// any failure, message, log or Raft store.
func TestCoordinatorCannotExtractNodes(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"split-although-another-won", "commit-a-split-that-singles-out-a-record", "cut-a-group-the-log-does-not-hold"} {
		i := slices.IndexFunc(extractionCases, func(c extractionCase) bool { return c.name == name })
		if i < 0 {
			t.Fatalf("no extraction case %s", name)
		}
		c := extractionCases[i]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			j := nodeJob(t, c.algorithm, "")
			var victims []string
			lead := evilCoordinator{owner: c.owner, rounds: c.rounds(t, &victims)}
			r := runOnNodes(t, j, nodewatch.Watch{Kind: Kind{}, Lead: lead.Coordinate})
			if len(victims) == 0 {
				t.Fatalf("the lying step was never asked: %s", r.Rec.Error)
			}
			last := r.lastStep(t)
			r.Refused(t, last.Phase, last.Round, victims, "party PARTY refuses", "coordinator south", c.why)
			r.Undisclosed(t, last.Phase, last.Round, victims, "south")
			r.noCell(t, j)
		})
	}
}

// psiChunk mirrors package psi's chunk body (blinded and double-blinded
// sets), so that a hostile member can rewrite the points it sends.
type psiChunk struct {
	Total int    `msgpack:"n"`
	Index int    `msgpack:"i"`
	Elems []byte `msgpack:"e"`
	Run   []byte `msgpack:"r"`
	Echo  []byte `msgpack:"a,omitempty"`
}

// plantIdentity is a spoke that puts the identity (all-zero encoding in
// ristretto255) first in its blinded set and answers the hub's first
// element with it too: were the hub to raise it to its secret, it would
// match its own first element (the identity is its own power), count it
// as one the spoke holds, and its filter would tell the spoke whether that
// id, which the spoke need not hold, is in every other party's set.
func plantIdentity(m *wire.Message) *wire.Message {
	if m.Type != psi.TypeBlinded && m.Type != psi.TypeDouble {
		return m
	}
	var ch psiChunk
	if err := wire.Unmarshal(m.Body, &ch); err != nil || ch.Index != 0 || len(ch.Elems) < psi.PointLen {
		panic("test: not a first chunk of points")
	}
	clear(ch.Elems[:psi.PointLen])
	cp := *m
	var err error
	if cp.Body, err = wire.Marshal(&ch); err != nil {
		panic(err)
	}
	return &cp
}

// A spoke (west) that plants the identity in its PSI messages is refused
// by the hub (north), which names it and the field: the alignment fails,
// the hub sends west no filter (nothing of the pairwise intersection),
// no party reports an alignment to the coordinator, and no id or raw
// value is anywhere.
func TestHostileSpokeNodes(t *testing.T) {
	t.Parallel()
	j := nodeJob(t, algTDS, "  psi: ecdh\n")
	r := runOnNodes(t, j, nodewatch.Watch{Kind: Kind{}, Corrupter: "west", Corrupt: plantIdentity})
	last := r.lastStep(t)
	if last.Phase != phaseAlign {
		t.Fatalf("the job failed at %s/%d, not the alignment", last.Phase, last.Round)
	}
	r.Refused(t, last.Phase, last.Round, []string{"north"}, "party north: align record ids", psi.TypeBlinded+" from west", "element 0 is the identity")
	for _, p := range r.Cluster.Names {
		entries, err := audit.ReadFile(filepath.Join(r.Audit, p+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Job == r.ID && (e.Type == psi.TypeFilter || e.Type == runner.OutputType && e.Phase == phaseAlign && e.Disclosure != string(wire.DiscloseControl)) {
				t.Errorf("%s's ledger: %s to %s in %s disclosing %q", p, e.Type, e.Peer, e.Phase, e.Disclosure)
			}
		}
	}
	r.noCell(t, j)
}
