package onetable

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"github.com/cohortdm/cohort/internal/testkit/spectest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/wire"
)

// seedSpec writes Reddy et al.'s Table 1 (corrected) as one party's table,
// its taxonomies and a spec with the given params.
func seedSpec(t *testing.T, params string, edit func([][]string) [][]string) *job.Spec {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile("../testdata/seed003/table1.csv")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs[1:] {
		recs[i+1][0] = fmt.Sprintf("person-%03d", i) // distinctive ids
	}
	if edit != nil {
		recs = edit(recs)
	}
	f, err := os.Create(filepath.Join(dir, "t.csv"))
	if err != nil {
		t.Fatal(err)
	}
	csv.NewWriter(f).WriteAll(recs)
	f.Close()
	for _, c := range []string{"gender", "education", "age"} {
		b, err := os.ReadFile(filepath.Join("../testdata/seed003", c+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, c+".yaml"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec := "kind: anonymize\nparties:\n  - name: clinic\n    tables: [{name: people, path: t.csv}]\n" +
		"taxonomies: {gender: gender.yaml, education: education.yaml, age: age.yaml}\nparams:\n" + params
	s := spectest.Write(t, filepath.Join(dir, "spec.yaml"), spec)
	return s
}

func run(t *testing.T, s *job.Spec) (*jobtest.Report, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return jobtest.Run(ctx, Kind{}, s, jobtest.Options{})
}

// naiveMin is the smallest class on qid of the expanded publication,
// counted pairwise (independent of the package's checkers).
func naiveMin(p anonymize.Published, qid []string) int {
	var recs [][]string
	for _, r := range p.Rows {
		for range r.Count {
			recs = append(recs, r.Values)
		}
	}
	m := len(recs)
	for _, a := range recs {
		n := 0
		for _, b := range recs {
			same := true
			for _, q := range qid {
				i := slices.Index(p.Columns, q)
				same = same && a[i] == b[i]
			}
			if same {
				n++
			}
		}
		m = min(m, n)
	}
	return m
}

func direct(t *testing.T, qid []string) (*table.Table, map[string]*anonymize.Taxonomy, *anonymize.Dataset) {
	tab, err := table.Load("../testdata/seed003/table1.csv", "T", nil)
	if err != nil {
		t.Fatal(err)
	}
	tax := map[string]*anonymize.Taxonomy{}
	for _, c := range []string{"gender", "education", "age"} {
		if tax[c], err = anonymize.LoadYAMLFile(filepath.Join("../testdata/seed003", c+".yaml")); err != nil {
			t.Fatal(err)
		}
	}
	ds, err := anonymize.Encode(tab, qid, tax)
	if err != nil {
		t.Fatal(err)
	}
	return tab, tax, ds
}

// Both algorithms as a job publish what they publish in process, and the
// publication is k-anonymous by a naive count.
func TestAlgorithms(t *testing.T) {
	qid := []string{"gender", "education", "age"}
	_, _, ds := direct(t, qid)
	for _, alg := range []string{"optimal", "mondrian"} {
		for _, k := range []int{2, 3, 5} {
			s := seedSpec(t, fmt.Sprintf("  algorithm: %s\n  requirements: [{qid: [gender, education, age], k: %d}]\n", alg, k), nil)
			rep, err := run(t, s)
			if err != nil {
				t.Fatal(err)
			}
			got := rep.Result["published"].(anonymize.Published)
			var want *table.Table
			var ncp float64
			if alg == "optimal" {
				res, err := anonymize.OptimalFullDomain(ds, k)
				if err != nil {
					t.Fatal(err)
				}
				want, ncp = ds.Publish(res.Gen), res.NCP
			} else {
				res, err := anonymize.Mondrian(ds, k)
				if err != nil {
					t.Fatal(err)
				}
				want, ncp = res.Publish(ds), res.NCP
			}
			if w := anonymize.Compact(want); !slices.EqualFunc(got.Rows, w.Rows, func(a, b anonymize.Row) bool {
				return a.Count == b.Count && slices.Equal(a.Values, b.Values)
			}) {
				t.Errorf("%s k=%d: job published %v, in process %v", alg, k, got.Rows, w.Rows)
			}
			if rep.Result["ncp"] != ncp {
				t.Errorf("%s k=%d: ncp %v, in process %v", alg, k, rep.Result["ncp"], ncp)
			}
			if m := naiveMin(got, qid); m < k || m != rep.Result["min_group"] {
				t.Errorf("%s k=%d: naive min group %d, result %v", alg, k, m, rep.Result["min_group"])
			}
		}
	}
}

// Mondrian with a sensitive column and l = 2: every class holds two
// distinct values (counted naively); the sensitive column is published as is.
func TestMondrianDiverse(t *testing.T) {
	s := seedSpec(t, "  algorithm: mondrian\n  requirements: [{qid: [gender, education], k: 3}]\n  sensitive: class\n  l: 2\n", nil)
	rep, err := run(t, s)
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Result["published"].(anonymize.Published)
	if !slices.Equal(p.Columns, []string{"gender", "education", "class"}) {
		t.Fatalf("columns %v", p.Columns)
	}
	labels := map[string]map[string]bool{}
	for _, r := range p.Rows {
		k := r.Values[0] + "|" + r.Values[1]
		if labels[k] == nil {
			labels[k] = map[string]bool{}
		}
		labels[k][r.Values[2]] = true
	}
	for k, ls := range labels {
		if len(ls) < 2 {
			t.Errorf("class %s holds one class label", k)
		}
	}
}

// Leakage: the only output is the publication (generalised; the runtime's
// admission answer, control, carries no data and SentOutside leaves it
// out); no id, and no raw QID value the publication does not show, is in
// any message or log entry.
func TestLeakage(t *testing.T) {
	s := seedSpec(t, "  algorithm: optimal\n  requirements: [{qid: [gender, education, age], k: 4}]\n", nil)
	rep, err := run(t, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rep.SentOutside(wire.DiscloseGeneralised) {
		t.Errorf("message %s discloses %q", m.Message.Type, m.Disclosure)
	}
	for _, nd := range needles(t, rep.Result["published"].(anonymize.Published)) {
		if len(rep.SentHolding([]byte(nd))) > 0 || len(rep.LogHolding([]byte(nd))) > 0 {
			t.Errorf("%q left the party", nd)
		}
	}
}

// needles are what must not leave the party with publication p of
// seedSpec's table: every id (seedSpec's person-NNN), and every raw
// education value p does not show.
func needles(t *testing.T, p anonymize.Published) []string {
	t.Helper()
	shown := map[string]bool{}
	for _, r := range p.Rows {
		for _, v := range r.Values {
			shown[v] = true
		}
	}
	tab, _, _ := direct(t, nil)
	var out []string
	for i := range tab.NumRows() {
		out = append(out, fmt.Sprintf("person-%03d", i))
	}
	edu, _ := tab.Column("education")
	for _, v := range edu.Str {
		inLabel := false // "Computers" is inside the published "Non-Computers"
		for l := range shown {
			inLabel = inLabel || strings.Contains(l, v)
		}
		if !inLabel && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	if len(out) < 35 {
		t.Fatalf("%d needles", len(out))
	}
	return out
}

func TestBadInput(t *testing.T) {
	cases := []struct {
		name, params string
		edit         func([][]string) [][]string
		want         string
	}{
		{"value not in taxonomy", "  requirements: [{qid: [education], k: 2}]\n",
			func(r [][]string) [][]string { r[3][3] = "Medicine"; return r }, `column "education": 1 of 34 rows`},
		{"k larger than the table", "  requirements: [{qid: [education], k: 40}]\n", nil, "larger than table people's 34 rows"},
		{"unknown QID column", "  requirements: [{qid: [education], k: 2}]\n",
			func(r [][]string) [][]string { r[0][3] = "schooling"; return r }, `no QID column "education"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := run(t, seedSpec(t, c.params, c.edit))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			if len(rep.LogHolding([]byte("Medicine"))) > 0 {
				t.Errorf("the log holds the uncovered value")
			}
		})
	}
	for _, p := range []string{"  algorithm: flash\n  requirements: [{qid: [age], k: 2}]\n", "  requirements: [{qid: [age], k: 2}]\n  sensitive: class\n  p_plus: 2\n",
		"  requirements: [{qid: [zip], k: 2}]\n"} {
		if err := (Kind{}).Validate(seedSpec(t, p, nil)); err == nil {
			t.Errorf("params %q validated", p)
		}
	}
}

// Over real nodes (libp2p on loopback, Raft), with each algorithm:
// anonymized.csv written, every record in it, k-anonymous; result.json
// names it and summarises the publication; the party's audit ledger holds
// nothing but the generalised publication and control entries that carry
// no data (its admission answer, its policy's decision). Here the party is
// the only node, so nothing leaves it: the ledger holds its decision.
func TestSim(t *testing.T) {
	for _, alg := range []string{"optimal", "mondrian"} {
		t.Run(alg, func(t *testing.T) {
			s := seedSpec(t, "  algorithm: "+alg+"\n  requirements: [{qid: [gender, education, age], k: 3}]\n", nil)
			out := filepath.Join(t.TempDir(), "out")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			// The seed table is small: this organisation's policy accepts k = 3.
			pol := policy.Default()
			pol.Floors.MinK = 3
			if _, err := sim.Run(ctx, filepath.Join(s.Dir, "spec.yaml"), sim.RunOptions{Kinds: job.Registry{"anonymize": Kind{}}, Out: out, Policy: pol}); err != nil {
				t.Fatal(err)
			}
			tab, err := table.Load(filepath.Join(out, File), "pub", nil)
			if err != nil {
				t.Fatal(err)
			}
			if tab.NumRows() != 34 {
				t.Fatalf("%d rows", tab.NumRows())
			}
			if m, _ := anonymize.MinGroup(tab, []string{"gender", "education", "age"}); m < 3 {
				t.Fatalf("class of %d", m)
			}
			raw, err := os.ReadFile(filepath.Join(out, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			var res struct {
				File      string `json:"anonymized"`
				Published struct {
					Columns      []string `json:"columns"`
					DistinctRows int      `json:"distinct_rows"`
				} `json:"published"`
			}
			if err := json.Unmarshal(raw, &res); err != nil {
				t.Fatal(err)
			}
			if res.File != File || !slices.Equal(res.Published.Columns, []string{"gender", "education", "age"}) || res.Published.DistinctRows < 1 {
				t.Errorf("result.json: %s", raw)
			}
			entries, err := audit.ReadFile(filepath.Join(out, "audit", "clinic.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				switch {
				case e.Disclosure == string(wire.DiscloseGeneralised) && e.Phase == anonymizeRound.Phase:
				case e.Disclosure == string(wire.DiscloseControl) && (e.Type == audit.DecisionType || e.Type == runner.OutputType && e.Phase == runner.AdmitPhase):
				default:
					t.Errorf("the ledger holds %s in %s to %s disclosing %q", e.Type, e.Phase, e.Peer, e.Disclosure)
				}
			}
			if len(audit.Decisions(entries)) == 0 {
				t.Error("the ledger holds no policy decision: the check checks nothing")
			}
		})
	}
}

// Regression (issue 21, finding 1): the job refuses what is never anonymous,
// naming the field: k = 1, and a sensitive column published as it is
// without a model that protects it.
func TestRefusesNoAnonymity(t *testing.T) {
	cases := []struct{ params, field string }{
		{"  requirements: [{qid: [gender, age], k: 1}]\n", "params.requirements[0].k"},
		{"  requirements: [{qid: [gender], k: 2}, {qid: [age], k: 1}]\n", "params.requirements[1].k"},
		{"  algorithm: mondrian\n  requirements: [{qid: [gender, age], k: 2}]\n  sensitive: class\n", "params.sensitive"},
		{"  algorithm: mondrian\n  requirements: [{qid: [gender, age], k: 2}]\n  sensitive: class\n  l: 1\n", "params.sensitive"},
	}
	for _, c := range cases {
		err := (Kind{}).Validate(seedSpec(t, c.params, nil))
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("params %q: err = %v, want one naming %s", c.params, err, c.field)
		}
	}
}

// Every algorithm with every sensitive model: the publication satisfies k
// and the model, checked here naively on the expanded rows; the model is
// stated in the result.
func TestModels(t *testing.T) {
	cats := "  categories: [[Y], [N]]\n"
	models := map[string]string{
		"distinct":  "  l: 2\n",
		"p":         "  p: 2\n",
		"entropy":   "  l: 1.8\n  entropy: true\n",
		"recursive": "  recursive_c: 3\n  recursive_l: 2\n",
		"p_plus":    "  p_plus: 2\n" + cats,
		"alpha":     "  p: 2\n  alpha: 1\n" + cats,
	}
	for _, alg := range []string{"optimal", "mondrian", "local"} {
		for name, m := range models {
			s := seedSpec(t, "  algorithm: "+alg+"\n  requirements: [{qid: [gender, education, age], k: 3}]\n  sensitive: class\n"+m, nil)
			rep, err := run(t, s)
			if err != nil {
				t.Fatalf("%s %s: %v", alg, name, err)
			}
			p := rep.Result["published"].(anonymize.Published)
			if m := naiveMin(p, []string{"gender", "education", "age"}); m < 3 {
				t.Errorf("%s %s: class of %d", alg, name, m)
			}
			classes := map[string]map[string]int{}
			for _, r := range p.Rows {
				key := strings.Join(r.Values[:3], "|")
				if classes[key] == nil {
					classes[key] = map[string]int{}
				}
				classes[key][r.Values[3]] += r.Count
			}
			for key, h := range classes {
				// every model here needs both labels in every class, and for
				// recursive (3, 2) the larger count below 3 × the smaller
				if h["Y"] == 0 || h["N"] == 0 || (name == "recursive" && max(h["Y"], h["N"]) >= 3*min(h["Y"], h["N"])) {
					t.Errorf("%s %s: class %s holds %v", alg, name, key, h)
				}
			}
			if rep.Result["model"] == nil || rep.Result["distortion"] == nil {
				t.Errorf("%s %s: result without model or distortion: %v", alg, name, rep.Result)
			}
		}
	}
}

// Every model parameter is refused with an error naming its field.
func TestModelParams(t *testing.T) {
	base := "  requirements: [{qid: [gender], k: 2}]\n  sensitive: class\n"
	cases := map[string]string{
		"  p: -1\n":                               "params.p",
		"  p_plus: 2\n":                           "params.categories",
		"  alpha: 1\n  categories: [[Y]]\n":       "params.categories",
		"  p_plus: 3\n  categories: [[Y], [N]]\n": "params.p_plus",
		"  recursive_c: 2\n":                      "params.recursive_c",
		"  alpha: -1\n  categories: [[Y], [N]]\n": "params.alpha",
		"  l: 2\n  categories: [[Y], [N, Y]]\n":   "params.categories[1]",
		"  l: 2\n  algorithm: tds\n":              "params.algorithm",
	}
	for params, field := range cases {
		err := (Kind{}).Validate(seedSpec(t, base+params, nil))
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("params %q: err = %v, want one naming %s", params, err, field)
		}
	}
	if err := (Kind{}).Validate(seedSpec(t, "  requirements: [{qid: [gender], k: 2}]\n  l: 2\n", nil)); err == nil || !strings.Contains(err.Error(), "params.sensitive") {
		t.Errorf("a model without a sensitive column: %v", err)
	}
}

// algorithms datafly and ogf (no taxonomies): k-anonymous publications
// (counted naively, "*" a value like any other), the fraction of cells
// kept and the column order in the result; OGF keeps at least as much as
// the one order Datafly tries here.
func TestDataflyOGF(t *testing.T) {
	kept := map[string]float64{}
	for _, alg := range []string{"datafly", "ogf"} {
		extra := ""
		if alg == "ogf" {
			extra = "  seed: 3\n"
		}
		s := seedSpec(t, "  algorithm: "+alg+"\n  requirements: [{qid: [gender, education, age], k: 3}]\n"+extra, nil)
		rep, err := run(t, s)
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		p := rep.Result["published"].(anonymize.Published)
		if m := naiveMin(p, []string{"gender", "education", "age"}); m < 3 {
			t.Errorf("%s: class of %d", alg, m)
		}
		kept[alg] = rep.Result["kept"].(float64)
		t.Logf("%s: kept %.3f order %v", alg, kept[alg], rep.Result["order"])
	}
	if kept["datafly"] <= 0 || kept["ogf"] <= 0 {
		t.Errorf("kept %v", kept)
	}
}

// algorithm purpose: with a purpose (gender most useful, age least) and a
// trust, or given priorities and a degree: k-anonymous publications, the
// degree asked and reached and the priorities in the result; a higher trust
// generalises less; bad params name their field.
func TestPurpose(t *testing.T) {
	ncp := map[string]float64{}
	for name, params := range map[string]string{
		"trust 0.9": "  purpose: {first: gender, last: age}\n  trust: 0.9\n",
		"trust 0.1": "  purpose: {first: gender, last: age}\n  trust: 0.1\n",
		"degree":    "  priorities: {gender: 1, education: 0.5, age: 0}\n  degree: 0.5\n  invert: true\n  beta: 1\n",
	} {
		s := seedSpec(t, "  algorithm: purpose\n  requirements: [{qid: [gender, education, age], k: 3}]\n"+params, nil)
		rep, err := run(t, s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p := rep.Result["published"].(anonymize.Published)
		if m := naiveMin(p, []string{"gender", "education", "age"}); m < 3 {
			t.Errorf("%s: class of %d", name, m)
		}
		ncp[name] = rep.Result["ncp"].(float64)
		t.Logf("%s: levels %v priorities %v degree asked %v reached %v raised %v ncp %.3f", name, rep.Result["levels"], rep.Result["priorities"], rep.Result["degree_asked"], rep.Result["degree"], rep.Result["raised"], ncp[name])
	}
	if ncp["trust 0.9"] > ncp["trust 0.1"] {
		t.Errorf("more trust, more loss: %v", ncp)
	}
	base := "  algorithm: purpose\n  requirements: [{qid: [gender, age], k: 2}]\n"
	for params, field := range map[string]string{
		"  purpose: {first: gender, last: age}\n":             "params.degree",
		"  purpose: {first: gender, last: age}\n  trust: 2\n": "params.trust",
		"  purpose: {first: zip, last: age}\n  degree: 0.2\n": "params.purpose.first",
		"  priorities: {gender: 1}\n  degree: 0.2\n":          "params.priorities.age",
		"  degree: 0.2\n": "params.purpose",
		"  purpose: {first: gender, last: age}\n  degree: 0.2\n  beta: -1\n": "params.beta",
	} {
		if err := (Kind{}).Validate(seedSpec(t, base+params, nil)); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("params %q: err = %v, want one naming %s", params, err, field)
		}
	}
	if err := (Kind{}).Validate(seedSpec(t, "  requirements: [{qid: [gender], k: 2}]\n  trust: 0.5\n", nil)); err == nil || !strings.Contains(err.Error(), "params.purpose") {
		t.Errorf("trust for algorithm optimal: %v", err)
	}
}

// A degree that cannot be reached (gender weighs but its taxonomy has one
// level) is refused naming the field that asked for it, trust or degree.
func TestPurposeOutOfReach(t *testing.T) {
	oneGender := func(recs [][]string) [][]string {
		g := slices.Index(recs[0], "gender")
		for _, r := range recs[1:] {
			r[g] = "person"
		}
		return recs
	}
	for ask, field := range map[string]string{"degree: 0.95": "params.degree", "trust: 0": "params.trust"} {
		s := seedSpec(t, "  algorithm: purpose\n  requirements: [{qid: [gender, education, age], k: 3}]\n  priorities: {gender: 1, education: 1, age: 1}\n  "+ask+"\n", oneGender)
		if err := os.WriteFile(filepath.Join(s.Dir, "gender.yaml"), []byte("column: gender\nroot: {label: person}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := run(t, s)
		if err == nil || !strings.Contains(err.Error(), field) || !strings.Contains(err.Error(), `"gender"`) || !strings.Contains(err.Error(), "at most 0.6667") {
			t.Errorf("%s: %v", ask, err)
		}
	}
}
