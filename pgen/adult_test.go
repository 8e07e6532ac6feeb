package pgen_test

import (
	"fmt"
	"github.com/cohortdm/cohort/internal/shareddata"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/adultdata"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/pgen"
	"github.com/cohortdm/cohort/tree"
)

// adultRoot finds the UCI Adult files: COHORT_ADULT_DIR, or the shared
// data beside the repository (shareddata.Dir); "" when absent.
func adultRoot() string {
	d, err := shareddata.Dir(".", "adult", "COHORT_ADULT_DIR")
	if err != nil {
		return ""
	}
	if _, err := os.Stat(filepath.Join(d, "adult.data")); err != nil {
		return ""
	}
	return d
}

var adultNumeric = map[string]bool{"age": true, "fnlwgt": true, "education-num": true, "capital-gain": true, "capital-loss": true, "hours-per-week": true}

// adultSpec writes adult.data's complete records split by rows over n
// parties (record i to party i mod n) and a pgen spec over them.
func adultSpec(t testing.TB, n int, k uint64) (string, *pgen.Schema) {
	root := adultRoot()
	if root == "" {
		t.Skip("no UCI Adult data (set COHORT_ADULT_DIR)")
	}
	recs, err := adultdata.Read(root, "adult.data")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	header := strings.Join(adultdata.Names, ",") + "\n"
	var spec, schema strings.Builder
	fmt.Fprintf(&spec, "kind: pgen\nparams: {release_k: %d}\nparties:\n", k)
	s := &pgen.Schema{Numeric: map[string]bool{}, ClassColumn: "income"}
	var cols []string
	for _, c := range adultdata.Names {
		kind := "categorical"
		switch {
		case c == "income":
			kind = "class"
		case adultNumeric[c]:
			kind = "numeric"
		}
		if c != "income" {
			s.Numeric[c] = adultNumeric[c]
		}
		cols = append(cols, fmt.Sprintf("%q: %s", c, kind))
	}
	for p := range n {
		name := fmt.Sprintf("site%d", p)
		var b strings.Builder
		b.WriteString(header)
		for i := p; i < len(recs); i += n {
			b.WriteString(strings.Join(recs[i], ",") + "\n")
		}
		if err := os.WriteFile(filepath.Join(dir, name+".csv"), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&spec, "  - {name: %s, tables: [{name: %s, path: %s.csv}]}\n", name, name, name)
		fmt.Fprintf(&schema, "  %s: {%s}\n", name, strings.Join(cols, ", "))
	}
	path := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(path, []byte(spec.String()+"schema:\n"+schema.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, s
}

// adultTest reads adult.test's complete records as Data.
func adultTest(t testing.TB, s *pgen.Schema) *tree.Data {
	recs, err := adultdata.Read(adultRoot(), "adult.test")
	if err != nil {
		t.Fatal(err)
	}
	return fromRecords(t, recs, s)
}

// TestJobAdultHorizontal runs pgen over Adult split by rows over three
// parties, for release_k 10 and 100: every published leaf holds K rows,
// the global tree is Global with the log's joint seed, and the global tree
// of the median of five fixed draws of the pseudo-rows (medianAccuracy)
// classifies adult.test within 3 points (release_k 10) or 5 (release_k
// 100, where a few hundred noisy pseudo-rows decide whether a split
// survives, and draws range from 80 % to 83 %) of the tree grown on the
// union of the rows (the paper's BASIS). Figures: docs/pgen.md.
func TestJobAdultHorizontal(t *testing.T) {
	t.Parallel()
	for k, slack := range map[uint64]float64{10: 3, 100: 5} {
		t.Run(fmt.Sprintf("release_k=%d", k), func(t *testing.T) {
			t.Parallel() // each its own job over its own split
			testJobAdultHorizontal(t, k, slack)
		})
	}
}

func testJobAdultHorizontal(t *testing.T, k uint64, slack float64) {
	path, s := adultSpec(t, 3, k)
	spec := loadSpec(t, path)
	pub, global, rep := runPGEN(t, spec)
	test := adultTest(t, s)
	var union []*tree.Data
	var trees []*tree.Tree
	for _, ps := range spec.Parties {
		trees = append(trees, pub[ps.Name])
		union = append(union, readData(t, filepath.Join(spec.Dir, ps.Tables[0].Path), s))
		for _, r := range leafRows(pub[ps.Name].Root) {
			if r < k {
				t.Errorf("party %s published a leaf of %d rows, release_k %d", ps.Name, r, k)
			}
		}
	}
	gp := tree.GrowParams{MaxDepth: 10, MinSplit: 2, Prune: true}
	if again, _ := pgen.Global(trees, s, gp, jointSeed(t, rep, spec)); tree.Diff(again, global) != "" {
		t.Errorf("release_k %d: the global tree is not Global with the log's joint seed", k)
	}
	median := 100 * medianAccuracy(trees, s, gp, test, 5)
	central := tree.Grow(concat(union), gp, "", "")
	acc := func(tr *tree.Tree) float64 { return 100 * float64(tree.Correct(tr, test)) / float64(test.Rows()) }
	gn, _ := global.Size()
	cn, _ := central.Size()
	line := fmt.Sprintf("release_k %d: global %.2f%% (%d nodes; median of five draws %.2f%%), union %.2f%% (%d nodes), published:", k, acc(global), gn, median, acc(central), cn)
	for _, p := range spec.PartyNames() {
		n, l := pub[p].Size()
		line += fmt.Sprintf(" %s %.2f%% (%d nodes, %d leaves, k %d)", p, acc(pub[p]), n, l, pub[p].PathK())
	}
	t.Log(line)
	if median < acc(central)-slack {
		t.Errorf("release_k %d: the global tree %.2f%% (median of five draws), more than %v points below the union's %.2f%%", k, median, slack, acc(central))
	}
}

// TestAdultFigures sweeps the number of parties and release_k on Adult
// (PGEN_FIGURES=1; docs/pgen.md): adult.data split by rows, each party's
// tree grown and ATP-pruned as the job does (TestJobExample checks that the
// job publishes exactly these), the global tree by Global, accuracy on
// adult.test; beside it the union's tree (the paper's BASIS) and the mean
// accuracy of the published trees alone; and the naive Bayes model learnt
// from the same pseudo-rows (params.naive_bayes) beside naive Bayes on the
// union, the random forest of 10 trees (params.random_forest) beside a
// forest on the union, the decision table (params.decision_table)
// beside one on the union, and the conjunctive rule
// (params.conjunctive_rule) beside one on the union.
func TestAdultFigures(t *testing.T) {
	if os.Getenv("PGEN_FIGURES") == "" {
		t.Skip("set PGEN_FIGURES=1")
	}
	_, s := adultSpec(t, 1, 1)
	recs, err := adultdata.Read(adultRoot(), "adult.data")
	if err != nil {
		t.Fatal(err)
	}
	all := fromRecords(t, recs, s)
	test := adultTest(t, s)
	sd := dataDomains(s, all)
	gp := tree.GrowParams{MaxDepth: 10, MinSplit: 2, Prune: true}
	acc := func(tr *tree.Tree) float64 { return 100 * float64(tree.Correct(tr, test)) / float64(test.Rows()) }
	nb := func(m *pgen.NaiveBayes) float64 {
		return 100 * float64(pgen.CorrectBayes(m, test)) / float64(test.Rows())
	}
	fp := pgen.ForestParams{Trees: 10}
	rf := func(f *pgen.Forest) float64 {
		return 100 * float64(pgen.CorrectForest(f, test)) / float64(test.Rows())
	}
	dt := func(m *pgen.DecisionTable) float64 {
		return 100 * float64(pgen.CorrectTable(m, test)) / float64(test.Rows())
	}
	cr := func(r *pgen.Rule) float64 {
		return 100 * float64(pgen.CorrectRule(r, test)) / float64(test.Rows())
	}
	t.Logf("union (BASIS): tree %.2f%%, naive Bayes %.2f%%, random forest %.2f%%, decision table %.2f%%, conjunctive rule %.2f%%", acc(tree.Grow(all, gp, "", "")),
		nb(pgen.LearnBayes(all)), rf(pgen.LearnForest(all, fp, gp, job.Rand([]byte("figures"), "pgen/random-forest"))), dt(pgen.LearnTable(all)),
		cr(pgen.LearnRule(all, job.Rand([]byte("figures"), "pgen/conjunctive-rule"))))
	for _, n := range []int{1, 3, 5, 10} {
		parts := make([][][]string, n)
		for i, r := range recs {
			parts[i%n] = append(parts[i%n], r)
		}
		for _, k := range []uint64{1, 10, 50, 100, 500} {
			start := time.Now()
			var trees []*tree.Tree
			var local float64
			leaves := 0
			for p := range n {
				tr := tree.Grow(fromRecords(t, parts[p], s), gp, fmt.Sprint(p), "t")
				if _, err := tr.ReleasePrune(k); err != nil {
					t.Fatal(err)
				}
				trees = append(trees, tr)
				local += acc(tr) / float64(n)
				_, l := tr.Size()
				leaves += l
			}
			global, rows := pgen.Global(trees, s, gp, []byte("figures"))
			withDom, _ := pgen.Global(trees, sd, gp, []byte("figures"))
			gn, _ := global.Size()
			dn, _ := withDom.Size()
			bayes := nb(pgen.GlobalBayes(trees, s, []byte("figures")))
			forest := rf(pgen.GlobalForest(trees, s, fp, gp, []byte("figures")))
			table := pgen.GlobalTable(trees, s, []byte("figures"))
			rule := pgen.GlobalRule(trees, s, []byte("figures"))
			t.Logf("| %d | %d | %d | %.2f | %.2f | %d | %.2f | %d | %.2f | %.2f | %.2f | %d | %.2f | %d | %d | %.1f |", n, k, leaves/n, local, acc(global), gn,
				acc(withDom), dn, bayes, forest, dt(table), len(table.Attrs), cr(rule), len(rule.Antecedents), rows, time.Since(start).Seconds())
		}
	}
}

// dataDomains is s with the domains of all's attributes: on Adult and
// Nursery the categorical values are those adult.names and nursery.names
// publish; the numeric ranges of the training data, all, stand in for
// public bounds.
func dataDomains(s *pgen.Schema, all *tree.Data) *pgen.Schema {
	sd := &pgen.Schema{Numeric: s.Numeric, ClassColumn: s.ClassColumn, Ranges: map[string][2]float64{}, Values: map[string][]string{}}
	for _, a := range all.Attrs {
		if a.Numeric {
			sd.Ranges[a.Name] = [2]float64{slices.Min(a.Num), slices.Max(a.Num)}
		} else {
			sd.Values[a.Name] = a.Values
		}
	}
	return sd
}

// fromRecords reads Adult records as Data.
func fromRecords(t testing.TB, recs [][]string, s *pgen.Schema) *tree.Data {
	return recordsData(t, adultdata.Names, recs, s)
}

// recordsData reads records whose columns are names as Data, through a CSV
// file and table.Load as a party's table is read.
func recordsData(t testing.TB, names []string, recs [][]string, s *pgen.Schema) *tree.Data {
	path := filepath.Join(t.TempDir(), "part.csv")
	var b strings.Builder
	b.WriteString(strings.Join(names, ",") + "\n")
	for _, r := range recs {
		b.WriteString(strings.Join(r, ",") + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return readData(t, path, s)
}
