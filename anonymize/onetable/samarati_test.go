package onetable

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/wire"
)

// algorithm samarati publishes what anonymize.Samarati gives in process
// (the least-NCP vector of the lowest satisfying height), k-anonymous by a
// naive count; its height is the lowest of the privacy hash table's
// minimal vectors; it reports the strategy count (Sun Thm 2.1: seed 003's
// taxonomies have 1 step of gender, 3 of education and 2 of age, so
// 6!/(1!·3!·2!) = 60) and the weighted discernibility.
func TestSamaratiJob(t *testing.T) {
	qid := []string{"gender", "education", "age"}
	_, _, ds := direct(t, qid)
	steps := []int{ds.Attrs[0].Tax.MaxLevel(), ds.Attrs[1].Tax.MaxLevel(), ds.Attrs[2].Tax.MaxLevel()}
	want, err := anonymize.StrategyCount(steps)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{2, 3, 5} {
		s := seedSpec(t, fmt.Sprintf("  algorithm: samarati\n  requirements: [{qid: [gender, education, age], k: %d}]\n", k), nil)
		rep, err := run(t, s)
		if err != nil {
			t.Fatal(err)
		}
		res, err := anonymize.Samarati(ds, []anonymize.Requirement{{QID: qid, K: k}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := rep.Result["published"].(anonymize.Published)
		w := anonymize.Compact(ds.Publish(res.Gen))
		if !slices.EqualFunc(got.Rows, w.Rows, func(a, b anonymize.Row) bool { return a.Count == b.Count && slices.Equal(a.Values, b.Values) }) {
			t.Errorf("k=%d: job published %v, in process %v", k, got.Rows, w.Rows)
		}
		minimal, err := anonymize.MinimalFullDomain(ds, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := rep.Result
		if r["height"] != sumInts(minimal[0]) || !slices.Equal(r["levels"].([]int), res.Levels) || r["ncp"] != res.NCP {
			t.Errorf("k=%d: height %v levels %v ncp %v; hash table's lowest %v, in process %v %v", k, r["height"], r["levels"], r["ncp"], minimal[0], res.Levels, res.NCP)
		}
		if m := naiveMin(got, qid); m < k || m != r["min_group"] {
			t.Errorf("k=%d: naive min group %d, result %v", k, m, r["min_group"])
		}
		wdm, _, _ := ds.WeightedDiscernibility(res.Gen, nil, 0)
		if r["strategies"] != want.String() || r["weighted_discernibility"] != wdm || wdm <= 0 || wdm > r["discernibility"].(float64) {
			t.Errorf("k=%d: strategies %v (want %v), weighted DM %v (DM %v)", k, r["strategies"], want, r["weighted_discernibility"], r["discernibility"])
		}
	}
	if want.String() != "60" || !slices.Equal(steps, []int{1, 3, 2}) {
		t.Errorf("seed 003's steps %v, strategies %v", steps, want)
	}
}

func sumInts(v []int) int {
	s := 0
	for _, x := range v {
		s += x
	}
	return s
}

// With a sensitive model (distinct l = 2 on class), samarati's publication
// holds two class labels in every class, counted naively; bad params name
// the field.
func TestSamaratiModel(t *testing.T) {
	rep, err := run(t, seedSpec(t, "  algorithm: samarati\n  requirements: [{qid: [gender, education], k: 3}]\n  sensitive: class\n  l: 2\n", nil))
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Result["published"].(anonymize.Published)
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
	for p, field := range map[string]string{
		"  algorithm: samarati\n  requirements: [{qid: [gender], k: 1}]\n":               "params.requirements[0].k",
		"  algorithm: samarati\n  requirements: [{qid: [zip], k: 2}]\n":                  "params.requirements[0].qid[0]",
		"  algorithm: samarati\n  requirements: [{qid: [age], k: 2}]\n  seed: 3\n":       "params.seed",
		"  algorithm: samarati\n  requirements: [{qid: [age], k: 2}]\n  sensitive: id\n": "params.sensitive",
	} {
		err := (Kind{}).Validate(seedSpec(t, p, nil))
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%q: %v, want %s", p, err, field)
		}
	}
}

// Over real nodes (libp2p on loopback, Raft): algorithm samarati writes a
// k-anonymous anonymized.csv of every record; no id and no raw education
// value the publication does not show is in any message or log entry, and
// every message outside the party discloses only the generalised table.
func TestSamaratiSim(t *testing.T) {
	s := seedSpec(t, "  algorithm: samarati\n  requirements: [{qid: [gender, education, age], k: 3}]\n", nil)
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pol := policy.Default()
	pol.Floors.MinK = 3
	if _, err := sim.Run(ctx, filepath.Join(s.Dir, "spec.yaml"), sim.RunOptions{Kinds: job.Registry{"anonymize": Kind{}}, Out: out, Policy: pol}); err != nil {
		t.Fatal(err)
	}
	tab, err := table.Load(filepath.Join(out, File), "pub", nil)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := anonymize.MinGroup(tab, []string{"gender", "education", "age"}); tab.NumRows() != 34 || m < 3 {
		t.Fatalf("%d rows, class of %d", tab.NumRows(), m)
	}
	raw, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{`"algorithm": "samarati"`, `"height"`, `"probes"`, `"strategies"`, `"weighted_discernibility"`} {
		if !strings.Contains(string(raw), f) {
			t.Errorf("result.json lacks %s: %s", f, raw)
		}
	}
	if strings.Contains(string(raw), "solutions") {
		t.Errorf("result.json holds the other satisfying vectors: %s", raw)
	}
	rep, err := run(t, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rep.SentOutside(wire.DiscloseGeneralised) {
		t.Errorf("message %s discloses %q", m.Message.Type, m.Disclosure)
	}
	shown := map[string]bool{}
	for _, r := range rep.Result["published"].(anonymize.Published).Rows {
		for _, v := range r.Values {
			shown[v] = true
		}
	}
	src, _, _ := direct(t, nil)
	var needles []string
	for i := range src.NumRows() {
		needles = append(needles, fmt.Sprintf("person-%03d", i))
	}
	edu, _ := src.Column("education")
	for _, v := range edu.Str {
		inLabel := false
		for l := range shown {
			inLabel = inLabel || strings.Contains(l, v)
		}
		if !inLabel && !slices.Contains(needles, v) {
			needles = append(needles, v)
		}
	}
	if len(needles) < 35 {
		t.Fatalf("%d needles", len(needles))
	}
	for _, nd := range needles {
		if len(rep.SentHolding([]byte(nd))) > 0 || len(rep.LogHolding([]byte(nd))) > 0 {
			t.Errorf("%q left the party", nd)
		}
	}
}

// On 5,000 and 30,162 Adult records (Sun's seven quasi-identifiers, ARX's
// hierarchies) the job's Samarati publication is the in-process one and no
// cheaper than algorithm optimal's; the figures of docs/anonymize.md:
//
//	COHORT_ADULT=1 go test ./anonymize/onetable -run TestAdultSamarati -v -count=1
func TestAdultSamarati(t *testing.T) {
	if os.Getenv("COHORT_ADULT") == "" {
		t.Skip("set COHORT_ADULT=1 to run on UCI Adult")
	}
	for _, c := range [][2]int{{5000, 5}, {5000, 10}, {30162, 5}, {30162, 10}} {
		n, k := c[0], c[1]
		reqs := fmt.Sprintf("  requirements: [{qid: [%s], k: %d}]\n", strings.Join(sunQID, ", "), k)
		sam, err := run(t, adultSpec(t, n, "  algorithm: samarati\n"+reqs))
		if err != nil {
			t.Fatal(err)
		}
		opt, err := run(t, adultSpec(t, n, "  algorithm: optimal\n"+reqs))
		if err != nil {
			t.Fatal(err)
		}
		r, o := sam.Result, opt.Result
		if r["ncp"].(float64) < o["ncp"].(float64)-1e-12 {
			t.Errorf("k=%d: samarati NCP %v below optimal's %v", k, r["ncp"], o["ncp"])
		}
		t.Logf("| %d | %d | samarati | %v | %d | %.4f | %d | %.0f | %.0f | %d | %.3f s |", n, k, r["levels"], r["height"], r["ncp"], r["classes"], r["discernibility"], r["weighted_discernibility"], r["checked"], r["seconds"])
		t.Logf("| %d | %d | optimal | %v | %d | %.4f | %d | %.0f | %.0f | %d | %.3f s |", n, k, o["levels"], sumInts(o["levels"].([]int)), o["ncp"], o["classes"], o["discernibility"], o["weighted_discernibility"], o["checked"], o["seconds"])
	}
}

// The bundled example (examples/anonymize/samarati.yaml) runs, and
// publishes a minimal vector of the lowest height the privacy hash table
// finds for k = 5 with distinct 2-diversity on readmitted.
func TestSamaratiExample(t *testing.T) {
	s, err := job.LoadSpec("../../examples/anonymize/samarati.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := run(t, s)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := table.Load("../../examples/anonymize/data/patients.csv", "patients", nil)
	if err != nil {
		t.Fatal(err)
	}
	tax := map[string]*anonymize.Taxonomy{}
	for _, c := range []string{"age", "sex"} {
		if tax[c], err = anonymize.LoadTaxonomy("../../examples/anonymize/data/"+c+".yaml", c); err != nil {
			t.Fatal(err)
		}
	}
	ds, err := anonymize.Encode(tab, []string{"age", "sex"}, tax)
	if err != nil {
		t.Fatal(err)
	}
	col, _ := tab.Column("readmitted")
	sens, err := anonymize.SensitiveModel{L: 2}.Code(col.Str)
	if err != nil {
		t.Fatal(err)
	}
	minimal, err := anonymize.MinimalFullDomain(ds, 5, sens)
	if err != nil {
		t.Fatal(err)
	}
	levels := rep.Result["levels"].([]int)
	if !slices.ContainsFunc(minimal, func(m []int) bool { return slices.Equal(m, levels) }) || sumInts(levels) != sumInts(minimal[0]) {
		t.Errorf("published levels %v; minimal %v", levels, minimal)
	}
	if rep.Result["min_group"].(int) < 5 {
		t.Errorf("min group %v", rep.Result["min_group"])
	}
}
