package integrate_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/integrate"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// The bundled example over real nodes (libp2p on loopback, Raft), under
// the default policy: the same publication as in memory, integrated.csv
// holding every record, every class of each requirement at least k records
// (read back from the CSV), and every party's audit ledger within the
// leakage profile.
func TestSimExample(t *testing.T) {
	t.Parallel()
	spec := "../examples/integrate/spec.yaml"
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := sim.Run(ctx, spec, sim.RunOptions{Kinds: job.Registry{"integrate": integrate.Kind{}}, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got simExampleResult
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if res["kind"] != "integrate" || got.File != integrate.IntegratedFile || got.Records != 44 {
		t.Fatalf("result: kind %v, file %q, records %d", res["kind"], got.File, got.Records)
	}
	s, err := job.LoadSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	checkSimAgainstMemory(t, ctx, s, out, &got)
	checkIntegratedClasses(t, out, got.MinGroup)
	checkLedgersInProfile(t, out, s.PartyNames())
}

// simExampleResult is the part of the sim run's result.json
// TestSimExample checks.
type simExampleResult struct {
	Records   int     `json:"records"`
	MinGroup  int     `json:"min_group"`
	NCP       float64 `json:"ncp"`
	Published struct {
		Columns      []string `json:"columns"`
		DistinctRows int      `json:"distinct_rows"`
	} `json:"published"`
	File string `json:"integrated"`
}

// checkSimAgainstMemory runs the same spec in memory: the real nodes'
// integrated.csv under out holds the same publication, and result.json
// summarises it and states the same ncp and min_group.
func checkSimAgainstMemory(t *testing.T, ctx context.Context, s *job.Spec, out string, got *simExampleResult) {
	t.Helper()
	secrets := map[string]job.Secrets{}
	for _, p := range s.PartyNames() {
		secrets[p] = jobtest.DirSecrets(t.TempDir())
	}
	rep, err := jobtest.Run(ctx, integrate.Kind{}, s, jobtest.Options{Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	mem := rep.Result["published"].(anonymize.Published)
	a, _ := json.Marshal(mem)
	b, _ := json.Marshal(readPublished(t, filepath.Join(out, integrate.IntegratedFile)))
	if string(a) != string(b) {
		t.Fatalf("real nodes published\n%s\nin memory\n%s", b, a)
	}
	if !slices.Equal(got.Published.Columns, mem.Columns) || got.Published.DistinctRows != len(mem.Rows) {
		t.Errorf("result.json summarises the publication as %+v", got.Published)
	}
	if got.NCP != rep.Result["ncp"].(float64) || got.MinGroup != rep.Result["min_group"].(int) {
		t.Errorf("ncp %v min_group %d; in memory %v %v", got.NCP, got.MinGroup, rep.Result["ncp"], rep.Result["min_group"])
	}
}

// checkIntegratedClasses reads integrated.csv back: all 44 records without
// the id column, every class of each requirement's QID at least 4 records,
// and the smallest class the min_group the result states.
func checkIntegratedClasses(t *testing.T, out string, wantMinGroup int) {
	t.Helper()
	f, err := os.Open(filepath.Join(out, integrate.IntegratedFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header, recs := recs[0], recs[1:]
	if len(recs) != 44 || slices.Contains(header, "patient") {
		t.Fatalf("integrated.csv: %d records, header %v", len(recs), header)
	}
	minGroup := len(recs)
	for _, qid := range [][]string{{"age", "sex", "diagnosis"}, {"sex", "district"}} {
		count := map[string]int{}
		key := func(r []string) string {
			var k []string
			for _, q := range qid {
				k = append(k, r[slices.Index(header, q)])
			}
			return strings.Join(k, "\x00")
		}
		for _, r := range recs {
			count[key(r)]++
		}
		for _, c := range count {
			if c < 4 {
				t.Errorf("QID %v: a class of %d records in integrated.csv", qid, c)
			}
			minGroup = min(minGroup, c)
		}
	}
	if minGroup != wantMinGroup {
		t.Errorf("min_group %d, integrated.csv %d", wantMinGroup, minGroup)
	}
}

// checkLedgersInProfile: every entry of every party's audit ledger under
// out is one the leakage profile allows, and the ledgers hold each kind of
// disclosure the run makes, so the check is not vacuous.
func checkLedgersInProfile(t *testing.T, out string, parties []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, p := range parties {
		entries, err := audit.ReadFile(filepath.Join(out, "audit", p+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			seen[e.Disclosure] = true
			if !profileAllows(e) {
				t.Errorf("%s's ledger: %s in %s to %s discloses %q", p, e.Type, e.Phase, e.Peer, e.Disclosure)
			}
		}
	}
	for _, d := range []wire.Disclosure{wire.DisclosePSIBlinded, wire.DiscloseScore, wire.DiscloseGeneralised, wire.DiscloseControl} {
		if !seen[string(d)] {
			t.Errorf("no ledger records %q: the check checks nothing", d)
		}
	}
}

// profileAllows says whether a ledger entry is one the leakage profile
// allows: psi-blinded ids, scores and splits, the generalised publication
// and public results, and the control entries that carry no data (the
// runtime's admission answers, the node's own policy decisions, which
// nothing sends).
func profileAllows(e audit.Entry) bool {
	switch wire.Disclosure(e.Disclosure) {
	case wire.DisclosePSIBlinded, wire.DiscloseScore, wire.DiscloseSplitSummary, wire.DiscloseGeneralised, wire.DisclosePublicResult:
		return true
	case wire.DiscloseControl:
		return e.Type == audit.DecisionType || e.Type == runner.OutputType && e.Phase == runner.AdmitPhase
	}
	return false
}

// readPublished reads a publication back from the CSV Assemble wrote: a
// header, then every record, identical rows together.
func readPublished(t *testing.T, path string) anonymize.Published {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("%s: %d lines, %v", path, len(recs), err)
	}
	p := anonymize.Published{Columns: recs[0]}
	for _, r := range recs[1:] {
		if n := len(p.Rows); n > 0 && slices.Equal(p.Rows[n-1].Values, r) {
			p.Rows[n-1].Count++
			continue
		}
		p.Rows = append(p.Rows, anonymize.Row{Values: r, Count: 1})
	}
	return p
}
