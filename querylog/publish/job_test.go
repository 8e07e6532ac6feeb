package publish

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/querylog"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// logSpec writes a generated log of the paper's shape as the engine's
// table and a spec with the given params.
func logSpec(t *testing.T, queries int, params string) (*job.Spec, []querylog.Record) {
	t.Helper()
	dir := t.TempDir()
	log := querylog.Generate(querylog.PaperShape(queries, 3))
	writeLog(t, filepath.Join(dir, "log.csv"), log)
	spec := "kind: querylog\nparties:\n  - name: engine\n    tables: [{name: log, path: log.csv}]\n" +
		"params:\n  columns: {results: results}\n" + params
	path := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := job.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	return s, log
}

// writeLog writes a log as the CSV the job reads.
func writeLog(t *testing.T, path string, log []querylog.Record) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	w.Write([]string{"user", "query", "time", "rank", "click", "results"})
	for _, r := range log {
		w.Write([]string{r.User, r.Query, r.Time, fmt.Sprint(r.Rank), r.Click, fmt.Sprint(r.Results)})
	}
	w.Flush()
	if err := f.Close(); err != nil || w.Error() != nil {
		t.Fatal(err, w.Error())
	}
}

// run runs the job coordinated by a member that holds no log, so the
// publication crosses the network and the report sees it.
func run(t *testing.T, s *job.Spec, pol *policy.Policy) (*jobtest.Report, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return jobtest.Run(ctx, Kind{}, s, jobtest.Options{Members: []string{"hub"}, Leader: "hub", Policy: pol,
		Secrets: jobtest.SecretsIn(t.TempDir(), s.PartyNames())})
}

// Leakage: the only output is the sanitised log, sent once to the
// coordinator; no raw user id, URL, host or removed query is in any
// message or log entry; the committed publication defeats the attack.
func TestLeakage(t *testing.T) {
	s, log := logSpec(t, 1500, "  k: 5\n")
	rep, err := run(t, s, policy.Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rep.SentOutside(wire.DiscloseSanitisedLog, wire.DiscloseControl) {
		t.Errorf("message %s discloses %q", m.Message.Type, m.Disclosure)
	}
	outputs := 0
	for _, m := range rep.Sent {
		if m.Disclosure == wire.DiscloseSanitisedLog {
			outputs++
			if m.From != "engine" || m.To != "hub" || m.Message.Phase != publishRound.Phase {
				t.Errorf("%s sent the log to %s in %s", m.From, m.To, m.Message.Phase)
			}
		}
	}
	if outputs != 1 {
		t.Errorf("%d publications sent, want 1", outputs)
	}
	rows := rep.Result["published"].([]querylog.Row)
	if len(querylog.Attack(querylog.PublishedClicks(rows))) != 0 || len(querylog.Attack(querylog.RawClicks(log))) == 0 {
		t.Fatal("the attack finds pairs in the publication, or none in the raw log")
	}
	published := map[string]bool{}
	for _, r := range rows {
		published[r.Query] = true
	}
	needles := map[string]bool{}
	for _, r := range log {
		needles[r.User] = true
		if r.Click != "" {
			needles[r.Click], needles[querylog.Site(r.Click)] = true, true
		}
		if !published[r.Query] {
			needles[r.Query] = true
		}
	}
	if len(needles) < 3000 {
		t.Fatalf("%d needles", len(needles))
	}
	for nd := range needles {
		if len(rep.SentHolding([]byte(nd))) > 0 || len(rep.LogHolding([]byte(nd))) > 0 {
			t.Errorf("%q left the party", nd)
		}
	}
	if d := rep.Result["density"].([]float64); len(d) == 0 || d[len(d)-1] != 0 {
		t.Errorf("density per step ends at %v", d[len(d)-1:])
	}
}

// A node whose min_k is above the job's k refuses it before a row is
// read; k below 2, an unknown method and two parties are refused by name.
func TestRefused(t *testing.T) {
	s, _ := logSpec(t, 300, "  k: 3\n")
	rep, err := run(t, s, policy.Default())
	if err == nil || !strings.Contains(err.Error(), "refused by policy") {
		t.Fatalf("k below min_k: %v", err)
	}
	for _, o := range rep.Outputs {
		t.Errorf("party output of step %s after the policy refused", o.Step.Phase)
	}
	for p, field := range map[string]string{"  k: 1\n": "params.k", "  k: 5\n  method: degree/age\n": "params.method",
		"  k: 5\n": "params.columns"} {
		s, _ := logSpec(t, 10, p)
		if field == "params.columns" {
			s.Params["columns"] = map[string]any{"user": "query"}
		}
		if err := (Kind{}).Validate(s); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("params %q: %v", p, err)
		}
	}
	two, _ := logSpec(t, 10, "  k: 5\n")
	two.Parties = append(two.Parties, two.Parties[0])
	two.Parties[1].Name = "other"
	if err := (Kind{}).Validate(two); err == nil || !strings.Contains(err.Error(), "one party") {
		t.Errorf("two parties: %v", err)
	}
}

// Over real nodes (libp2p on loopback, Raft) under the default policy:
// querylog.csv written with no pair for the attack, result.json names it
// with density reaching 0, and the party's audit ledger holds nothing but
// its policy's decision and control (the party is the only node, so its
// publication never leaves it as a message).
func TestSim(t *testing.T) {
	s, _ := logSpec(t, 800, "  k: 5\n  method: degree\n")
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := sim.Run(ctx, filepath.Join(s.Dir, "spec.yaml"), sim.RunOptions{Kinds: job.Registry{"querylog": Kind{}}, Out: out, Policy: policy.Default()}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(out, File))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(recs) < 100 || strings.Join(recs[0], ",") != "user,query,time,click" {
		t.Fatalf("%s: %d rows, %v", File, len(recs), err)
	}
	var clicks []querylog.Click
	for _, r := range recs[1:] {
		clicks = append(clicks, querylog.Click{Query: r[1], URL: r[3], Site: querylog.SiteOf(r[3])})
	}
	if p := querylog.Attack(clicks); len(p) != 0 {
		t.Errorf("the attack finds %d pairs in %s", len(p), File)
	}
	raw, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		File    string    `json:"querylog"`
		Density []float64 `json:"density"`
		Rows    int       `json:"published_rows"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.File != File || res.Rows != len(recs)-1 || len(res.Density) == 0 || res.Density[len(res.Density)-1] != 0 {
		t.Errorf("result.json: %v %.300s", err, raw)
	}
	if bytes.Contains(raw, []byte(`"published":`)) {
		t.Error("result.json holds the rows beside the file")
	}
	entries, err := audit.ReadFile(filepath.Join(out, "audit", "engine.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch {
		case e.Disclosure == string(wire.DiscloseSanitisedLog) && e.Phase == publishRound.Phase:
		case e.Disclosure == string(wire.DiscloseControl) && (e.Type == audit.DecisionType || e.Type == runner.OutputType && e.Phase == runner.AdmitPhase):
		default:
			t.Errorf("the ledger holds %s in %s to %s disclosing %q", e.Type, e.Phase, e.Peer, e.Disclosure)
		}
	}
	if len(audit.Decisions(entries)) == 0 {
		t.Error("the ledger holds no policy decision: the check checks nothing")
	}
}

// The example (examples/querylog.yaml) runs under the default policy and
// its log is the generator's, so the figures can be remade from it:
//
//	COHORT_WRITE_EXAMPLE=1 go test ./querylog/publish -run TestExample
func TestExample(t *testing.T) {
	const path = "../../examples/querylog.csv"
	log := querylog.Generate(querylog.PaperShape(150, 3))
	if os.Getenv("COHORT_WRITE_EXAMPLE") != "" {
		writeLog(t, path, log)
	}
	want := filepath.Join(t.TempDir(), "log.csv")
	writeLog(t, want, log)
	a, errA := os.ReadFile(path)
	b, errB := os.ReadFile(want)
	if errA != nil || errB != nil || !bytes.Equal(a, b) {
		t.Fatalf("%s is not the generator's log (%v, %v)", path, errA, errB)
	}
	s, err := job.LoadSpec("../../examples/querylog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := run(t, s, policy.Default())
	if err != nil {
		t.Fatal(err)
	}
	rows := rep.Result["published"].([]querylog.Row)
	if len(rows) == 0 || len(querylog.Attack(querylog.PublishedClicks(rows))) != 0 {
		t.Errorf("%d rows published; the attack finds pairs in them, or nothing was published", len(rows))
	}
}
