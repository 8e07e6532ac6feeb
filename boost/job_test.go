package boost_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/wire"
)

func init() { testkit.SmallKeys() }

// TestMain runs four parallel tests at once: most of the package's time is jobs
// waiting out a step's timeout after a party refuses or restarts (15 s each;
// 13 s of CPU in 50 s, 28 Nov 2026).
func TestMain(m *testing.M) {
	testkit.WaitingParallel(4)
	os.Exit(m.Run())
}

// keyBits keeps the runs over real nodes fast (paillier.MinTestBits).
const keyBits = 512

// simTiming leaves a loaded machine room: parties are never dropped for
// being slow.
var simTiming = node.Timing{SendMS: 10000, StepMS: 120000}

// sent is one message a party's session sent, as it left.
type sent struct {
	From, To   string
	Message    wire.Message
	Disclosure wire.Disclosure
}

// capture records every message the parties' sessions send and every
// committed record their sessions read from the log, over real nodes.
type capture struct {
	mu      sync.Mutex
	sent    []sent
	records map[string]*job.Record // by phase/round
	log     *slog.Logger           // when set, every session's own log
}

// recorded is boost.Kind with each session's Participant wrapped by the
// capture.
type recorded struct {
	boost.Kind
	c *capture
}

func (r recorded) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	return r.Kind.Open(ctx, &hooked{Participant: p, c: r.c})
}

type hooked struct {
	job.Participant
	c *capture
}

func (h *hooked) Log() *slog.Logger {
	if h.c.log != nil {
		return h.c.log.With("party", h.Self())
	}
	return h.Participant.Log()
}

func (h *hooked) Send(ctx context.Context, to string, m *wire.Message, d wire.Disclosure) error {
	h.c.mu.Lock()
	cp := *m
	cp.Body = append([]byte(nil), m.Body...)
	h.c.sent = append(h.c.sent, sent{From: h.Self(), To: to, Message: cp, Disclosure: d})
	h.c.mu.Unlock()
	return h.Participant.Send(ctx, to, m, d)
}

func (h *hooked) History() []*job.Record {
	recs := h.Participant.History()
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	for _, r := range recs {
		b, _ := json.Marshal(r.Step)
		h.c.records[string(b)] = r
	}
	return recs
}

// simRun writes a case's tables and spec to a directory, runs the job on
// real nodes (libp2p, Raft, the default node policy, a dealt threshold
// key) through sim.Run, and returns result.json, its output directory and
// what was captured.
func simRun(t *testing.T, c *joinCase, p boost.Params) (map[string]any, string, *capture) {
	t.Helper()
	capt := &capture{records: map[string]*job.Record{}}
	out := filepath.Join(t.TempDir(), "out")
	if err := simRunTo(t, c, p, capt, out); err != nil {
		t.Fatal(err)
	}
	return readResult(t, out), out, capt
}

// readResult is the result.json a run wrote to out.
func readResult(t *testing.T, out string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// simRunErr is simRun's error, for a job that fails.
func simRunErr(t *testing.T, c *joinCase, p boost.Params) error {
	t.Helper()
	return simRunTo(t, c, p, &capture{records: map[string]*job.Record{}}, filepath.Join(t.TempDir(), "out"))
}

func simRunTo(t *testing.T, c *joinCase, p boost.Params, capt *capture, out string) error {
	t.Helper()
	return simRunKind(t, c, p, boost.Kind{}, capt, out)
}

// simRunKind is simRunTo with the parties' Kind (its node settings) given.
func simRunKind(t *testing.T, c *joinCase, p boost.Params, kind boost.Kind, capt *capture, out string) error {
	t.Helper()
	_, err := simRunBits(t, c, p, kind, capt, out, keyBits, nil)
	return err
}

// simRunBits is simRunKind under a threshold key of bits bits and node
// policy pol (the default when nil), with the run's result.
func simRunBits(t *testing.T, c *joinCase, p boost.Params, kind boost.Kind, capt *capture, out string, bits int, pol *policy.Policy) (map[string]any, error) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range c.csv {
		if err := os.WriteFile(filepath.Join(dir, name+".csv"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec := *c.spec
	spec.Params = map[string]any{"trees": p.Trees, "max_depth": p.MaxDepth, "bins": p.Bins, "learning_rate": p.LearningRate,
		"lambda": p.Lambda, "min_child_weight": p.MinChildWeight, "loss": p.Loss, "release": p.Release, "reuse": p.Reuse}
	if c.test != nil {
		spec.Test = map[string]string{}
		for name, text := range c.test.csv {
			if err := os.WriteFile(filepath.Join(dir, name+"_test.csv"), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			spec.Test[name] = name + "_test.csv"
		}
	}
	if p.PSI != "" {
		spec.Params["psi"] = p.PSI
	}
	if p.Backend != "" && p.Backend != boost.BackendPaillier {
		spec.Params["backend"] = p.Backend
	}
	raw, err := spec.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return sim.Run(ctx, path, sim.RunOptions{Kinds: job.Registry{"boost": recorded{Kind: kind, c: capt}}, Out: out,
		Setup: simtest.ThresholdKeys(bits), Timing: simTiming, Policy: pol})
}

// modelOf is result.json's model in Model.JSON's form.
func modelOf(t *testing.T, res map[string]any) string {
	t.Helper()
	raw, err := json.Marshal(res["model"])
	if err != nil {
		t.Fatal(err)
	}
	var m boost.Model
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("result.json model: %v\n%s", err, raw)
	}
	return modelJSON(t, m)
}

// TestJobStar: a star of three parties, both edges many-to-many, over
// real nodes: the model each party kept, put together (Kind.Assemble),
// equals the library's (and so the reference booster's, TestStarReference),
// and every message and log record keeps to the leakage profile.
func TestJobStar(t *testing.T) {
	t.Parallel()
	c := starCase(t, 1, 60)
	p := testParams()
	p.Trees = 2
	res, out, capt := simRun(t, c, p)
	want, err := boost.Train(c.g, c.data, p)
	if err != nil {
		t.Fatal(err)
	}
	if got, w := modelOf(t, res), modelJSON(t, *want); got != w {
		t.Fatalf("the job's model differs from the library's\n got: %s\nwant: %s", got, w)
	}
	checkLeakage(t, c, want, res, out, capt, false)
}

// TestJobChain: a chain whose first edge is many-to-many, with the model
// released (params.release) and the OT-extension PSI forced (the small
// sets would make auto pick ECDH, which TestJobStar runs):
// result.json's model equals the library's.
func TestJobChain(t *testing.T) {
	t.Parallel()
	c := chainCase(t, 1, 60)
	p := testParams()
	p.Trees, p.Release, p.PSI = 2, true, "ot"
	res, out, capt := simRun(t, c, p)
	want, err := boost.Train(c.g, c.data, p)
	if err != nil {
		t.Fatal(err)
	}
	if got, w := modelOf(t, res), modelJSON(t, *want); got != w {
		t.Fatalf("the job's model differs from the library's\n got: %s\nwant: %s", got, w)
	}
	if !strings.Contains(modelOf(t, res), `"table":"V"`) {
		t.Errorf("no split on the far table V: the chain's down pass through U is untested")
	}
	checkLeakage(t, c, want, res, out, capt, true)
}

// TestExample runs examples/boost/spec.yaml as `cohort sim` does, on real nodes
// under the default node policy: the model put together from the parties'
// kept parts is the library's on the example's tables.
func TestExample(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := filepath.Join(t.TempDir(), "out")
	res, err := sim.Run(ctx, filepath.Join("..", "examples", "boost", "spec.yaml"), sim.RunOptions{Kinds: job.Registry{"boost": boost.Kind{}},
		Out: out, Setup: simtest.ThresholdKeys(keyBits), Timing: simTiming})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var written map[string]any
	if err := json.Unmarshal(b, &written); err != nil {
		t.Fatal(err)
	}
	m := modelOf(t, written)
	if res["splits"].(float64) < 1 || written["positive_class"] != "yes" {
		t.Fatalf("result %v, model %s", res, m)
	}
	if w := specModel(t, filepath.Join("..", "examples", "boost", "spec.yaml")); m != w {
		t.Fatalf("the example's model differs from the library's\n got: %s\nwant: %s", m, w)
	}
}

// specModel is the model boost.Train grows, in the clear, on a spec's
// tables with its params (the tables read beside the spec).
func specModel(t *testing.T, path string) string {
	t.Helper()
	spec, err := job.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := joinprop.NewGraph(spec)
	if err != nil {
		t.Fatal(err)
	}
	data := map[string]*table.Table{}
	for _, ps := range spec.Parties {
		for _, ts := range ps.Tables {
			schema, _ := spec.TableSchema(ts.Name)
			f, err := os.Open(filepath.Join(filepath.Dir(path), ts.Path))
			if err != nil {
				t.Fatal(err)
			}
			data[ts.Name], err = table.Read(f, ts.Path, ts.Name, schema)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	p, err := boost.ParseParams(spec)
	if err != nil {
		t.Fatal(err)
	}
	want, err := boost.Train(g, data, p)
	if err != nil {
		t.Fatal(err)
	}
	return modelJSON(t, *want)
}

// TestSpecResult checks a `cohort sim` run's model against the library's
// in the clear on the same spec and tables (BOOST_SPEC=spec.yaml
// BOOST_RESULT=DIR/result.json; docs/boost.md's runs over real nodes).
func TestSpecResult(t *testing.T) {
	path, out := os.Getenv("BOOST_SPEC"), os.Getenv("BOOST_RESULT")
	if path == "" || out == "" {
		t.Skip("BOOST_SPEC and BOOST_RESULT to check a run")
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if got, w := modelOf(t, res), specModel(t, path); got != w {
		t.Fatalf("the run's model differs from the library's\n got: %s\nwant: %s", got, w)
	}
}
