package sjc

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/nodewatch"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
)

// The lying coordinators of sjc-predict (evilPredict, in
// coordinator_internal_test.go) over real nodes: hub, a member holding no
// table, leads; the parties first train a model on the evil chain's marked
// tables (an honest sjc job, on the same nodes), then hub coordinates an
// sjc-predict job naming it as the lie says.

// runPredictNodes trains the marked chain on hub, p1, p2 and p3 (hub
// leading), then runs an sjc-predict job naming the model over the same
// tables, coordinated by lead. It returns the prediction run (the capture
// holds both jobs' messages and logs), the chain's parties and the strings
// no failure, message or log may carry: markedChain's and every threshold
// the parties kept.
func runPredictNodes(t *testing.T, lead func(context.Context, job.Coordinator) (job.Result, error)) (*nodesRun, []string, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	spec, private := markedChain(t, nil)
	r := &nodesRun{&simtest.Watched{Capture: &nodewatch.Capture{}, Audit: filepath.Join(t.TempDir(), "audit")}}
	train := r.Capture.Registry("sjc", nodewatch.Watch{Kind: Kind{}})
	predict := r.Capture.Registry("sjc-predict", nodewatch.Watch{Kind: PredictKind{}, Lead: lead})
	cl := simtest.StartCluster(t, ctx, append([]string{hub}, spec.PartyNames()...), sim.ClusterOptions{
		KindsFor: func(name string) job.Registry {
			reg := train(name)
			maps.Copy(reg, predict(name))
			return reg
		},
		TablesDir: spec.Dir, AuditDir: r.Audit, Timing: nodesTiming, Logger: r.Capture.Logger(),
		Policy: policy.Default(), Campaign: hub,
	})
	if err := cl.MakeLeader(ctx, hub); err != nil {
		t.Fatal(err)
	}
	n := cl.Node(hub)
	model, rec := submitWait(ctx, t, n, spec)
	if rec.Status != node.StatusDone {
		t.Fatalf("training: %s %s %v", rec.Status, rec.Error, rec.Failures)
	}
	thresholds := 0
	for _, p := range spec.PartyNames() {
		kept := keptThresholds(t, filepath.Join(cl.DataDir(p), ModelSecret(model)))
		private, thresholds = append(private, kept...), thresholds+len(kept)
	}
	if thresholds == 0 {
		t.Fatal("the model kept no numeric threshold: the checks check none")
	}
	ps := *spec
	ps.Kind, ps.Params = "sjc-predict", map[string]any{"model": model}
	r.ID, r.Rec = submitWait(ctx, t, n, &ps)
	return r, spec.PartyNames(), private
}

// submitWait submits spec at n and waits for the job's end.
func submitWait(ctx context.Context, t *testing.T, n *node.Node, spec *job.Spec) (string, *node.JobRecord) {
	t.Helper()
	raw, err := spec.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return simtest.SubmitWait(t, ctx, n, raw)
}

// keptThresholds are the numeric thresholds of the model part kept at
// path, as a log or text would print them.
func keptThresholds(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var mp ModelPart
	if err := json.Unmarshal(b, &mp); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range mp.Splits {
		if m.Cat == "" {
			out = append(out, strconv.FormatFloat(m.Num, 'g', -1, 64))
		}
	}
	return out
}

// runEvilPredictNodes runs k's lie over real nodes and checks that every
// party refused classify round, naming the step and hub; that no party
// output or disclosed anything in it; and that no private value is in any
// failure text, message or log record.
func runEvilPredictNodes(t *testing.T, k evilPredict, round int) {
	t.Helper()
	r, parties, private := runPredictNodes(t, k.Coordinate)
	r.Refused(t, classifyRound.Phase, round, parties, fmt.Sprintf("party PARTY refuses %s round %d: coordinator %s", classifyRound.Phase, round, hub))
	r.Undisclosed(t, classifyRound.Phase, round, parties, hub)
	r.noneHolds(t, slices.Compact(slices.Sorted(slices.Values(private))))
}

// A coordinator that commits another skeleton than the parties' model (a
// leaf relabelled) is refused over real nodes by every party at classify,
// before any PSI message, summary or count leaves.
func TestLyingCoordinatorNodesPredictWithAnotherModel(t *testing.T) {
	t.Parallel()
	runEvilPredictNodes(t, anotherModel(), 0)
}

// A coordinator that asks for the classification a second time (to learn
// the new tables' counts again, or after a change) is refused over real
// nodes by every party: classify round 1 sends nothing.
func TestLyingCoordinatorNodesClassifyTwice(t *testing.T) {
	t.Parallel()
	runEvilPredictNodes(t, classifyTwice(), 1)
}
