package boost_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/internal/testkit/nodewatch"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// boost-predict's lying coordinators over real nodes: libp2p, Raft, the
// default policy. hub, a member holding no table, leads; alice, bob and
// carol first train a model on starCase's tables, marked (an honest boost
// job on the same nodes), then hub coordinates a boost-predict job naming
// it as the lie says. The parties' sessions are the honest ones.

// hub is the coordinating member: no party of the jobs.
const hub = "hub"

// lieTiming gives every send and step a minute (the tests wait on the
// job's end, never on a clock) and keeps hub in the lead through a loaded
// moment, so that the refusals name the coordinator the test chose.
var lieTiming = node.Timing{HeartbeatMS: 2000, ElectionMS: 2000, SendMS: 60000, StepMS: 60000}

// The rounds of boost-predict as its coordinator runs them, with their
// outputs and decisions mirrored (boost keeps them unexported).
type (
	lieLoad struct {
		Splits map[string]int `msgpack:"splits"`
	}
	lieOutput struct {
		Holder   bool   `msgpack:"holder"`
		Rows     uint64 `msgpack:"rows"`
		Positive uint64 `msgpack:"positive"`
	}
)

var (
	lieLoadRound    = job.Round[struct{}, lieLoad, lieLoad]{Phase: "load"}
	liePredictRound = job.Round[struct{}, lieOutput, lieOutput]{Phase: "predict"}
)

// holderReport is the honest coordinator's decision of a predict step:
// the class holder's counts.
func holderReport(o *job.Outcome[lieOutput]) (lieOutput, error) {
	if err := o.Err(); err != nil {
		return lieOutput{}, err
	}
	for _, r := range o.Results {
		if r.Holder {
			return r, nil
		}
	}
	return lieOutput{}, errors.New("no report from the class holder")
}

// predictTwice coordinates boost-predict honestly, then asks for the
// scores a second time (predict round 1): every party refuses it.
func predictTwice(ctx context.Context, c job.Coordinator) (job.Result, error) {
	res, err := boost.PredictKind{}.Coordinate(ctx, c)
	if err != nil {
		return nil, err
	}
	call := job.Call[struct{}]{Round: 1, Parties: c.Spec().PartyNames()}
	if _, err := liePredictRound.Run(ctx, c, call, holderReport); err != nil {
		return nil, err
	}
	return res, nil
}

// predictUnloaded asks for the scores before the load step has committed
// the parties' split counts (the class holder's check of its skeletons
// against them): every party refuses predict round 0.
func predictUnloaded(ctx context.Context, c job.Coordinator) (job.Result, error) {
	call := job.Call[struct{}]{Parties: c.Spec().PartyNames()}
	_, err := liePredictRound.Run(ctx, c, call, holderReport)
	return nil, err
}

// markStar is starCase's tables with every private value recognisable:
// join values get a "kZ" prefix, numbers a 0625 suffix (which keeps their
// order: the cells have two decimals), and each table a dangling row (its
// first, with join values no other table has: it joins no row). It
// returns them and the values that may not leave their party: every
// number and every join value that no other table holds (the PSI shares
// the others with the neighbour, and the combo summaries name them).
func markStar(t *testing.T, c *joinCase) (map[string]string, []string) {
	t.Helper()
	out := map[string]string{}
	var private []string
	owner := map[string]map[string]bool{} // join value: the tables holding it
	for name, text := range c.csv {
		recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		kinds := c.spec.Schema[name]
		recs = append(recs, slices.Clone(recs[1]))
		for i, rec := range recs[1:] {
			for j, v := range rec {
				switch kinds[recs[0][j]] {
				case "key":
					rec[j] = "kZ" + v
					if i == len(recs)-2 {
						rec[j] = "kZonly" + name + recs[0][j]
					}
					if owner[rec[j]] == nil {
						owner[rec[j]] = map[string]bool{}
					}
					owner[rec[j]][name] = true
				case "numeric":
					rec[j] = v + "0625"
					private = append(private, rec[j])
				}
			}
		}
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		if err := w.WriteAll(recs); err != nil {
			t.Fatal(err)
		}
		out[name] = b.String()
	}
	for v, tables := range owner {
		if len(tables) == 1 {
			private = append(private, v)
		}
	}
	return out, private
}

// lieRun is a boost-predict job run over real nodes after its model's
// training, watched.
type lieRun struct {
	*simtest.Watched
	model   string
	parties []string
	private []string // cells, kept thresholds and leaf weights, margins
}

// runPredictLie trains on the marked star over hub, alice, bob and carol
// (hub leading), then runs boost-predict on the same tables with lead as
// its coordinator, and returns once that job has ended.
func runPredictLie(t *testing.T, lead func(context.Context, job.Coordinator) (job.Result, error)) *lieRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := starCase(t, 1, 60)
	tables, private := markStar(t, c)
	dir := t.TempDir()
	for name, text := range tables {
		if err := os.WriteFile(filepath.Join(dir, name+".csv"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := &lieRun{Watched: &simtest.Watched{Capture: &nodewatch.Capture{}, Audit: filepath.Join(t.TempDir(), "audit")}, parties: c.spec.PartyNames(), private: private}
	train := r.Capture.Registry("boost", nodewatch.Watch{Kind: boost.Kind{}})
	predict := r.Capture.Registry("boost-predict", nodewatch.Watch{Kind: boost.PredictKind{}, Lead: lead})
	r.Cluster = simtest.StartCluster(t, ctx, append([]string{hub}, r.parties...), sim.ClusterOptions{
		KindsFor: func(name string) job.Registry {
			reg := train(name)
			maps.Copy(reg, predict(name))
			return reg
		},
		TablesDir: dir, AuditDir: r.Audit, Timing: lieTiming, Logger: r.Capture.Logger(),
		Policy: policy.Default(), Campaign: hub, Setup: simtest.ThresholdKeys(keyBits),
	})
	if err := r.Cluster.MakeLeader(ctx, hub); err != nil {
		t.Fatal(err)
	}
	spec := *c.spec
	spec.Dir, spec.Source = dir, "train.yaml"
	spec.Params = map[string]any{"trees": 2, "max_depth": 2, "bins": 8}
	var rec *node.JobRecord
	if r.model, rec = r.submit(ctx, t, &spec); rec.Status != node.StatusDone {
		t.Fatalf("training: %s %s %v", rec.Status, rec.Error, rec.Failures)
	}
	r.keptSecrets(t)
	ps := spec
	ps.Kind, ps.Source, ps.Params = "boost-predict", "predict.yaml", map[string]any{"model": r.model}
	r.ID, r.Rec = r.submit(ctx, t, &ps)
	r.keptMargins(t)
	return r
}

// submit submits spec at hub and waits for the job's end.
func (r *lieRun) submit(ctx context.Context, t *testing.T, spec *job.Spec) (string, *node.JobRecord) {
	t.Helper()
	raw, err := spec.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return simtest.SubmitWait(t, ctx, r.Cluster.Node(hub), raw)
}

// keptNode is a node of the class holder's kept skeletons.
type keptNode struct {
	Leaf  float64   `json:"leaf"`
	Left  *keptNode `json:"left,omitempty"`
	Right *keptNode `json:"right,omitempty"`
}

// keptSecrets adds to r.private every threshold the parties kept and
// every leaf weight of the class holder's trees, as a text would print
// them.
func (r *lieRun) keptSecrets(t *testing.T) {
	t.Helper()
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	var walk func(n *keptNode)
	walk = func(n *keptNode) {
		if n.Left == nil || n.Right == nil {
			r.private = append(r.private, f(n.Leaf))
			return
		}
		walk(n.Left)
		walk(n.Right)
	}
	before := len(r.private)
	defer func() {
		if len(r.private) == before {
			t.Fatal("the parties kept no threshold or weight: the checks check none")
		}
	}()
	for _, p := range r.parties {
		b, err := os.ReadFile(filepath.Join(r.Cluster.DataDir(p), boost.ModelSecret(r.model)))
		if err != nil {
			t.Fatal(err)
		}
		var k struct {
			Trees  []*keptNode `json:"trees"`
			Splits map[string][]struct {
				Threshold float64 `json:"threshold"`
			} `json:"splits"`
		}
		if err := json.Unmarshal(b, &k); err != nil {
			t.Fatal(err)
		}
		for _, ps := range k.Splits {
			for _, s := range ps {
				r.private = append(r.private, f(s.Threshold))
			}
		}
		for _, n := range k.Trees {
			walk(n)
		}
	}
}

// keptMargins adds to r.private the margins and probabilities the class
// holder kept, if a predict step ran.
func (r *lieRun) keptMargins(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.Cluster.DataDir("alice"), boost.PredictionsSecret(r.ID)))
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs[1:] {
		r.private = append(r.private, rec[2:]...)
	}
}

// refused checks that the job failed at step phase/round, refused by
// every party, each naming the step and hub in its failure, and that no
// party disclosed anything in it: no output, and its ledger holds its
// refusal to hub, control, alone.
func (r *lieRun) refused(t *testing.T, phase string, round int) {
	t.Helper()
	r.Refused(t, phase, round, r.parties, fmt.Sprintf("party PARTY refuses %s round %d: coordinator %s", phase, round, hub))
	r.Undisclosed(t, phase, round, r.parties, hub)
	t.Log(r.Rec.Error)
}

// texts are the job's failure texts: its error, each party's failure and
// every failure a party or the coordinator reported.
func (r *lieRun) texts() string {
	r.Capture.Mu.Lock()
	defer r.Capture.Mu.Unlock()
	texts := append([]string{r.Rec.Error}, r.Capture.Failures...)
	for _, p := range slices.Sorted(maps.Keys(r.Rec.Failures)) {
		texts = append(texts, r.Rec.Failures[p])
	}
	return strings.Join(texts, "\n")
}

// noneHolds checks that no failure text, captured message or log record
// of either job carries a private value: in a text or a message, as a
// whole number or word (kZa1 is private when only kZa10 is shared), and in
// a message also as a string of its own.
func (r *lieRun) noneHolds(t *testing.T) {
	t.Helper()
	text := []byte(r.texts())
	r.Capture.Mu.Lock()
	defer r.Capture.Mu.Unlock()
	if r.Capture.LogBytes == 0 || len(r.Capture.Sent) == 0 {
		t.Fatalf("%d log bytes and %d messages captured: the check checks nothing", r.Capture.LogBytes, len(r.Capture.Sent))
	}
	logs := r.Capture.Logs.Bytes()
	for _, v := range slices.Compact(slices.Sorted(slices.Values(r.private))) {
		if holds(text, v) {
			t.Errorf("a failure text carries %q", v)
		}
		if holds(logs, v) {
			t.Errorf("the nodes' log carries %q", v)
		}
		enc, err := wire.Marshal(&v) // v as a message's string
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range r.Capture.Sent {
			if holds(s.M.Body, v) || bytes.Contains(s.M.Body, enc) {
				t.Errorf("%s's %s to %s carries %q", s.From, s.M.Type, s.To, v)
			}
		}
	}
}

// holds reports whether b holds v as a whole number or word: not inside
// a longer one, as a log record's time (seconds 52.031254) would hold
// 2.03125.
func holds(b []byte, v string) bool {
	inWord := func(c byte) bool {
		return c == '.' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	for i := 0; ; {
		k := bytes.Index(b[i:], []byte(v))
		if k < 0 {
			return false
		}
		at, end := i+k, i+k+len(v)
		if (at == 0 || !inWord(b[at-1])) && (end == len(b) || !inWord(b[end])) {
			return true
		}
		i = at + 1
	}
}

// A coordinator that asks for the scores a second time is refused over
// real nodes by every party: predict round 1 sends nothing, and no cell,
// kept threshold, leaf weight or margin is in any text, message or log.
func TestLyingCoordinatorNodesPredictTwice(t *testing.T) {
	t.Parallel()
	r := runPredictLie(t, predictTwice)
	r.refused(t, "predict", 1)
	r.noneHolds(t)
}

// A coordinator that asks for the scores with no committed load step is
// refused over real nodes by every party, before any PSI message or
// combo summary leaves.
func TestLyingCoordinatorNodesPredictUnloaded(t *testing.T) {
	t.Parallel()
	r := runPredictLie(t, predictUnloaded)
	r.refused(t, "predict", 0)
	r.noneHolds(t)
}

// otherCounts commits the load step's split counts changed by edit (as
// another model's would be), then asks for the scores.
func otherCounts(edit func(map[string]int)) func(context.Context, job.Coordinator) (job.Result, error) {
	return func(ctx context.Context, c job.Coordinator) (job.Result, error) {
		call := job.Call[struct{}]{Parties: c.Spec().PartyNames()}
		if _, err := lieLoadRound.Run(ctx, c, call, func(o *job.Outcome[lieLoad]) (lieLoad, error) {
			if err := o.Err(); err != nil {
				return lieLoad{}, err
			}
			d := lieLoad{Splits: map[string]int{}}
			for _, r := range o.Results {
				maps.Copy(d.Splits, r.Splits)
			}
			edit(d.Splits)
			return d, nil
		}); err != nil {
			return nil, err
		}
		_, err := liePredictRound.Run(ctx, c, call, holderReport)
		return nil, err
	}
}

// A coordinator that commits other split counts than the parties kept
// (another model's: fewer, which the class holder's skeletons do not
// fit, or more) is refused over real nodes by every party that holds a
// table whose count it changed, naming predict round 0 and hub, before
// any PSI message leaves (predictSession.checkCounts). Before that check
// the job succeeded with more, the log keeping the false counts, and with
// fewer only the class holder failed, after the others began their PSI.
func TestLyingCoordinatorNodesPredictWithOtherCounts(t *testing.T) {
	t.Parallel()
	for name, edit := range map[string]func(map[string]int){
		"fewer": func(m map[string]int) {
			for k := range m {
				m[k] = 0
			}
		},
		"more": func(m map[string]int) {
			for k := range m {
				m[k] += 5
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := runPredictLie(t, otherCounts(edit))
			r.refused(t, "predict", 0)
			r.noneHolds(t)
		})
	}
}
