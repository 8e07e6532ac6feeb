package pgen_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/adultdata"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/pgen"
	"github.com/cohortdm/cohort/tree"
)

// TestAdultBaselines compares PGEN with the paper's BASEGEN baseline on
// Adult (PGEN_FIGURES=1; docs/pgen.md, beside the paper's Figures 5 and
// 6): adult.data split by rows, each party's tree grown and ATP-pruned as
// the job does, pseudo-rows by Generate (PGEN) or BaseGen (BASEGEN),
// without and with Adult's domains, and on them the three models of
// Figure 6: a decision tree, naive Bayes and a conjunctive rule, scored on
// adult.test; beside each the model learnt on the union (BASIS).
func TestAdultBaselines(t *testing.T) {
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
	seed := []byte("figures")
	score := func(d *tree.Data) (dt, nb, cr float64) {
		pct := func(n int) float64 { return 100 * float64(n) / float64(test.Rows()) }
		grow := gp
		grow.NoSplit = pgen.Other
		return pct(tree.Correct(tree.Grow(d, grow, "", ""), test)), pct(pgen.CorrectBayes(pgen.LearnBayes(d), test)),
			pct(pgen.CorrectRule(pgen.LearnRule(d, job.Rand(seed, "pgen/conjunctive-rule")), test))
	}
	dt, nb, cr := score(all)
	t.Logf("union (BASIS): tree %.2f%%, naive Bayes %.2f%%, conjunctive rule %.2f%%", dt, nb, cr)
	for _, n := range []int{1, 3, 5, 10} {
		parts := make([][][]string, n)
		for i, r := range recs {
			parts[i%n] = append(parts[i%n], r)
		}
		for _, k := range []uint64{1, 10} {
			var trees []*tree.Tree
			for p := range n {
				tr := tree.Grow(fromRecords(t, parts[p], s), gp, fmt.Sprint(p), "t")
				if _, err := tr.ReleasePrune(k); err != nil {
					t.Fatal(err)
				}
				trees = append(trees, tr)
			}
			for _, m := range []struct {
				name string
				gen  func(*pgen.Schema) *tree.Data
			}{
				{"PGEN", func(s *pgen.Schema) *tree.Data { return pgen.Generate(trees, s, job.Rand(seed, "pgen/pseudo-data")) }},
				{"BASEGEN", func(s *pgen.Schema) *tree.Data { return pgen.BaseGen(trees, s, job.Rand(seed, "pgen/basegen")) }},
			} {
				start := time.Now()
				dt, nb, cr := score(m.gen(s))
				ddt, dnb, dcr := score(m.gen(sd))
				t.Logf("| %d | %d | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f |", n, k, m.name, dt, nb, cr, ddt, dnb, dcr, time.Since(start).Seconds())
			}
		}
	}
}
