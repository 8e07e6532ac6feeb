package kde

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/internal/testkit/nodewatch"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
)

// Lying coordinators of a kde job, played over real nodes: libp2p on
// loopback, Raft, the default policy. hub, a member that holds no table,
// leads and coordinates, so that every party's output to it crosses the
// network and is in the party's ledger. kde has no message from party to
// party (a party's one message is its sample, to the coordinator), so
// there is no hostile member whose message a party checks.

// hub is the coordinating member: no party of the job.
const hub = "hub"

// lyingParties hold the job's tables.
var lyingParties = []string{"east", "north", "west"}

// nodeTiming gives every send and step a minute (the tests wait on the
// job's end, never on a clock); RunWatched keeps hub in the lead through
// a loaded moment, so the refusals name the coordinator the test chose.
var nodeTiming = node.Timing{SendMS: 60000, StepMS: 60000}

// markedJob writes three parties' tables of two numeric attributes and a
// class, 30 rows each, every value recognisable (six decimals ending in
// 3, which no count, time or id has), and returns the tables' directory,
// the spec and the values: all private (a sample holds draws around them,
// never one of them).
func markedJob(t *testing.T) (string, []byte, []string) {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	spec := "kind: kde\nparties:\n"
	schema := "schema:\n"
	var cells []string
	for _, p := range lyingParties {
		var b strings.Builder
		b.WriteString("x,y,c\n")
		for r := range 30 {
			x := fmt.Sprintf("%.5f3", 20+40*rng.Float64())
			y := fmt.Sprintf("%.5f3", 15+25*rng.Float64())
			fmt.Fprintf(&b, "%s,%s,%s\n", x, y, []string{"lo", "hi"}[r%2])
			cells = append(cells, x, y)
		}
		if err := os.WriteFile(filepath.Join(dir, p+".csv"), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		spec += fmt.Sprintf("  - {name: %s, tables: [{name: %s, path: %s.csv}]}\n", p, p, p)
		schema += fmt.Sprintf("  %s: {x: numeric, y: numeric, c: class}\n", p)
	}
	return dir, []byte(spec + schema + "params: {min_rows: 10}\n"), cells
}

// nodeRun is one kde job run on real nodes, watched.
type nodeRun struct{ *simtest.Watched }

// runOnNodes runs the marked job on hub and the parties under the default
// policy, hub leading and coordinating as lead does; the cluster is closed
// when it returns, so that every capture, ledger and store is final.
func runOnNodes(t *testing.T, dir string, spec []byte, lead func(context.Context, job.Coordinator) (job.Result, error)) *nodeRun {
	t.Helper()
	r := simtest.RunWatched(t, append([]string{hub}, lyingParties...), hub, "kde", nodewatch.Watch{Kind: Kind{}, Lead: lead}, spec,
		sim.ClusterOptions{TablesDir: dir, Timing: nodeTiming, Policy: policy.Default()})
	return &nodeRun{r}
}

// noCell checks that no value of the tables is in a failure text, a
// node's log, a party's output, a committed decision or a member's Raft
// store: as text, nor (outputs and decisions, which hold samples as
// little-endian float64) as its bits.
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
	binaries := [][]byte{}
	for _, o := range r.Capture.Outputs {
		binaries = append(binaries, o.Body)
	}
	binaries = append(binaries, r.Capture.Decisions...)
	stores := map[string][]byte{}
	for _, name := range r.Cluster.Names {
		simtest.RaftFiles(t, r.Cluster, name, func(path string, b []byte) { stores[path] = b })
	}
	for _, cell := range cells {
		x, err := strconv.ParseFloat(cell, 64)
		if err != nil {
			t.Fatal(err)
		}
		bits := binary.LittleEndian.AppendUint64(nil, math.Float64bits(x))
		if strings.Contains(text, cell) {
			t.Errorf("a failure text holds %s", cell)
		}
		if bytes.Contains(r.Capture.Logs.Bytes(), []byte(cell)) {
			t.Errorf("a node's log holds %s", cell)
		}
		for _, b := range binaries {
			if bytes.Contains(b, []byte(cell)) || bytes.Contains(b, bits) {
				t.Errorf("an output or a decision holds %s", cell)
			}
		}
		for path, st := range stores {
			if bytes.Contains(st, []byte(cell)) || bytes.Contains(st, bits) {
				t.Errorf("Raft store %s holds %s", path, cell)
			}
		}
	}
}

// secondSample coordinates the job as it should, then asks every party
// for publish round 1: a second sample of the same rows, which the log
// does not determine (kde has one step).
func secondSample(ctx context.Context, c job.Coordinator) (job.Result, error) {
	if _, err := (Kind{}).Coordinate(ctx, c); err != nil {
		return nil, err
	}
	call := job.Call[publishArgs]{Round: 1, Parties: c.Spec().PartyNames()}
	if _, err := publishRound.Run(ctx, c, call, func(o *job.Outcome[publishOutput]) (publishDecision, error) {
		return publishDecision{}, o.Err()
	}); err != nil {
		return nil, err
	}
	return nil, errors.New("test: the parties published a second sample")
}

// TestCoordinatorSecondSampleNodes: a coordinator that, once every sample
// is committed, asks for another (publish round 1) is refused by every
// party, naming the step and coordinator hub; no party outputs anything
// in that step, its ledger holding its refusal alone; and no value of the
// tables is in any failure, log, output, decision or Raft store.
func TestCoordinatorSecondSampleNodes(t *testing.T) {
	t.Parallel()
	dir, spec, cells := markedJob(t)
	r := runOnNodes(t, dir, spec, secondSample)
	r.Refused(t, publishRound.Phase, 1, lyingParties, "refuses step publish/1 of coordinator hub")
	r.Undisclosed(t, publishRound.Phase, 1, lyingParties, hub)
	r.noCell(t, cells)
}

// liarArgs are publish args the log does not determine: a min_rows below
// the spec's, which would let a party resample a class of fewer rows and
// publish draws closer to them.
type liarArgs struct {
	MinRows int `msgpack:"min_rows"`
}

// lowerMinRows asks for the publish step with args that carry a min_rows
// of its own.
func lowerMinRows(ctx context.Context, c job.Coordinator) (job.Result, error) {
	liar := job.Round[liarArgs, publishOutput, publishDecision]{Phase: publishRound.Phase}
	call := job.Call[liarArgs]{Parties: c.Spec().PartyNames(), Args: liarArgs{MinRows: 2}}
	if _, err := liar.Run(ctx, c, call, func(o *job.Outcome[publishOutput]) (publishDecision, error) {
		return publishDecision{}, o.Err()
	}); err != nil {
		return nil, err
	}
	return nil, errors.New("test: the parties published under the coordinator's args")
}

// TestCoordinatorArgsNodes: a coordinator whose publish step carries args
// (a min_rows of its own; kde's args are empty, a party takes everything
// from the spec) is refused by every party before it reads its table,
// naming the step, the coordinator and the field; no party outputs
// anything in that step; no value of the tables is anywhere.
func TestCoordinatorArgsNodes(t *testing.T) {
	t.Parallel()
	dir, spec, cells := markedJob(t)
	r := runOnNodes(t, dir, spec, lowerMinRows)
	r.Refused(t, publishRound.Phase, 0, lyingParties, "publish round 0: args from coordinator hub", "min_rows")
	r.Undisclosed(t, publishRound.Phase, 0, lyingParties, hub)
	r.noCell(t, cells)
}
