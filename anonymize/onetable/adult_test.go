package onetable

import (
	"encoding/csv"
	"fmt"
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
	path := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := job.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
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
