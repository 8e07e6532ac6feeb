package modelselect

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/hamdist"
	"github.com/cohortdm/cohort/internal/testkit/nodewatch"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

var (
	exampleDir  = filepath.Join("..", "examples", "model-select")
	exampleSpec = filepath.Join(exampleDir, "spec.yaml")
	timing      = node.Timing{SendMS: 3000, StepMS: 60000}
	candidates  = []string{"centroid", "majority", "stump"}
)

func readCSV(t testing.TB, name string) (header []string, rows [][]string) {
	t.Helper()
	f, err := os.Open(filepath.Join(exampleDir, "data", name+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs[0], recs[1:]
}

// plain scores the candidates in the clear: each one's errors over the
// patients both hold.
func plain(t testing.TB) (compared int, errs map[string]int) {
	t.Helper()
	_, lab := readCSV(t, "labels")
	label := map[string]string{}
	for _, r := range lab {
		label[r[0]] = r[1]
	}
	header, preds := readCSV(t, "predictions")
	errs = map[string]int{}
	for _, r := range preds {
		y, ok := label[r[0]]
		if !ok {
			continue
		}
		compared++
		for i, c := range header[1:] {
			if r[i+1] != y {
				errs[c]++
			}
		}
	}
	return compared, errs
}

type result struct {
	Compared int            `json:"compared"`
	Errors   map[string]int `json:"errors"`
	Winner   string         `json:"winner"`
}

// The bundled example runs under the default node policy; each
// candidate's error count is its count in the clear, and the winner has
// the fewest.
func TestExampleUnderDefaultPolicy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := t.TempDir()
	if _, err := sim.Run(ctx, exampleSpec, sim.RunOptions{Kinds: job.Registry{"model-select": Kind{}}, Out: out, Timing: timing, Policy: policy.Default()}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got result
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	compared, errs := plain(t)
	if got.Compared != compared || len(got.Errors) != len(candidates) {
		t.Fatalf("result %s; in the clear %d ids, %v", raw, compared, errs)
	}
	best := ""
	for _, c := range candidates {
		if got.Errors[c] != errs[c] {
			t.Errorf("%s: %d errors, %d in the clear", c, got.Errors[c], errs[c])
		}
		if best == "" || errs[c] < errs[best] {
			best = c
		}
	}
	if got.Winner != best {
		t.Errorf("winner %s, want %s", got.Winner, best)
	}
	t.Logf("%s", raw)
}

// The leakage profile over real nodes, the member east coordinating:
// north (predictions) and south (labels) send each other only
// psi-blinded ids, distance ciphertexts and control; north one key and
// one ciphertext vector per candidate, south one blinded vector per
// candidate; the outputs are the counts (south's: how many ids only), the
// decision exactly {compared, errors}; no patient id, label or prediction
// text appears in any message, output, record, error or log line.
func TestLeakage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var c nodewatch.Capture
	cl := simtest.StartCluster(t, ctx, []string{"east", "north", "south"}, sim.ClusterOptions{
		KindsFor: c.Registry("model-select", nodewatch.Watch{Kind: Kind{}}), TablesDir: exampleDir, Timing: timing, Logger: c.Logger(), Policy: policy.Default(),
	})
	if err := cl.MakeLeader(ctx, "east"); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	n := cl.Node("east")
	id, err := n.Submit(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := n.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != node.StatusDone {
		t.Fatalf("job %s: %s", rec.Status, rec.Error)
	}
	compared, errs := plain(t)
	c.Mu.Lock()
	defer c.Mu.Unlock()
	if len(c.Decisions) != 1 {
		t.Fatalf("%d decisions", len(c.Decisions))
	}
	attempt := c.Committed[0]
	counts := map[string]int{}
	for _, s := range c.Sent {
		peer := map[string]string{"north": "south", "south": "north"}[s.From]
		switch s.D {
		case wire.DisclosePSIBlinded, wire.DiscloseDistance:
			if s.To != peer {
				t.Errorf("%s sent %s (%s) to %s", s.From, s.M.Type, s.D, s.To)
			}
		case wire.DiscloseControl:
		default:
			t.Errorf("%s sent %s to %s disclosing %q", s.From, s.M.Type, s.To, s.D)
		}
		if s.M.Attempt == attempt {
			counts[s.From+" "+s.M.Type]++
		}
	}
	k := len(candidates)
	for key, want := range map[string]int{"north " + hamdist.TypeKey: k, "north " + hamdist.TypeCts: k, "south " + hamdist.TypeBlinded: k,
		"south " + hamdist.TypeKey: 0, "south " + hamdist.TypeCts: 0, "north " + hamdist.TypeBlinded: 0} {
		if counts[key] != want {
			t.Errorf("%s: %d messages, want %d", key, counts[key], want)
		}
	}
	want := scoreDecision{Compared: compared}
	for _, cand := range candidates {
		want.Errors = append(want.Errors, errs[cand])
	}
	for _, out := range c.Outputs {
		if out.Attempt != attempt {
			continue
		}
		var o scoreOutput
		if err := wire.Unmarshal(out.Body, &o); err != nil {
			t.Fatal(err)
		}
		if o.Compared != compared || (o.Holder && !equal(o.Errors, want.Errors)) || (!o.Holder && len(o.Errors) > 0) {
			t.Errorf("output %+v, want the counts %+v", o, want)
		}
	}
	var d scoreDecision
	if err := wire.Unmarshal(c.Decisions[0], &d); err != nil || d.Compared != want.Compared || !equal(d.Errors, want.Errors) {
		t.Errorf("decision %+v (%v), want %+v", d, err, want)
	}
	noValues(t, &c, rec)
}

// noValues checks every captured message, output, failure text and log
// line, and the job record, for a patient id, label or prediction.
func noValues(t *testing.T, c *nodewatch.Capture, rec *node.JobRecord) {
	t.Helper()
	if c.LogBytes == 0 {
		t.Fatal("no node log captured")
	}
	hay := [][]byte{c.Logs.Bytes(), rec.Result, []byte(rec.Error)}
	for _, o := range c.Outputs {
		hay = append(hay, o.Body)
	}
	for _, s := range c.Sent {
		hay = append(hay, s.M.Body)
	}
	for _, f := range c.Failures {
		hay = append(hay, []byte(f))
	}
	_, preds := readCSV(t, "predictions")
	_, labs := readCSV(t, "labels")
	for _, r := range append(preds, labs...) {
		nd := []byte(r[0])
		for _, h := range hay {
			if bytes.Contains(h, nd) {
				t.Errorf("a message, output, record or log line holds patient id %s", nd)
				break
			}
		}
	}
	// Labels and predictions are yes/no: as msgpack strings (a length
	// byte, then the text) they must appear nowhere but the spec's echo.
	for _, s := range c.Sent {
		for _, v := range []string{"\xa3yes", "\xa2no"} {
			if bytes.Contains(s.M.Body, []byte(v)) && s.D != wire.DiscloseControl {
				t.Errorf("%s's %s holds %q", s.From, s.M.Type, strings.TrimLeft(v, "\xa2\xa3"))
			}
		}
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Specs that are not one labels table and one predictions table are
// refused, naming the field.
func TestValidate(t *testing.T) {
	base, err := os.ReadFile(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, field string }{
		{"labels: {patient: id, risk: class}", "labels: {patient: id, risk: categorical}", "schema.labels"},
		{"labels: {patient: id, risk: class}", "labels: {patient: id, risk: class, age: numeric}", "schema.labels"},
		{"predictions: {patient: id,", "predictions: {", "schema.predictions"},
		{"kind: model-select", "kind: model-select\nparams: {min_ids: 0}", "params.min_ids"},
		{"kind: model-select", "kind: model-select\nparams: {align: rows}", "params.align"},
	} {
		spec, err := job.ParseSpec([]byte(strings.Replace(string(base), c.from, c.to, 1)), exampleSpec)
		if err == nil {
			err = Kind{}.Validate(spec)
		}
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%q: %v, want an error naming %s", c.to, err, c.field)
		}
	}
}
