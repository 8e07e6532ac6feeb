package onetable

import (
	"encoding/csv"
	"fmt"
	"github.com/cohortdm/cohort/internal/testkit/spectest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/internal/adultdata"
	"github.com/cohortdm/cohort/internal/shareddata"
	"github.com/cohortdm/cohort/job"
)

// sunQID are the thesis's seven Adult quasi-identifiers (Sun, Table 3.7).
var sunQID = []string{"age", "workclass", "education", "native-country", "marital-status", "race", "sex"}

// adultSpec writes the first n complete records of adult.data (an id,
// Sun's quasi-identifiers, occupation) and a spec naming ARX's
// hierarchies with the given params; it skips when Adult is absent.
func adultSpec(t *testing.T, n int, params string) *job.Spec {
	t.Helper()
	root, err := shareddata.Dir(".", "adult", "COHORT_ADULT_DIR")
	if err != nil {
		t.Skipf("UCI Adult not found: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "arx")); err != nil {
		t.Skipf("UCI Adult not found: %v", err)
	}
	recs, err := adultdata.Read(root, "adult.data")
	if err != nil {
		t.Fatal(err)
	}
	cols := append([]string{"id"}, append(slices.Clone(sunQID), "occupation")...)
	out := [][]string{cols}
	for r, rec := range recs[:n] {
		row := []string{fmt.Sprintf("r%05d", r)}
		for _, c := range cols[1:] {
			row = append(row, rec[slices.Index(adultdata.Names, c)])
		}
		out = append(out, row)
	}
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "adult.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := csv.NewWriter(f).WriteAll(out); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var tax []string
	for _, q := range sunQID { // a spec names files inside its directory
		name := "adult_hierarchy_" + q + ".csv"
		b, err := os.ReadFile(filepath.Join(root, "arx", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		tax = append(tax, q+": "+name)
	}
	spec := "kind: anonymize\nparties:\n  - name: census\n    tables: [{name: adult, path: adult.csv}]\n" +
		"taxonomies: {" + strings.Join(tax, ", ") + "}\nparams:\n" + params
	s := spectest.Write(t, filepath.Join(dir, "spec.yaml"), spec)
	return s
}

// Issue 32, item 4: the classes, DM and C_AVG a job reports are those of
// the table it publishes, counted here from the publication's distinct QID
// tuples. Mondrian on these 5,000 Adult records at k = 10 reported 329
// classes (counted on taxonomy nodes, where two classes with different
// published age ranges share a node) and published 333.
func TestAdultMetricsOnPublication(t *testing.T) {
	for _, alg := range []string{"mondrian", "local", "optimal"} {
		s := adultSpec(t, 5000, "  algorithm: "+alg+"\n  requirements: [{qid: ["+strings.Join(sunQID, ", ")+"], k: 10}]\n")
		rep, err := run(t, s)
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		p := rep.Result["published"].(anonymize.Published)
		count := map[string]int{}
		for _, r := range p.Rows {
			var key []string
			for _, q := range sunQID {
				key = append(key, r.Values[slices.Index(p.Columns, q)])
			}
			count[strings.Join(key, "\x00")] += r.Count
		}
		dm, n := 0.0, 0
		for _, c := range count {
			dm += float64(c) * float64(c)
			n += c
		}
		classes := rep.Result["classes"].(int)
		cavg := float64(n) / float64(len(count)) / 10
		if classes != len(count) || rep.Result["discernibility"].(float64) != dm || rep.Result["avg_class_size"].(float64) != cavg {
			t.Errorf("%s: reported classes %d, DM %v, C_AVG %v; published %d, %v, %v", alg, classes, rep.Result["discernibility"], rep.Result["avg_class_size"], len(count), dm, cavg)
		}
		t.Logf("%s: %d classes, ncp %.4f, distortion %.4f", alg, classes, rep.Result["ncp"], rep.Result["distortion"])
	}
}

// Issue 32, item 2: on 5,000 Adult records (Sun's seven quasi-identifiers,
// k = 5, utility weights β = 1 as in the thesis's experiments) and two
// purposes (age most useful, workclass least: the thesis's Fig. 4.6(a);
// sex most, native-country least), every degree asked is reached; the NCP
// never falls as the degree asked rises; full trust publishes algorithm
// optimal's table; two trusts share a table only if it reaches the higher
// degree. It used to reach 0.548 for trust 0.2 (0.64 asked) and publish
// one table for trusts 0.95 to 0.2. The figures of docs/anonymize.md:
//
//	go test ./anonymize/onetable -run TestAdultPurpose -v -count=1
func TestAdultPurpose(t *testing.T) {
	qid := "  requirements: [{qid: [" + strings.Join(sunQID, ", ") + "], k: 5}]\n"
	opt, err := run(t, adultSpec(t, 5000, "  algorithm: optimal\n"+qid))
	if err != nil {
		t.Fatal(err)
	}
	asks := []string{"trust: 1", "trust: 0.95", "trust: 0.8", "trust: 0.5", "trust: 0.2", "degree: 0.9", "trust: 0"}
	for _, purpose := range []string{"{first: age, last: workclass}", "{first: sex, last: native-country}"} {
		var prev job.Result
		for i, ask := range asks {
			rep, err := run(t, adultSpec(t, 5000, "  algorithm: purpose\n"+qid+"  purpose: "+purpose+"\n  "+ask+"\n  beta: 1\n"))
			if err != nil {
				t.Fatalf("%s %s: %v", purpose, ask, err)
			}
			r := rep.Result
			asked, reached, ncp := r["degree_asked"].(float64), r["degree"].(float64), r["ncp"].(float64)
			t.Logf("| %s | %s | %.4f | %.4f | %.4f | %v | %v | %d |", purpose, ask, asked, reached, ncp, r["decomposed"], r["levels"], r["classes"])
			if reached < asked-1e-9 {
				t.Errorf("%s %s: asked %.4f, reached %.4f", purpose, ask, asked, reached)
			}
			if i == 0 && (!slices.Equal(r["levels"].([]int), opt.Result["levels"].([]int)) || ncp != opt.Result["ncp"].(float64)) {
				t.Errorf("%s full trust: levels %v NCP %v, optimal %v %v", purpose, r["levels"], ncp, opt.Result["levels"], opt.Result["ncp"])
			}
			if i == 0 {
				prev = r
				continue
			}
			if ncp < prev["ncp"].(float64) {
				t.Errorf("%s %s: NCP %.4f below %.4f at %s", purpose, ask, ncp, prev["ncp"], asks[i-1])
			}
			if slices.Equal(r["levels"].([]int), prev["levels"].([]int)) && prev["degree"].(float64) < asked-1e-9 {
				t.Errorf("%s %s: the table of %s (degree %.4f) again", purpose, ask, asks[i-1], prev["degree"])
			}
			prev = r
		}
	}
}
