package pgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/internal/testkit/nodewatch"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
)

// Lying coordinators of a pgen job, played over real nodes: libp2p on
// loopback, Raft, the default policy with pgen allowed. hub, a member
// that holds no table, leads and coordinates, so that every party's
// output to it crosses the network and is in the party's ledger. pgen has
// no message from party to party (a party's messages are its commitment,
// its opening and its tree, each to the coordinator), so there is no
// hostile member whose message a party checks.

// hub is the coordinating member: no party of the job.
const hub = "hub"

// lyingParties hold the job's tables.
var lyingParties = []string{"east", "north", "west"}

// nodeTiming gives every send and step a minute (the tests wait on the
// job's end, never on a clock); RunWatched keeps hub in the lead through
// a loaded moment, so the refusals name the coordinator the test chose.
var nodeTiming = node.Timing{SendMS: 60000, StepMS: 60000}

// markedJob writes three parties' tables (two numeric attributes, a
// categorical one and a class), 40 rows each, every value recognisable
// (numbers with six decimals ending in 3, categories prefixed "catZ"),
// and returns the tables' directory, the spec and the values. No test of
// this file lets a tree be published, so every one is private.
func markedJob(t *testing.T) (string, []byte, []string) {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 8))
	spec := "kind: pgen\nparties:\n"
	schema := "schema:\n"
	var cells []string
	for _, p := range lyingParties {
		var b strings.Builder
		b.WriteString("x,y,s,c\n")
		for r := range 40 {
			x := fmt.Sprintf("%.5f3", 20+40*rng.Float64())
			y := fmt.Sprintf("%.5f3", 15+25*rng.Float64())
			s := fmt.Sprintf("catZ%s%d", p, rng.IntN(3))
			c := "lo"
			if rng.Float64() < 0.3+0.4*float64(r%2) {
				c = "hi"
			}
			fmt.Fprintf(&b, "%s,%s,%s,%s\n", x, y, s, c)
			cells = append(cells, x, y, s)
		}
		if err := os.WriteFile(filepath.Join(dir, p+".csv"), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		spec += fmt.Sprintf("  - {name: %s, tables: [{name: %s, path: %s.csv}]}\n", p, p, p)
		schema += fmt.Sprintf("  %s: {x: numeric, y: numeric, s: categorical, c: class}\n", p)
	}
	slices.Sort(cells)
	return dir, []byte(spec + schema + "params: {release_k: 5}\n"), slices.Compact(cells)
}

// nodeRun is one pgen job run on real nodes, watched.
type nodeRun struct{ *simtest.Watched }

// runOnNodes runs the marked job on hub and the parties under the default
// policy with pgen allowed, hub leading and coordinating as lead does;
// the cluster is closed when it returns, so that every capture, ledger
// and store is final.
func runOnNodes(t *testing.T, dir string, spec []byte, lead func(context.Context, job.Coordinator) (job.Result, error)) *nodeRun {
	t.Helper()
	pol := policy.Default()
	pol.Kinds["pgen"] = []string{policy.Any}
	r := simtest.RunWatched(t, append([]string{hub}, lyingParties...), hub, "pgen", nodewatch.Watch{Kind: Kind{}, Lead: lead}, spec,
		sim.ClusterOptions{TablesDir: dir, Timing: nodeTiming, Policy: pol})
	return &nodeRun{r}
}

// noCell checks that no value of the tables is in a failure text, a
// node's log, a party's output, a committed decision or a member's Raft
// store.
func (r *nodeRun) noCell(t *testing.T, cells []string) {
	t.Helper()
	r.Capture.Mu.Lock()
	defer r.Capture.Mu.Unlock()
	text := r.Rec.Error + "\n" + strings.Join(r.Capture.Failures, "\n")
	for _, p := range slices.Sorted(maps.Keys(r.Rec.Failures)) {
		text += "\n" + r.Rec.Failures[p]
	}
	if r.Capture.Logs.Len() == 0 || len(r.Capture.Failures) == 0 {
		t.Fatalf("captured %d log bytes, %d failures", r.Capture.Logs.Len(), len(r.Capture.Failures))
	}
	blobs := map[string][]byte{"a node's log": r.Capture.Logs.Bytes()}
	for i, o := range r.Capture.Outputs {
		blobs[fmt.Sprintf("output %d (%s/%d)", i, o.Phase, o.Round)] = o.Body
	}
	for i, d := range r.Capture.Decisions {
		blobs[fmt.Sprintf("decision %d", i)] = d
	}
	for _, name := range r.Cluster.Names {
		simtest.RaftFiles(t, r.Cluster, name, func(path string, b []byte) { blobs["Raft store "+path] = b })
	}
	for _, cell := range cells {
		if strings.Contains(text, cell) {
			t.Errorf("a failure text holds %s", cell)
		}
		for what, b := range blobs {
			if bytes.Contains(b, []byte(cell)) {
				t.Errorf("%s holds %s", what, cell)
			}
		}
	}
}

// publishNow asks for the trees without drawing the joint seed first: the
// pseudo-rows would then come from a seed the coordinator picks after it
// has seen the trees (it could grind it for the global tree it prefers).
func publishNow(ctx context.Context, c job.Coordinator) (job.Result, error) {
	call := job.Call[publishArgs]{Parties: c.Spec().PartyNames()}
	if _, err := publishRound.Run(ctx, c, call, func(o *job.Outcome[publishOutput]) (publishDecision, error) {
		return publishDecision{}, o.Err()
	}); err != nil {
		return nil, err
	}
	return nil, errors.New("test: the parties published before the joint seed was drawn")
}

// TestCoordinatorSkipsSeedNodes: a coordinator that asks for the trees
// before drawing the joint seed is refused by every party, naming the
// step, the coordinator and the log's missing draw; no party outputs a
// tree (its ledger holds its refusal alone); no value of the tables is in
// any failure, log, output, decision or Raft store.
func TestCoordinatorSkipsSeedNodes(t *testing.T) {
	t.Parallel()
	dir, spec, cells := markedJob(t)
	r := runOnNodes(t, dir, spec, publishNow)
	r.Refused(t, publishRound.Phase, 0, lyingParties, "party PARTY refuses step publish/0 of coordinator hub",
		"joint seed round 0: the log holds 0 seed-commit records of round 0")
	r.Undisclosed(t, publishRound.Phase, 0, lyingParties, hub, publishRound.Phase)
	r.noCell(t, cells)
}

// TestForgedCommitmentNodes: a coordinator that commits, in each party's
// name, a commitment that is not the party's is refused at the reveal by
// every party, naming the step, its commitment and the coordinator; no
// party opens its contribution or outputs a tree; no value of the tables
// is anywhere.
func TestForgedCommitmentNodes(t *testing.T) {
	t.Parallel()
	dir, spec, cells := markedJob(t)
	r := runOnNodes(t, dir, spec, nodewatch.ForgeSeedCommitments(jointSeed))
	r.Refused(t, job.PhaseSeedReveal, 0, lyingParties, "party PARTY refuses seed-reveal round 0", job.ErrSeedNotOwn.Error(), "coordinator hub")
	r.Undisclosed(t, job.PhaseSeedReveal, 0, lyingParties, hub, publishRound.Phase)
	r.noCell(t, cells)
}

// liarArgs are publish args the log does not determine: a release_k
// below the spec's, which would have a party publish paths of fewer rows.
type liarArgs struct {
	ReleaseK int `msgpack:"release_k"`
}

// lowerReleaseK draws the joint seed as it should, then asks for the
// trees with args that carry a release_k of its own.
func lowerReleaseK(ctx context.Context, c job.Coordinator) (job.Result, error) {
	if _, err := jointSeed(c.JobID(), c.Spec()).Draw(ctx, c, 0); err != nil {
		return nil, err
	}
	liar := job.Round[liarArgs, publishOutput, publishDecision]{Phase: publishRound.Phase}
	call := job.Call[liarArgs]{Parties: c.Spec().PartyNames(), Args: liarArgs{ReleaseK: 1}}
	if _, err := liar.Run(ctx, c, call, func(o *job.Outcome[publishOutput]) (publishDecision, error) {
		return publishDecision{}, o.Err()
	}); err != nil {
		return nil, err
	}
	return nil, errors.New("test: the parties published under the coordinator's args")
}

// TestCoordinatorArgsNodes: a coordinator whose publish step, after a
// fair draw, carries args (a release_k of its own; pgen's args are empty,
// a party takes everything from the spec) is refused by every party
// before it reads its table, naming the step, the coordinator and the
// field; no party outputs a tree; no value of the tables is anywhere.
func TestCoordinatorArgsNodes(t *testing.T) {
	t.Parallel()
	dir, spec, cells := markedJob(t)
	r := runOnNodes(t, dir, spec, lowerReleaseK)
	r.Refused(t, publishRound.Phase, 0, lyingParties, "publish round 0: args from coordinator hub", "release_k")
	r.Undisclosed(t, publishRound.Phase, 0, lyingParties, hub, publishRound.Phase)
	r.noCell(t, cells)
}
